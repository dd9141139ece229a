package rollout

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/dump"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
	"github.com/skiffcd/skiff/internal/testcluster"
)

// Rollouts that Argo Rollouts' real controller (v1.10.2) made Healthy are
// taken over by Skiff without a new revision: Skiff finds their ReplicaSets
// under the hash Argo Rollouts gave them, leaves Services and pods alone,
// and still starts exactly one new revision for a real template change.
func TestTakeoverFromArgoRolloutsChangesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	// No Skiff controller runs until Argo Rollouts has made the Rollouts Healthy.
	direct := cluster.StartManager(t, func(manager.Manager) error { return nil })
	createServices(t, direct, "takeover-services.yml", ns)
	bg := readRollout(t, "takeover-bluegreen.yml", ns)
	canary := readRollout(t, "takeover-canary.yml", ns)
	rollouts := []*v1alpha1.Rollout{bg, canary}
	for _, ro := range rollouts {
		create(t, direct, ro)
	}

	stopArgo := startArgoRollouts(t, ns)
	for _, ro := range rollouts {
		waitFor(t, direct, ro, ro.Name+" Healthy under Argo Rollouts", healthyUnderArgo)
	}
	stopArgo()
	before := map[string]takeoverState{}
	for _, ro := range rollouts {
		before[ro.Name] = readTakeoverState(t, direct, ro)
		got := before[ro.Name]
		if len(got.replicaSets) != 1 {
			t.Fatalf("%s under Argo Rollouts: ReplicaSets %v, want one", ro.Name, got.replicaSets)
		}
		// The hash Argo Rollouts put on its ReplicaSet is the one Skiff computes.
		if want := rollout.PodTemplateHash(&got.rollout.Spec.Template, got.rollout.Status.CollisionCount); got.rollout.Status.CurrentPodHash != want {
			t.Errorf("%s: Argo Rollouts hashed the template %s, Skiff hashes it %s", ro.Name, got.rollout.Status.CurrentPodHash, want)
		}
	}

	passes := &passCounter{n: map[types.NamespacedName]int{}}
	c := startControllerReading(t, func(c client.Client) client.Client { passes.Client = c; return passes })
	waitForPasses(t, c, passes, rollouts, 4)
	for _, ro := range rollouts {
		after := readTakeoverState(t, c, ro)
		for _, problem := range before[ro.Name].changes(after) {
			t.Errorf("%s after Skiff took over: %s", ro.Name, problem)
		}
		if after.rollout.Status.Phase != v1alpha1.RolloutPhaseHealthy {
			t.Errorf("%s after Skiff took over: %s, want Healthy", ro.Name, describe(after.rollout))
		}
	}

	// A real change of the template still makes exactly one new revision.
	for _, ro := range rollouts {
		old := before[ro.Name]
		hash := editSpec(t, c, ro, func(spec *v1alpha1.RolloutSpec) { spec.Template.Spec.Containers[0].Image += "-next" })
		waitUntil(t, ro.Name+"'s new revision", func() error {
			owned := ownedReplicaSets(t, c, old.rollout)
			if rs := owned[hash]; rs == nil || rs.Annotations[AnnotationRevision] != "2" {
				return fmt.Errorf("ReplicaSets %v", names(owned))
			}
			return nil
		})
		waitForPasses(t, c, passes, []*v1alpha1.Rollout{ro}, passes.count(ro)+3)
		got := ownedReplicaSets(t, c, old.rollout)
		if len(got) != 2 || got[old.rollout.Status.CurrentPodHash] == nil {
			t.Errorf("%s after a template change: ReplicaSets %v, want the old %s and the new %s", ro.Name, names(got), old.rollout.Status.CurrentPodHash, hash)
		}
	}
}

// startArgoRollouts runs Argo Rollouts' controller against the cluster,
// watching only ns, until the returned func or the end of the test stops it.
// Its metrics and health servers take ports the kernel picks.
func startArgoRollouts(t *testing.T, ns string) (stop func()) {
	t.Helper()
	bin, err := testcluster.EnsureArgoRolloutsController()
	if err != nil {
		t.Fatal(err)
	}
	name := "argo-rollouts-" + ns
	pid, exited, err := cluster.StartProcess(name, nil, bin,
		"--kubeconfig", cluster.Kubeconfig, "--namespaced", "--namespace", ns,
		"--leader-elect=false", "--metricsPort=0", "--healthzPort=0")
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = syscall.Kill(-pid, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				<-exited
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(cluster.Dir, name+".log"))
			t.Logf("Argo Rollouts' log:\n%s", tail(string(log), 40))
		}
	})
	return stop
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// healthyUnderArgo says Argo Rollouts finished the Rollout's first revision.
func healthyUnderArgo(ro *v1alpha1.Rollout) bool {
	s := ro.Status
	done := s.StableRS != "" && s.StableRS == s.CurrentPodHash
	if ro.Spec.Strategy.BlueGreen != nil {
		done = done && s.BlueGreen.ActiveSelector == s.CurrentPodHash
	}
	return done && s.Phase == v1alpha1.RolloutPhaseHealthy && s.AvailableReplicas == ptr.Deref(ro.Spec.Replicas, 1)
}

// passCounter counts the reconciler's reads of each Rollout: one per pass.
type passCounter struct {
	client.Client
	mu sync.Mutex
	n  map[types.NamespacedName]int
}

func (p *passCounter) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*v1alpha1.Rollout); ok {
		p.mu.Lock()
		p.n[key]++
		p.mu.Unlock()
	}
	return p.Client.Get(ctx, key, obj, opts...)
}

func (p *passCounter) count(ro *v1alpha1.Rollout) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[client.ObjectKeyFromObject(ro)]
}

// waitForPasses waits until the controller ran at least n passes of each
// Rollout, touching an annotation of the Rollouts that wait, as any edit
// would, to cause passes.
func waitForPasses(t *testing.T, c client.Client, passes *passCounter, rollouts []*v1alpha1.Rollout, n int) {
	t.Helper()
	poke := 0
	waitUntil(t, fmt.Sprintf("%d passes", n), func() error {
		var waiting []string
		for _, ro := range rollouts {
			if got := passes.count(ro); got < n {
				waiting = append(waiting, fmt.Sprintf("%s: %d", ro.Name, got))
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		poke++
		if poke%5 == 0 {
			for _, ro := range rollouts {
				annotate(t, c, ro, "test.skiff.io/poke", fmt.Sprint(poke))
			}
		}
		return fmt.Errorf("passes %s", strings.Join(waiting, ", "))
	})
}

func annotate(t *testing.T, c client.Client, ro *v1alpha1.Rollout, key, value string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &v1alpha1.Rollout{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(ro), got); err != nil {
			return err
		}
		metav1.SetMetaDataAnnotation(&got.ObjectMeta, key, value)
		return c.Update(context.Background(), got)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// takeoverState is what a takeover must not change.
type takeoverState struct {
	rollout     *v1alpha1.Rollout
	replicaSets map[string]string            // name → "uid revision replicas"
	pods        map[types.UID]string         // uid → name
	services    map[string]map[string]string // name → selector
}

func readTakeoverState(t *testing.T, c client.Client, ro *v1alpha1.Rollout) takeoverState {
	t.Helper()
	ctx := context.Background()
	s := takeoverState{rollout: &v1alpha1.Rollout{}, replicaSets: map[string]string{}, pods: map[types.UID]string{}, services: map[string]map[string]string{}}
	if err := c.Get(ctx, client.ObjectKeyFromObject(ro), s.rollout); err != nil {
		t.Fatal(err)
	}
	for _, rs := range ownedReplicaSets(t, c, s.rollout) {
		s.replicaSets[rs.Name] = fmt.Sprintf("uid=%s revision=%s replicas=%d", rs.UID, rs.Annotations[AnnotationRevision], ptr.Deref(rs.Spec.Replicas, 0))
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ro.Namespace), client.MatchingLabels(ro.Spec.Selector.MatchLabels)); err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp.IsZero() {
			s.pods[pod.UID] = pod.Name
		}
	}
	for _, name := range serviceNames(s.rollout) {
		if name == "" {
			continue
		}
		svc := &corev1.Service{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ro.Namespace, Name: name}, svc); err != nil {
			t.Fatal(err)
		}
		s.services[name] = svc.Spec.Selector
	}
	return s
}

// changes lists how after differs from s.
func (s takeoverState) changes(after takeoverState) []string {
	var out []string
	if fmt.Sprint(s.replicaSets) != fmt.Sprint(after.replicaSets) {
		out = append(out, fmt.Sprintf("ReplicaSets %v, want %v", after.replicaSets, s.replicaSets))
	}
	if fmt.Sprint(s.services) != fmt.Sprint(after.services) {
		out = append(out, fmt.Sprintf("Service selectors %v, want %v", after.services, s.services))
	}
	if fmt.Sprint(s.pods) != fmt.Sprint(after.pods) {
		out = append(out, fmt.Sprintf("pods %v, want %v (not recreated)", after.pods, s.pods))
	}
	b, a := s.rollout.Status, after.rollout.Status
	if a.CurrentPodHash != b.CurrentPodHash || a.StableRS != b.StableRS || a.CurrentStepHash != b.CurrentStepHash ||
		a.BlueGreen.ActiveSelector != b.BlueGreen.ActiveSelector || ptr.Deref(a.CurrentStepIndex, -1) != ptr.Deref(b.CurrentStepIndex, -1) {
		out = append(out, fmt.Sprintf("status %s, was %s", describe(after.rollout), describe(s.rollout)))
	}
	return out
}

// ownedReplicaSets returns the ReplicaSets ro controls, by pod template hash.
func ownedReplicaSets(t *testing.T, c client.Client, ro *v1alpha1.Rollout) map[string]*appsv1.ReplicaSet {
	t.Helper()
	out := map[string]*appsv1.ReplicaSet{}
	for hash, rs := range replicaSets(t, c, ro) {
		if metav1.IsControlledBy(rs, ro) {
			out[hash] = rs
		}
	}
	return out
}

// names lists ReplicaSets as "name (revision n)".
func names(rss map[string]*appsv1.ReplicaSet) []string {
	var out []string
	for _, rs := range rss {
		out = append(out, fmt.Sprintf("%s (revision %s)", rs.Name, rs.Annotations[AnnotationRevision]))
	}
	slices.Sort(out)
	return out
}

// A ReplicaSet that runs the Rollout's template under another hash, as an
// Argo Rollouts with another k8s.io/api or an older Skiff named it, is the
// Rollout's current revision: Skiff keeps it instead of starting a new one.
func TestReplicaSetOfAnEqualTemplateIsKept(t *testing.T) {
	tests := map[string]struct {
		hash func(*corev1.PodTemplateSpec) string
	}{
		"named by Skiff before it hashed as Argo Rollouts": {hash: skiffHashBeforeArgo},
		"named by another hash function":                   {hash: func(*corev1.PodTemplateSpec) string { return "5c6b7d8f9" }},
	}
	c := startController(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			createServices(t, c, "takeover-services.yml", ns)
			ro := readRollout(t, "takeover-bluegreen.yml", ns)
			ro.Spec.Paused = true
			create(t, c, ro)
			ro = waitFor(t, c, ro, "the paused Rollout seen", func(ro *v1alpha1.Rollout) bool { return ro.Status.ObservedGeneration == "1" })
			hash := tc.hash(&ro.Spec.Template)
			rs := replicaSetOf(ro, hash)
			create(t, c, rs)

			editSpec(t, c, ro, func(spec *v1alpha1.RolloutSpec) { spec.Paused = false })
			got := waitFor(t, c, ro, "Healthy", phaseIs(v1alpha1.RolloutPhaseHealthy))
			if got.Status.CurrentPodHash != hash {
				t.Errorf("Healthy on %s, want the existing ReplicaSet's %s", got.Status.CurrentPodHash, hash)
			}
			if rss := ownedReplicaSets(t, c, got); len(rss) != 1 || rss[hash] == nil || rss[hash].UID != rs.UID {
				t.Errorf("ReplicaSets %v, want only %s", names(rss), rs.Name)
			}
			if active := serviceHash(t, c, ns, "takeover-bg-active"); active != hash {
				t.Errorf("active Service selects %q, want %q", active, hash)
			}
		})
	}
}

// replicaSetOf is the ReplicaSet of revision 1 of ro under hash, as Skiff
// or Argo Rollouts create it.
func replicaSetOf(ro *v1alpha1.Rollout, hash string) *appsv1.ReplicaSet {
	template := ro.Spec.Template.DeepCopy()
	template.Labels = withHash(template.Labels, hash)
	selector := ro.Spec.Selector.DeepCopy()
	selector.MatchLabels = withHash(selector.MatchLabels, hash)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: ro.Name + "-" + hash, Namespace: ro.Namespace,
			Labels:          withHash(ro.Spec.Template.Labels, hash),
			Annotations:     map[string]string{AnnotationRevision: "1"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ro, v1alpha1.GroupVersion.WithKind("Rollout"))},
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: ro.Spec.Replicas, Selector: selector, Template: *template},
	}
}

// skiffHashBeforeArgo is the pod-template hash Skiff computed up to commit
// 8e99202 (Kubernetes' Deployment hash): FNV-32a over the template's deep
// dump.
func skiffHashBeforeArgo(template *corev1.PodTemplateSpec) string {
	hasher := fnv.New32a()
	fmt.Fprintf(hasher, "%v", dump.ForHash(*template))
	return rand.SafeEncodeString(fmt.Sprint(hasher.Sum32()))
}
