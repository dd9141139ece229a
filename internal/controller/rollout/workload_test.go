package rollout

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// readWorkloadRef decodes the Deployment and the Rollout of
// testdata/rollout-ref-deployment.yml into ns.
func readWorkloadRef(t *testing.T, ns string) (*appsv1.Deployment, *v1alpha1.Rollout) {
	t.Helper()
	data, err := os.ReadFile("testdata/rollout-ref-deployment.yml")
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	dep, ro := &appsv1.Deployment{}, &v1alpha1.Rollout{}
	if err := dec.Decode(dep); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(ro); err != nil {
		t.Fatal(err)
	}
	dep.Namespace, ro.Namespace = ns, ns
	return dep, ro
}

// workloadHealthyAt waits until the Rollout is Healthy on the revision of
// the Deployment's template.
func workloadHealthyAt(t *testing.T, c client.Client, ns, name string) func(*v1alpha1.Rollout) bool {
	return func(ro *v1alpha1.Rollout) bool {
		dep := &appsv1.Deployment{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, dep); err != nil {
			return false
		}
		return phaseIs(v1alpha1.RolloutPhaseHealthy)(ro) &&
			ro.Status.CurrentPodHash == rollout.PodTemplateHash(&dep.Spec.Template, ro.Status.CollisionCount)
	}
}

func deploymentReplicas(t *testing.T, c client.Client, ns, name string) int32 {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, dep); err != nil {
		t.Fatal(err)
	}
	return ptr.Deref(dep.Spec.Replicas, 1)
}

// A Rollout with a workloadRef runs the Deployment's pod template, scales
// the Deployment down once it is Healthy (scaleDown: onsuccess), and starts
// a new revision when the Deployment's template changes. Without the
// Deployment it is an InvalidSpec.
func TestWorkloadRefTakesTheDeploymentTemplate(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	dep, ro := readWorkloadRef(t, ns)

	create(t, c, ro)
	missing := waitFor(t, c, ro, "InvalidSpec without the Deployment", phaseIs(v1alpha1.RolloutPhaseDegraded))
	if want := `Deployment "rollout-ref-deployment" not found`; !strings.Contains(missing.Status.Message, want) {
		t.Errorf("message = %q, want it to contain %q", missing.Status.Message, want)
	}

	create(t, c, dep)
	healthy := waitFor(t, c, ro, "Healthy on the Deployment's template", workloadHealthyAt(t, c, ns, dep.Name))
	first := healthy.Status.CurrentPodHash
	if counts := rsCounts(t, c, ro, first); counts != "2/2" {
		t.Errorf("Rollout ReplicaSet = %s, want 2/2", counts)
	}
	rs := replicaSets(t, c, ro)[first]
	if img := rs.Spec.Template.Spec.Containers[0].Image; img != "argoproj/rollouts-demo:blue" {
		t.Errorf("ReplicaSet image = %s, want the Deployment's", img)
	}
	waitUntil(t, "the Deployment scaled down (onsuccess)", func() error {
		if n := deploymentReplicas(t, c, ns, dep.Name); n != 0 {
			return fmt.Errorf("the Deployment asks for %d replicas", n)
		}
		return nil
	})
	if healthy.Status.WorkloadObservedGeneration == "" {
		t.Error("status.workloadObservedGeneration is empty")
	}

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &appsv1.Deployment{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(dep), got); err != nil {
			return err
		}
		got.Spec.Template.Spec.Containers[0].Image = "argoproj/rollouts-demo:yellow"
		return c.Update(context.Background(), got)
	})
	if err != nil {
		t.Fatal(err)
	}
	second := waitFor(t, c, ro, "the new revision from the Deployment Healthy", workloadHealthyAt(t, c, ns, dep.Name))
	if second.Status.CurrentPodHash == first {
		t.Fatal("the Deployment's new template started no new revision")
	}
	if img := replicaSets(t, c, ro)[second.Status.CurrentPodHash].Spec.Template.Spec.Containers[0].Image; img != "argoproj/rollouts-demo:yellow" {
		t.Errorf("new ReplicaSet image = %s, want argoproj/rollouts-demo:yellow", img)
	}
}
