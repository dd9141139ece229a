package rollout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	analysiscontroller "github.com/skiffcd/skiff/internal/controller/analysis"
	"github.com/skiffcd/skiff/internal/crds"
	"github.com/skiffcd/skiff/internal/eventrecorder"
	"github.com/skiffcd/skiff/internal/rollout"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	// The controller logs nothing the tests read; without a logger
	// controller-runtime prints a stack trace instead.
	os.Exit(testcluster.RunMainWithCRDs(m, func(c *testcluster.Cluster) {
		cluster = c
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, path := range []string{httpRouteCRD, experimentCRD} {
			if err := installCRD(ctx, c, path); err != nil {
				panic(err)
			}
		}
	}))
}

const (
	// httpRouteCRD is the Gateway API v1.6.3 HTTPRoute CRD the traffic
	// package vendors for its tests.
	httpRouteCRD = "../../rollout/traffic/testdata/gateway.networking.k8s.io_httproutes.yaml"
	// experimentCRD is the Experiment kind Argo Rollouts' controller needs
	// to start (takeover_test.go runs it).
	experimentCRD = "testdata/argo-rollouts-experiment-crd.yml"
)

// installCRD installs the CRD at path and waits until it is served.
func installCRD(ctx context.Context, c *testcluster.Cluster, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		return fmt.Errorf("parsing the CRD in %s: %w", path, err)
	}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	cl, err := client.New(c.Config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	if err := cl.Create(ctx, crd); err != nil {
		return fmt.Errorf("creating the CRD %s: %w", crd.Name, err)
	}
	return crds.WaitServed(ctx, c.Config, []*apiextensionsv1.CustomResourceDefinition{crd}, time.Minute)
}

// startController runs the Rollout controller until the test ends and
// returns a direct (uncached) client.
func startController(t *testing.T) client.Client {
	t.Helper()
	return startControllerReading(t, func(c client.Client) client.Client { return c })
}

// startControllerReading is startController with the controller's
// (cached) client wrapped by wrap, for tests that watch what it reads.
func startControllerReading(t *testing.T, wrap func(client.Client) client.Client) client.Client {
	t.Helper()
	return cluster.StartManager(t, func(mgr ctrl.Manager) error {
		// The Events skiff server writes: the tests count scale Events.
		events := eventrecorder.NewSink(mgr.GetClient(), mgr.GetScheme())
		if err := mgr.Add(events); err != nil {
			return err
		}
		r := &Reconciler{Client: wrap(mgr.GetClient()), APIReader: mgr.GetAPIReader(), Recorder: events.Recorder("rollouts-controller")}
		if err := r.SetupWithManager(mgr); err != nil {
			return err
		}
		runs := &analysiscontroller.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}
		return runs.SetupWithManager(mgr)
	})
}

// readRollout decodes testdata/<file> as a Rollout in ns.
func readRollout(t *testing.T, file, ns string) *v1alpha1.Rollout {
	t.Helper()
	ro := &v1alpha1.Rollout{}
	testcluster.ReadYAML(t, "testdata/"+file, ro, ns)
	return ro
}

// createServices creates every Service of testdata/<file> in ns.
func createServices(t *testing.T, c client.Client, file, ns string) {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		svc := &corev1.Service{}
		if err := dec.Decode(svc); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		svc.Namespace = ns
		if err := c.Create(context.Background(), svc); err != nil {
			t.Fatal(err)
		}
	}
}

func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

// waitFor reads the Rollout until done says so, for up to a minute (see
// waitUntil).
func waitFor(t *testing.T, c client.Client, ro *v1alpha1.Rollout, what string, done func(*v1alpha1.Rollout) bool) *v1alpha1.Rollout {
	t.Helper()
	var got *v1alpha1.Rollout
	waitUntil(t, what, func() error {
		got = &v1alpha1.Rollout{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(ro), got); err != nil {
			return err
		}
		if !done(got) {
			return fmt.Errorf("last status: %s", describe(got))
		}
		return nil
	})
	return got
}

// waitUntil is testwait.Eventually for up to a minute: a step of a rollout
// takes a few passes of the controller and pods to start on a busy machine.
func waitUntil[C testwait.Condition](t *testing.T, what string, cond C) {
	t.Helper()
	testwait.Eventually(t, what, cond, testwait.Timeout(time.Minute))
}

// scaledToZero holds once the ReplicaSet of hash asks for no pods.
func scaledToZero(t *testing.T, c client.Client, ro *v1alpha1.Rollout, hash string) func() error {
	return func() error {
		if counts := rsCounts(t, c, ro, hash); !strings.HasPrefix(counts, "0/") {
			return fmt.Errorf("ReplicaSet %s at %s", hash, counts)
		}
		return nil
	}
}

func describe(ro *v1alpha1.Rollout) string {
	s := ro.Status
	step := "nil"
	if s.CurrentStepIndex != nil {
		step = fmt.Sprint(*s.CurrentStepIndex)
	}
	return fmt.Sprintf("phase=%s message=%q pod=%s stable=%s active=%s preview=%s step=%s pauses=%v abort=%v replicas=%d updated=%d available=%d conditions=%v",
		s.Phase, s.Message, s.CurrentPodHash, s.StableRS, s.BlueGreen.ActiveSelector, s.BlueGreen.PreviewSelector, step, s.PauseConditions, s.Abort,
		s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, s.Conditions)
}

func phaseIs(phase v1alpha1.RolloutPhase) func(*v1alpha1.Rollout) bool {
	return func(ro *v1alpha1.Rollout) bool {
		return ro.Status.Phase == phase && ro.Status.ObservedGeneration == fmt.Sprint(ro.Generation)
	}
}

// healthyAt waits until the rollout is Healthy on the revision of its
// current template.
func healthyAt(ro *v1alpha1.Rollout) bool {
	return phaseIs(v1alpha1.RolloutPhaseHealthy)(ro) &&
		ro.Status.CurrentPodHash == rollout.PodTemplateHash(&ro.Spec.Template, ro.Status.CollisionCount)
}

// replicaSets returns the Rollout's ReplicaSets by pod template hash.
func replicaSets(t *testing.T, c client.Client, ro *v1alpha1.Rollout) map[string]*appsv1.ReplicaSet {
	t.Helper()
	var list appsv1.ReplicaSetList
	if err := c.List(context.Background(), &list, client.InNamespace(ro.Namespace)); err != nil {
		t.Fatal(err)
	}
	out := map[string]*appsv1.ReplicaSet{}
	for i := range list.Items {
		rs := &list.Items[i]
		out[rs.Labels[rollout.PodTemplateHashLabel]] = rs
	}
	return out
}

// rsCounts is "spec/available" of the ReplicaSet of hash, "-" when absent.
func rsCounts(t *testing.T, c client.Client, ro *v1alpha1.Rollout, hash string) string {
	t.Helper()
	rs := replicaSets(t, c, ro)[hash]
	if rs == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", ptr.Deref(rs.Spec.Replicas, 0), rs.Status.AvailableReplicas)
}

// service returns the Service's rollouts-pod-template-hash selector.
func serviceHash(t *testing.T, c client.Client, ns, name string) string {
	t.Helper()
	svc := &corev1.Service{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
		t.Fatal(err)
	}
	return svc.Spec.Selector[rollout.PodTemplateHashLabel]
}

// setImage changes the image of the first container, as
// `kubectl argo rollouts set image` does, and returns the new hash.
func setImage(t *testing.T, c client.Client, ro *v1alpha1.Rollout, image string) string {
	t.Helper()
	return editSpec(t, c, ro, func(spec *v1alpha1.RolloutSpec) { spec.Template.Spec.Containers[0].Image = image })
}

// editSpec changes the Rollout spec and returns the new pod template hash.
func editSpec(t *testing.T, c client.Client, ro *v1alpha1.Rollout, edit func(*v1alpha1.RolloutSpec)) string {
	t.Helper()
	var hash string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &v1alpha1.Rollout{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(ro), got); err != nil {
			return err
		}
		edit(&got.Spec)
		hash = rollout.PodTemplateHash(&got.Spec.Template, got.Status.CollisionCount)
		return c.Update(context.Background(), got)
	})
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

// patchStatus applies a merge patch to the status subresource, as the
// kubectl plugin does for abort, retry and promote.
func patchStatus(t *testing.T, c client.Client, ro *v1alpha1.Rollout, patch string) {
	t.Helper()
	obj := &v1alpha1.Rollout{}
	obj.Namespace, obj.Name = ro.Namespace, ro.Name
	if err := c.Status().Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("patching status with %s: %v", patch, err)
	}
}

// promote does what `kubectl argo rollouts promote` does: clear the pause
// conditions, or, for a canary that is not paused, skip the current step.
func promote(t *testing.T, c client.Client, ro *v1alpha1.Rollout) {
	t.Helper()
	got := &v1alpha1.Rollout{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(ro), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Strategy.Canary != nil && len(got.Status.PauseConditions) == 0 && got.Status.CurrentStepIndex != nil {
		patchStatus(t, c, ro, fmt.Sprintf(`{"status":{"pauseConditions":null,"currentStepIndex":%d}}`, *got.Status.CurrentStepIndex+1))
		return
	}
	patchStatus(t, c, ro, `{"status":{"pauseConditions":null}}`)
}

func condition(ro *v1alpha1.Rollout, t v1alpha1.RolloutConditionType) v1alpha1.RolloutCondition {
	if c := rollout.GetCondition(&ro.Status, t); c != nil {
		return *c
	}
	return v1alpha1.RolloutCondition{}
}
