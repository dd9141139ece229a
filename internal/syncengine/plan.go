// Package syncengine makes the cluster match an Application's desired
// objects, as Argo CD's sync does: it validates the whole change with a
// server-side dry run, applies objects with server-side apply in phases
// (PreSync, Sync, PostSync) and waves, runs hooks, waits for each wave to be
// healthy before the next, and prunes what git no longer has. Planning is a
// pure function; Engine executes a plan against the API server.
package syncengine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/hook"
)

// Annotations Argo CD users put on their objects; package hook has those
// of hooks.
const (
	AnnotationSyncWave    = "argocd.argoproj.io/sync-wave"
	AnnotationSyncOptions = "argocd.argoproj.io/sync-options"
)

// Phase is a sync phase; hooks of type SyncFail run only when a sync fails.
type Phase string

// Sync phases, in execution order, and the SyncFail hook type.
const (
	PhasePreSync  = Phase(hook.PreSync)
	PhaseSync     = Phase(hook.Sync)
	PhasePostSync = Phase(hook.PostSync)
	PhaseSyncFail = Phase(hook.SyncFail)
)

var phaseOrder = map[Phase]int{PhasePreSync: 0, PhaseSync: 1, PhasePostSync: 2, PhaseSyncFail: 3}

// Task is one thing a sync does to one object.
type Task struct {
	// Desired is the object to apply; nil for a prune.
	Desired *unstructured.Unstructured
	// Live is the object in the cluster, if any.
	Live *unstructured.Unstructured
	Key  clustercache.ResourceKey
	// Phase and Wave order the task.
	Phase Phase
	Wave  int
	// Hook is set for hook objects (created each sync, waited for completion).
	Hook bool
	// DeletePolicies of a hook: HookSucceeded, HookFailed, BeforeHookCreation.
	DeletePolicies []string
	// Prune deletes Live.
	Prune bool
	// PruneSkipped: Live should be pruned but says Prune=false, or pruning is off.
	PruneSkipped bool
	// Options are the object's sync options merged over the app's.
	Options Options
}

// Plan is the ordered list of tasks of one sync.
type Plan struct {
	Tasks []Task
}

// PlanInput is what a plan is made from.
type PlanInput struct {
	// Desired objects, rendered from git, with namespaces already defaulted.
	Desired []*unstructured.Unstructured
	// Live objects tracked to the application.
	Live []*unstructured.Unstructured
	// Options are the application's sync options.
	Options Options
	// Prune allows deleting live objects that are no longer desired.
	Prune bool
	// AllowEmpty permits a plan that prunes everything.
	AllowEmpty bool
	// Resources, when not empty, limits the sync to these objects (selective sync).
	Resources []clustercache.ResourceKey
}

// NewPlan orders what a sync must do. It refuses to prune everything when
// nothing is desired, unless AllowEmpty: an empty render is far more often a
// mistake than an intent.
func NewPlan(in PlanInput) (*Plan, error) {
	if len(in.Desired) == 0 && len(in.Live) > 0 && in.Prune && !in.AllowEmpty {
		return nil, fmt.Errorf("the desired state is empty; refusing to prune %d live objects (set syncPolicy.automated.allowEmpty to allow it)", len(in.Live))
	}
	selected := func(k clustercache.ResourceKey) bool {
		if len(in.Resources) == 0 {
			return true
		}
		for _, r := range in.Resources {
			if r.Group == k.Group && r.Kind == k.Kind && r.Name == k.Name && (r.Namespace == "" || r.Namespace == k.Namespace) {
				return true
			}
		}
		return false
	}
	live := map[clustercache.ResourceKey]*unstructured.Unstructured{}
	for _, obj := range in.Live {
		live[clustercache.KeyOf(obj)] = obj
	}
	plan := &Plan{}
	desiredKeys := map[clustercache.ResourceKey]bool{}
	for _, obj := range in.Desired {
		key := clustercache.KeyOf(obj)
		desiredKeys[key] = true
		if !selected(key) {
			continue
		}
		wave, err := waveOf(obj)
		if err != nil {
			return nil, err
		}
		opts, err := in.Options.Merge(obj.GetAnnotations()[AnnotationSyncOptions])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if !hook.IsHook(obj) {
			plan.Tasks = append(plan.Tasks, Task{Desired: obj, Live: live[key], Key: key, Phase: PhaseSync, Wave: wave, Options: opts})
			continue
		}
		for _, phase := range hook.Types(obj) {
			if !hook.RunsInSync(phase) {
				continue
			}
			plan.Tasks = append(plan.Tasks, Task{
				Desired: obj, Live: live[key], Key: key, Phase: Phase(phase), Wave: wave, Hook: true,
				DeletePolicies: hook.DeletePolicies(obj), Options: opts,
			})
		}
	}
	for key, obj := range live {
		if desiredKeys[key] || !selected(key) {
			continue
		}
		if hook.IsHook(obj) {
			continue // hooks are not part of the desired set; their policies clean them
		}
		wave, _ := waveOf(obj)
		opts, _ := in.Options.Merge(obj.GetAnnotations()[AnnotationSyncOptions])
		skip := !in.Prune || opts.PruneDisabled
		plan.Tasks = append(plan.Tasks, Task{Live: obj, Key: key, Phase: PhaseSync, Wave: wave, Prune: !skip, PruneSkipped: skip, Options: opts})
	}
	sort.SliceStable(plan.Tasks, func(i, j int) bool { return less(plan.Tasks[i], plan.Tasks[j]) })
	return plan, nil
}

// less orders tasks: phase, then prunes after applies (PruneLast ones at
// the very end of the phase), then wave, then kind (namespaces and CRDs
// before what needs them), then name.
func less(a, b Task) bool {
	if phaseOrder[a.Phase] != phaseOrder[b.Phase] {
		return phaseOrder[a.Phase] < phaseOrder[b.Phase]
	}
	if pa, pb := pruneRank(a), pruneRank(b); pa != pb {
		return pa < pb
	}
	if a.Wave != b.Wave {
		if a.Prune && b.Prune {
			return a.Wave > b.Wave // delete in reverse wave order
		}
		return a.Wave < b.Wave
	}
	if ka, kb := kindRank(a.Key.Kind), kindRank(b.Key.Kind); ka != kb {
		if a.Prune && b.Prune {
			return ka > kb
		}
		return ka < kb
	}
	return a.Key.String() < b.Key.String()
}

func pruneRank(t Task) int {
	switch {
	case !t.Prune && !t.PruneSkipped:
		return 0
	case t.Options.PruneLast:
		return 2
	default:
		return 1
	}
}

// kindOrder applies what other objects depend on first, as Helm and Argo
// CD do.
var kindOrder = []string{
	"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodDisruptionBudget",
	"ServiceAccount", "Secret", "ConfigMap", "StorageClass", "PersistentVolume",
	"PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding",
	"Role", "RoleBinding", "Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet",
	"Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass",
	"Ingress", "APIService",
}

func kindRank(kind string) int {
	for i, k := range kindOrder {
		if k == kind {
			return i
		}
	}
	return len(kindOrder)
}

func waveOf(obj *unstructured.Unstructured) (int, error) {
	ann := obj.GetAnnotations()
	value, ok := ann[AnnotationSyncWave]
	if !ok {
		value, ok = ann[hook.AnnotationHelmWeight]
	}
	if !ok {
		return 0, nil
	}
	wave, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil {
		return 0, fmt.Errorf("%s: sync wave %q is not an integer", clustercache.KeyOf(obj), value)
	}
	return wave, nil
}
