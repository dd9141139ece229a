package rolloutops

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Info is a Rollout with the objects `get` shows under it.
type Info struct {
	Rollout *v1alpha1.Rollout
	// ReplicaSets the Rollout controls, newest revision first.
	ReplicaSets []appsv1.ReplicaSet
	// Pods by the UID of the ReplicaSet that controls them.
	Pods map[types.UID][]corev1.Pod
	// AnalysisRuns the Rollout controls, oldest first.
	AnalysisRuns []v1alpha1.AnalysisRun
}

// Get reads the Rollout key; an ErrNotFound when it is not there.
func Get(ctx context.Context, c client.Reader, key client.ObjectKey) (*v1alpha1.Rollout, error) {
	ro := &v1alpha1.Rollout{}
	if err := c.Get(ctx, key, ro); err != nil {
		return nil, classify(fmt.Errorf("reading rollout %s: %w", key.Name, err))
	}
	return ro, nil
}

// Load reads the Rollout key and the ReplicaSets, pods and AnalysisRuns it
// controls.
func Load(ctx context.Context, c client.Reader, key client.ObjectKey) (*Info, error) {
	ro, err := Get(ctx, c, key)
	if err != nil {
		return nil, err
	}
	rss, err := ReplicaSetsOf(ctx, c, ro)
	if err != nil {
		return nil, err
	}
	info := &Info{Rollout: ro, ReplicaSets: rss, Pods: map[types.UID][]corev1.Pod{}}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ro.Namespace)); err != nil {
		return nil, fmt.Errorf("listing pods in %s: %w", ro.Namespace, err)
	}
	owned := map[types.UID]bool{}
	for _, rs := range rss {
		owned[rs.UID] = true
	}
	for _, pod := range pods.Items {
		if ref := metav1.GetControllerOf(&pod); ref != nil && owned[ref.UID] {
			info.Pods[ref.UID] = append(info.Pods[ref.UID], pod)
		}
	}
	for uid := range info.Pods {
		sort.Slice(info.Pods[uid], func(i, j int) bool { return info.Pods[uid][i].Name < info.Pods[uid][j].Name })
	}
	var runs v1alpha1.AnalysisRunList
	if err := c.List(ctx, &runs, client.InNamespace(ro.Namespace)); err != nil {
		return nil, fmt.Errorf("listing analysis runs in %s: %w", ro.Namespace, err)
	}
	for _, run := range runs.Items {
		if metav1.IsControlledBy(&run, ro) {
			info.AnalysisRuns = append(info.AnalysisRuns, run)
		}
	}
	sort.SliceStable(info.AnalysisRuns, func(i, j int) bool {
		return info.AnalysisRuns[i].CreationTimestamp.Before(&info.AnalysisRuns[j].CreationTimestamp)
	})
	return info, nil
}

// ReplicaSetsOf lists the ReplicaSets ro controls, newest revision first.
func ReplicaSetsOf(ctx context.Context, c client.Reader, ro *v1alpha1.Rollout) ([]appsv1.ReplicaSet, error) {
	var list appsv1.ReplicaSetList
	if err := c.List(ctx, &list, client.InNamespace(ro.Namespace)); err != nil {
		return nil, fmt.Errorf("listing replica sets of rollout %s: %w", ro.Name, err)
	}
	var rss []appsv1.ReplicaSet
	for _, rs := range list.Items {
		if metav1.IsControlledBy(&rs, ro) {
			rss = append(rss, rs)
		}
	}
	sort.SliceStable(rss, func(i, j int) bool { return v1alpha1.RolloutRevision(&rss[i]) > v1alpha1.RolloutRevision(&rss[j]) })
	return rss, nil
}
