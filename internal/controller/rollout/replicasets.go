package rollout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// errCacheBehind stops a pass whose cached ReplicaSets predate a write of
// an earlier pass.
var errCacheBehind = errors.New("the cache has not caught up with an earlier write")

// loadReplicaSets reads the ReplicaSets this Rollout controls.
func (p *pass) loadReplicaSets(ctx context.Context) error {
	var list appsv1.ReplicaSetList
	if err := p.r.replicaSets.List(ctx, &list, ownedBy(p.ro)...); err != nil {
		return fmt.Errorf("listing ReplicaSets of Rollout %s/%s: %w", p.ro.Namespace, p.ro.Name, err)
	}
	p.allRS = nil
	for i := range list.Items {
		rs := &list.Items[i]
		if owner := metav1.GetControllerOf(rs); owner != nil && owner.UID == p.ro.UID && rs.DeletionTimestamp.IsZero() {
			if p.r.replicaSetWrites.CacheOlder(rs.UID, rs.ResourceVersion) {
				// Counts read before an earlier pass's scale would undo
				// or repeat it; that write's watch event brings the next
				// pass.
				return fmt.Errorf("ReplicaSet %s/%s: %w", rs.Namespace, rs.Name, errCacheBehind)
			}
			p.allRS = append(p.allRS, rs)
		}
	}
	sort.Slice(p.allRS, func(i, j int) bool { return revisionOf(p.allRS[i]) < revisionOf(p.allRS[j]) })
	return nil
}

// rsByHash returns the ReplicaSet of a pod template hash, or nil.
func (p *pass) rsByHash(hash string) *appsv1.ReplicaSet {
	if hash == "" {
		return nil
	}
	for _, rs := range p.allRS {
		if rs.Labels[rollout.PodTemplateHashLabel] == hash {
			return rs
		}
	}
	return nil
}

// templateMatch is what adoptEqualTemplate found for a Rollout: for the
// hash computed from its template, the hash of the ReplicaSet with an equal
// template ("" for none).
type templateMatch struct {
	uid   types.UID
	hash  string
	match string
}

// adoptEqualTemplate makes p.hash that of an existing ReplicaSet whose pod
// template equals the Rollout's when no ReplicaSet carries the computed
// hash, as Argo Rollouts does: one Argo Rollouts made before Skiff took over
// (read through a CRD that defaulted other fields, or hashed with another
// k8s.io/api), or one an older Skiff made with its former hash. Without it a
// takeover or an upgrade would start a new revision of the same pods.
//
// The comparison needs the template as the API server stores it in a
// ReplicaSet, defaults included, which a dry-run create returns. Its outcome
// is remembered per Rollout and computed hash, so the dry run happens once
// per template, not on every pass.
func (p *pass) adoptEqualTemplate(ctx context.Context) error {
	if len(p.allRS) == 0 || p.rsByHash(p.hash) != nil {
		return nil
	}
	match, err := p.equalTemplate(ctx)
	if err != nil {
		return err
	}
	if match != "" {
		p.hash = match
	}
	return nil
}

// equalTemplate returns the hash of the oldest ReplicaSet whose template
// equals the Rollout's, "" when there is none.
func (p *pass) equalTemplate(ctx context.Context) (string, error) {
	key := client.ObjectKeyFromObject(p.ro)
	if m, ok := p.r.templateMatches.Load(key); ok && m.uid == p.ro.UID && m.hash == p.hash && (m.match == "" || p.rsByHash(m.match) != nil) {
		return m.match, nil
	}
	desired, err := p.storedTemplate(ctx)
	if err != nil {
		return "", err
	}
	candidates := slices.Clone(p.allRS)
	sort.SliceStable(candidates, func(i, j int) bool {
		return candidates[i].CreationTimestamp.Before(&candidates[j].CreationTimestamp)
	})
	m := templateMatch{uid: p.ro.UID, hash: p.hash}
	for _, rs := range candidates {
		injected := rollout.RoleMetadataKeys(p.roleMetadata(), rs.Annotations)
		if hash := rs.Labels[rollout.PodTemplateHashLabel]; hash != "" && rollout.SameTemplate(&rs.Spec.Template, desired, injected) {
			m.match = hash
			break
		}
	}
	p.r.templateMatches.Store(key, m)
	return m.match, nil
}

// storedTemplate is the pod template of the Rollout's new ReplicaSet as the
// API server would store it, from a dry-run create.
func (p *pass) storedTemplate(ctx context.Context) (*corev1.PodTemplateSpec, error) {
	rs := p.newReplicaSet()
	rs.Name, rs.GenerateName = "", p.ro.Name+"-"
	if err := p.r.Client.Create(ctx, rs, client.DryRunAll); err != nil {
		return nil, fmt.Errorf("defaulting the pod template of Rollout %s/%s with a dry-run create of its ReplicaSet: %w", p.ro.Namespace, p.ro.Name, err)
	}
	return &rs.Spec.Template, nil
}

func revisionOf(rs *appsv1.ReplicaSet) int64 {
	return v1alpha1.RolloutRevision(rs)
}

func specReplicas(rs *appsv1.ReplicaSet) int32 {
	if rs == nil || rs.Spec.Replicas == nil {
		return 0
	}
	return *rs.Spec.Replicas
}

// available counts the available pods of rs; a status older than the last
// scale counts none, which errs on the safe side (no early promotion, no
// early scale down of the other side).
func available(rs *appsv1.ReplicaSet) int32 {
	if rs == nil || rs.Status.ObservedGeneration < rs.Generation {
		return 0
	}
	return rs.Status.AvailableReplicas
}

// saturated says rs runs n pods, all of them available. A status the
// ReplicaSet controller has not updated since the last scale says nothing:
// right after a scale down and up again it still counts the old pods.
func saturated(rs *appsv1.ReplicaSet, n int32) bool {
	return rollout.Saturated(counts(rs), n)
}

// startRevisionIfNew resets the per-update status when the pod template or
// the steps changed: pauses, abort and promote-full belong to one update. A
// template that returns to the stable one (an undo) skips all steps.
func (p *pass) startRevisionIfNew() {
	st := p.status
	stepHash := rollout.StepHash(p.ro.Spec.Strategy)
	if st.CurrentPodHash == p.hash && st.CurrentStepHash == stepHash {
		return
	}
	first := st.CurrentPodHash == ""
	if !first && st.CurrentPodHash != p.hash {
		p.event("RolloutUpdated", "Rollout updated to pod template %s", p.hash)
	}
	st.CurrentPodHash = p.hash
	st.CurrentStepHash = stepHash
	st.PauseConditions = nil
	st.ControllerPause = false
	st.Abort = false
	st.AbortedAt = nil
	st.PromoteFull = false
	st.CurrentStepIndex = nil
	canary := p.ro.Spec.Strategy.Canary
	if canary == nil || len(canary.Steps) == 0 {
		return
	}
	index := int32(0)
	if st.StableRS == "" || st.StableRS == p.hash || p.rollbackWithinWindow() {
		index = int32(len(canary.Steps))
		switch {
		case !first && st.StableRS == p.hash:
			p.event("SkipSteps", "Rollback to stable ReplicaSets")
		case p.rollbackWithinWindow():
			p.event("SkipSteps", "Rollback within the rollbackWindow: skipping steps")
		}
	}
	st.CurrentStepIndex = &index
}

// ensureNewReplicaSet finds or creates the ReplicaSet of the current pod
// template. A ReplicaSet brought back by an undo gets the next revision.
func (p *pass) ensureNewReplicaSet(ctx context.Context) error {
	var maxRevision int64
	for _, rs := range p.allRS {
		if rs.Labels[rollout.PodTemplateHashLabel] != p.hash {
			maxRevision = max(maxRevision, revisionOf(rs))
		}
	}
	p.revision = maxRevision + 1
	if rs := p.rsByHash(p.hash); rs != nil {
		p.newRS = rs
		if revisionOf(rs) < p.revision {
			return p.setAnnotation(ctx, rs, AnnotationRevision, strconv.FormatInt(p.revision, 10))
		}
		p.revision = revisionOf(rs)
		return nil
	}
	if p.ro.Spec.Paused {
		return nil
	}
	rs := p.newReplicaSet()
	err := p.r.Client.Create(ctx, rs)
	if apierrors.IsAlreadyExists(err) {
		return p.adoptOrCollide(ctx, rs)
	}
	if err != nil {
		return fmt.Errorf("creating ReplicaSet %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	p.newRS, p.created = rs, true
	p.allRS = append(p.allRS, rs)
	p.event(eventReasonNewReplicaSetCreated, "Created ReplicaSet %s (revision %d)", rs.Name, p.revision)
	return nil
}

// adoptOrCollide handles a ReplicaSet name already taken: by our own
// ReplicaSet the cache has not shown yet (retry), or by another object, in
// which case the collision count changes the hash, as in Kubernetes.
func (p *pass) adoptOrCollide(ctx context.Context, want *appsv1.ReplicaSet) error {
	existing := &appsv1.ReplicaSet{}
	if err := p.r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), existing); err != nil {
		return fmt.Errorf("reading ReplicaSet %s/%s: %w", want.Namespace, want.Name, err)
	}
	if owner := metav1.GetControllerOf(existing); owner != nil && owner.UID == p.ro.UID {
		return fmt.Errorf("ReplicaSet %s/%s exists but is not in the cache yet", want.Namespace, want.Name)
	}
	p.status.CollisionCount = ptr.To(ptr.Deref(p.status.CollisionCount, 0) + 1)
	p.requeueAfter(0)
	return nil
}

// newReplicaSet builds the ReplicaSet of the current pod template, at 0
// replicas: the strategy sizes it.
func (p *pass) newReplicaSet() *appsv1.ReplicaSet {
	template := p.ro.Spec.Template.DeepCopy()
	template.Labels = withHash(template.Labels, p.hash)
	template.Spec.Affinity = rollout.ReplicaSetAffinity(template.Spec.Affinity, p.antiAffinity(), p.status.StableRS, p.hash)
	selector := p.ro.Spec.Selector.DeepCopy()
	selector.MatchLabels = withHash(selector.MatchLabels, p.hash)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:            p.ro.Name + "-" + p.hash,
			Namespace:       p.ro.Namespace,
			Labels:          withHash(p.ro.Spec.Template.Labels, p.hash),
			Annotations:     map[string]string{AnnotationRevision: strconv.FormatInt(p.revision, 10)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(p.ro, v1alpha1.GroupVersion.WithKind("Rollout"))},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        ptr.To[int32](0),
			MinReadySeconds: p.ro.Spec.MinReadySeconds,
			Selector:        selector,
			Template:        *template,
		},
	}
}

func withHash(labels map[string]string, hash string) map[string]string {
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	out[rollout.PodTemplateHashLabel] = hash
	return out
}

// scale sets the replicas of rs (and its minReadySeconds, which follows
// the Rollout's). The patch carries rs's resourceVersion: a pass that read
// a cached copy older than its previous scale gets a conflict (the watch
// event of that scale brings the next pass) instead of scaling "from 8 to
// 10" a second time.
func (p *pass) scale(ctx context.Context, rs *appsv1.ReplicaSet, replicas int32) error {
	if rs == nil {
		return nil
	}
	old := specReplicas(rs)
	if old == replicas && rs.Spec.MinReadySeconds == p.ro.Spec.MinReadySeconds {
		return nil
	}
	patch := client.MergeFromWithOptions(rs.DeepCopy(), client.MergeFromWithOptimisticLock{})
	rs.Spec.Replicas = ptr.To(replicas)
	rs.Spec.MinReadySeconds = p.ro.Spec.MinReadySeconds
	if err := p.patchReplicaSet(ctx, rs, patch); err != nil {
		return fmt.Errorf("scaling ReplicaSet %s/%s to %d: %w", rs.Namespace, rs.Name, replicas, err)
	}
	switch {
	case replicas > old:
		p.event(eventReasonScalingReplicaSet, "Scaled up ReplicaSet %s (revision %d) from %d to %d", rs.Name, revisionOf(rs), old, replicas)
	case replicas < old:
		p.event(eventReasonScalingReplicaSet, "Scaled down ReplicaSet %s (revision %d) from %d to %d", rs.Name, revisionOf(rs), old, replicas)
	}
	return nil
}

// patchReplicaSet patches rs and records the version written, so that no
// later pass decides on a cached copy older than this write
// (loadReplicaSets).
func (p *pass) patchReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, patch client.Patch) error {
	if err := p.r.Client.Patch(ctx, rs, patch); err != nil {
		return err
	}
	p.r.replicaSetWrites.Wrote(rs.UID, rs.ResourceVersion)
	return nil
}

// setAnnotation sets (value != "") or removes (value == "") an annotation of rs.
func (p *pass) setAnnotation(ctx context.Context, rs *appsv1.ReplicaSet, key, value string) error {
	if rs == nil {
		return nil
	}
	current, has := rs.Annotations[key]
	if (value == "" && !has) || (value != "" && current == value) {
		return nil
	}
	patch := client.MergeFrom(rs.DeepCopy())
	if value == "" {
		delete(rs.Annotations, key)
	} else {
		if rs.Annotations == nil {
			rs.Annotations = map[string]string{}
		}
		rs.Annotations[key] = value
	}
	if err := p.patchReplicaSet(ctx, rs, patch); err != nil {
		return fmt.Errorf("annotating ReplicaSet %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	return nil
}

// scaleDownAfter scales rs to 0 delay after the first pass that asks
// (rollout.ScaleDownAfter).
func (p *pass) scaleDownAfter(ctx context.Context, rs *appsv1.ReplicaSet, delay time.Duration) error {
	if rs == nil {
		return nil
	}
	down := rollout.ScaleDownAfter(specReplicas(rs), rs.Annotations[AnnotationScaleDownDeadline], delay, p.now)
	if !down.Deadline.IsZero() {
		if err := p.setAnnotation(ctx, rs, AnnotationScaleDownDeadline, down.Deadline.UTC().Format(time.RFC3339)); err != nil {
			return err
		}
	}
	if down.Wait > 0 {
		p.requeueAfter(down.Wait)
	}
	if down.ScaleDown {
		if err := p.scale(ctx, rs, 0); err != nil {
			return err
		}
	}
	if down.ClearDeadline {
		return p.setAnnotation(ctx, rs, AnnotationScaleDownDeadline, "")
	}
	return nil
}

// cleanupHistory deletes the oldest ReplicaSets at 0 replicas beyond
// revisionHistoryLimit.
func (p *pass) cleanupHistory(ctx context.Context) error {
	limit := int(ptr.Deref(p.ro.Spec.RevisionHistoryLimit, defaultRevisionHistoryLimit))
	var old []*appsv1.ReplicaSet
	for _, rs := range p.allRS {
		hash := rs.Labels[rollout.PodTemplateHashLabel]
		if rs == p.newRS || hash == p.status.StableRS || hash == p.status.BlueGreen.ActiveSelector {
			continue
		}
		if specReplicas(rs) == 0 && rs.Status.Replicas == 0 {
			old = append(old, rs)
		}
	}
	kept := p.allRS[:0]
	for i, rs := range old {
		if i >= len(old)-limit {
			break
		}
		if err := p.r.Client.Delete(ctx, rs); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting old ReplicaSet %s/%s: %w", rs.Namespace, rs.Name, err)
		}
		rs.DeletionTimestamp = ptr.To(p.metaNow())
	}
	for _, rs := range p.allRS {
		if rs.DeletionTimestamp.IsZero() {
			kept = append(kept, rs)
		}
	}
	p.allRS = kept
	return nil
}

// restartPods honours spec.restartAt: pods created before it are deleted,
// oldest first, no more at a time than maxUnavailable allows, and
// status.restartedAt is set once none is left.
func (p *pass) restartPods(ctx context.Context) error {
	at := p.ro.Spec.RestartAt
	if at == nil || (p.status.RestartedAt != nil && !p.status.RestartedAt.Before(at)) {
		return nil
	}
	if wait := at.Sub(p.now); wait > 0 {
		p.requeueAfter(wait)
		return nil
	}
	owned := map[string]*appsv1.ReplicaSet{}
	for _, rs := range p.allRS {
		owned[rs.Name] = rs
	}
	var pods corev1.PodList
	if err := p.r.APIReader.List(ctx, &pods, client.InNamespace(p.ro.Namespace)); err != nil {
		return fmt.Errorf("listing pods of Rollout %s/%s: %w", p.ro.Namespace, p.ro.Name, err)
	}
	var stale []*corev1.Pod
	for i := range pods.Items {
		pod := &pods.Items[i]
		owner := metav1.GetControllerOf(pod)
		if owner == nil || owned[owner.Name] == nil || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		if pod.CreationTimestamp.Before(at) {
			stale = append(stale, pod)
		}
	}
	if len(stale) == 0 {
		restarted := *at
		p.status.RestartedAt = &restarted
		p.event("RolloutRestarted", "Rollout restarted all pods created before %s", at.UTC().Format(time.RFC3339))
		return nil
	}
	sort.Slice(stale, func(i, j int) bool { return stale[i].CreationTimestamp.Before(&stale[j].CreationTimestamp) })
	var unavailable int32
	for _, rs := range p.allRS {
		unavailable += max(0, specReplicas(rs)-rs.Status.AvailableReplicas)
	}
	budget := p.maxUnavailable() - unavailable
	for i := 0; i < len(stale) && int32(i) < budget; i++ {
		if err := p.r.Client.Delete(ctx, stale[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("restarting pod %s/%s: %w", stale[i].Namespace, stale[i].Name, err)
		}
		p.event("RestartingPod", "Restarting pod %s", stale[i].Name)
	}
	p.requeueAfter(restartRequeueInterval)
	return nil
}

// maxUnavailable is how many pods may be down at once while restarting:
// the strategy's maxUnavailable (blue-green 0, canary 25%), at least one.
func (p *pass) maxUnavailable() int32 {
	var n int32
	if bg := p.ro.Spec.Strategy.BlueGreen; bg != nil {
		if bg.MaxUnavailable != nil {
			n = rollout.MaxUnavailableCount(bg.MaxUnavailable, p.replicas)
		}
	} else {
		n = rollout.MaxUnavailableCount(p.ro.Spec.Strategy.Canary.MaxUnavailable, p.replicas)
	}
	return max(n, 1)
}

// rollbackWithinWindow says the current template is that of a ReplicaSet
// older than the stable one and within spec.rollbackWindow: the rollback
// skips steps, pauses and analysis. Creation times do not change, so every
// pass of the rollback decides the same.
func (p *pass) rollbackWithinWindow() bool {
	window := p.ro.Spec.RollbackWindow
	target, stable := p.rsByHash(p.hash), p.rsByHash(p.status.StableRS)
	if window == nil || target == nil || stable == nil || target == stable {
		return false
	}
	others := make([]time.Time, 0, len(p.allRS))
	for _, rs := range p.allRS {
		others = append(others, rs.CreationTimestamp.Time)
	}
	return rollout.WithinRollbackWindow(target.CreationTimestamp.Time, stable.CreationTimestamp.Time, others, window.Revisions)
}

// antiAffinity is the strategy's antiAffinity, if any.
func (p *pass) antiAffinity() *v1alpha1.AntiAffinity {
	if bg := p.ro.Spec.Strategy.BlueGreen; bg != nil {
		return bg.AntiAffinity
	}
	return p.ro.Spec.Strategy.Canary.AntiAffinity
}
