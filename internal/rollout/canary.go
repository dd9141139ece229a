package rollout

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// defaultCanaryFencepost is Argo Rollouts' default for both maxSurge and
// maxUnavailable of a canary.
var defaultCanaryFencepost = intstr.FromString("25%")

// Argo Rollouts' defaults of scaleDownDelaySeconds and
// abortScaleDownDelaySeconds.
const (
	DefaultScaleDownDelaySeconds      = 30
	DefaultAbortScaleDownDelaySeconds = 30
)

// CanaryScaleDownDelay is how long a traffic-routed canary's previous
// stable ReplicaSet stays up after a promotion: scaleDownDelaySeconds, 30 s
// by default.
func CanaryScaleDownDelay(c *v1alpha1.CanaryStrategy) time.Duration {
	if c.ScaleDownDelaySeconds == nil {
		return DefaultScaleDownDelaySeconds * time.Second
	}
	return time.Duration(*c.ScaleDownDelaySeconds) * time.Second
}

// CanaryAbortScaleDownDelay says whether an aborted canary's ReplicaSet
// stays up for a delay once the stable side can take all the traffic, and
// for how long (Argo Rollouts' shouldDelayScaleDownOnAbort). Only with a
// traffic router: abortScaleDownDelaySeconds, 30 s by default; never when
// it is 0 (the canary then stays up, see KeepCanaryScaleOnAbort), and not
// by default with dynamicStableScale, whose canary shrinks with its traffic.
func CanaryAbortScaleDownDelay(c *v1alpha1.CanaryStrategy) (time.Duration, bool) {
	switch {
	case c.TrafficRouting == nil:
		return 0, false
	case c.AbortScaleDownDelaySeconds == nil && c.DynamicStableScale:
		return 0, false
	case c.AbortScaleDownDelaySeconds == nil:
		return DefaultAbortScaleDownDelaySeconds * time.Second, true
	case *c.AbortScaleDownDelaySeconds == 0:
		return 0, false
	}
	return time.Duration(*c.AbortScaleDownDelaySeconds) * time.Second, true
}

// ReplicaSetCounts is what the canary math needs to know of one ReplicaSet.
// A status older than the ReplicaSet's last scale says nothing: the caller
// then passes 0 for the counts from the status.
type ReplicaSetCounts struct {
	Replicas          int32 // spec.replicas
	AvailableReplicas int32 // status.availableReplicas
	CreatedReplicas   int32 // status.replicas
}

// CanaryInput is the state the canary replica math works on.
type CanaryInput struct {
	Replicas       int32                    // spec.replicas, default already applied
	Weight         int32                    // the desired canary weight 0..100 of the current step
	SetCanaryScale *v1alpha1.SetCanaryScale // the last setCanaryScale up to the current step, nil if none
	MaxSurge       *intstr.IntOrString      // spec.strategy.canary.maxSurge (nil = 25%)
	MaxUnavailable *intstr.IntOrString      // spec.strategy.canary.maxUnavailable (nil = 25%)
	// Canary is the new ReplicaSet; nil when it does not exist yet, in which
	// case the result is the size to create it with.
	Canary *ReplicaSetCounts
	// Stable is the stable ReplicaSet; nil when there is none (first deploy)
	// and also when the new ReplicaSet is the stable one. Without a stable
	// ReplicaSet the canary is sized to the full spec.replicas.
	Stable  *ReplicaSetCounts
	Others  []ReplicaSetCounts // older ReplicaSets that are neither canary nor stable
	Aborted bool               // abort: scale canary down, stable back up
	// Steps are the canary's steps; an aborted dynamicStableScale canary
	// walks their weights back.
	Steps         []v1alpha1.CanaryStep
	TrafficRouted bool // a traffic router splits traffic: use the traffic-routed math
	// DynamicStableScale (traffic-routed only) scales the stable side down as
	// traffic leaves it.
	DynamicStableScale bool
	// MinPodsPerReplicaSet (traffic-routed only) is the least number of pods
	// a side that runs at all keeps.
	MinPodsPerReplicaSet *int32
	// CurrentWeights are the weights last set on the traffic router
	// (status.canary.weights), nil when unknown. With DynamicStableScale the
	// stable side is not scaled below the traffic it still receives, and on
	// abort the canary is not scaled below the traffic it still receives.
	CurrentWeights *v1alpha1.TrafficWeights
	// KeepCanaryScaleOnAbort is true when abortScaleDownDelaySeconds is
	// explicitly 0: the canary then keeps its setCanaryScale after an abort.
	KeepCanaryScaleOnAbort bool
}

// CanaryReplicas returns the replica counts the canary and stable ReplicaSets
// should have now. When in.Stable is nil the stable count is 0.
func CanaryReplicas(in CanaryInput) (canary, stable int32) {
	if in.TrafficRouted {
		return trafficRoutedCanaryReplicas(in)
	}
	return basicCanaryReplicas(in)
}

// effectiveCanaryScale returns the setCanaryScale that applies, or nil. It only
// applies with a traffic router (without one the weight is the replica ratio),
// not without a stable ReplicaSet (the update then goes straight to 100%), and
// not after an abort unless the canary is told to stay up.
func effectiveCanaryScale(in CanaryInput) *v1alpha1.SetCanaryScale {
	scs := in.SetCanaryScale
	if scs == nil || scs.MatchTrafficWeight || !in.TrafficRouted || in.Stable == nil {
		return nil
	}
	if in.Aborted && !in.KeepCanaryScaleOnAbort {
		return nil
	}
	return scs
}

// effectiveWeight is the canary weight the replica math aims at.
func effectiveWeight(in CanaryInput) int32 {
	if in.Stable == nil {
		return 100
	}
	if scs := effectiveCanaryScale(in); scs != nil && scs.Weight != nil {
		return *scs.Weight
	}
	if in.Aborted {
		return abortWeight(in)
	}
	return in.Weight
}

// abortWeight is the canary weight an aborted canary is sized for: 0, but
// with dynamicStableScale the weight of the last setWeight step that needs
// fewer pods than the canary still carries (the larger of its available
// pods and the pods the stable side still lacks), so the stable side grows
// back one step at a time as its pods become available, instead of to full
// size at once (Argo Rollouts' GetDesiredCanaryWeight on abort).
func abortWeight(in CanaryInput) int32 {
	if !in.TrafficRouted || !in.DynamicStableScale || in.Canary == nil || in.Stable == nil {
		return 0
	}
	carried := max(in.Replicas-in.Stable.AvailableReplicas, in.Canary.AvailableReplicas)
	for i := len(in.Steps) - 1; i >= 0; i-- {
		if w := in.Steps[i].SetWeight; w != nil && replicasForWeight(in.Replicas, *w) < carried {
			return *w
		}
	}
	return 0
}

// AbortTrafficWeight is the weight the router of an aborted canary sends to
// the canary: 0 at once, but with dynamicStableScale only as much as the
// available stable pods can take back, following abortWeight step by step
// and never rising again (Argo Rollouts'
// calculateDesiredWeightOnAbortOrStableRollback).
func AbortTrafficWeight(in CanaryInput) int32 {
	if !in.DynamicStableScale || in.Canary == nil || in.Stable == nil || in.Replicas == 0 {
		return 0
	}
	stepWeight := abortWeight(in)
	stableCarries := 100 * in.Stable.AvailableReplicas / in.Replicas
	rest := max(0, 100-stableCarries)
	if in.CurrentWeights == nil {
		return max(rest, stepWeight)
	}
	current := in.CurrentWeights.Canary.Weight
	switch {
	case stepWeight <= 0:
		return min(rest, current)
	case stableCarries < 100-stepWeight:
		// The stable side is still growing to the step: hold the weight.
		return current
	}
	return min(stepWeight, current)
}

// AtDesiredCounts says whether a canary step's replica counts are reached,
// as Argo Rollouts' AtDesiredReplicaCountsForCanary decides: the canary
// runs wantCanary pods, all available; the stable side has its wantStable
// pods created (with dynamicStableScale it follows the traffic instead and
// is not waited for); without a traffic router no older ReplicaSet has an
// available pod left, as those still get traffic. in holds the counts after
// this pass's scaling. A missing stable ReplicaSet is not waited for.
func AtDesiredCounts(in CanaryInput, wantCanary, wantStable int32) bool {
	c := in.Canary
	if c == nil || c.Replicas != wantCanary || c.AvailableReplicas != wantCanary {
		return false
	}
	if s := in.Stable; s != nil && !(in.TrafficRouted && in.DynamicStableScale) &&
		(s.Replicas != wantStable || s.CreatedReplicas != wantStable) {
		return false
	}
	if !in.TrafficRouted {
		for _, o := range in.Others {
			if o.AvailableReplicas > 0 {
				return false
			}
		}
	}
	return true
}

// trafficRoutedCanaryReplicas sizes the canary from the weight alone; the
// router, not the replica ratio, decides who gets traffic, so the stable side
// stays at full size unless dynamicStableScale is on.
func trafficRoutedCanaryReplicas(in CanaryInput) (int32, int32) {
	weight := effectiveWeight(in)
	var canary int32
	scs := effectiveCanaryScale(in)
	if scs != nil && scs.Replicas != nil {
		canary = *scs.Replicas
		// An explicit canary size says nothing about traffic, so the stable
		// side is sized for all of it.
		weight = 0
	} else {
		canary = atLeastMinPods(in, replicasForWeight(in.Replicas, weight))
	}
	if in.Stable == nil {
		return canary, 0
	}
	if !in.DynamicStableScale {
		return canary, in.Replicas
	}
	// The stable side keeps enough pods for the larger of the traffic it is
	// about to get and the traffic it still gets; on abort the canary does the
	// same until the router has moved traffic back.
	stable := replicasForWeight(in.Replicas, 100-weight)
	if w := in.CurrentWeights; w != nil {
		stable = max(stable, replicasForWeight(in.Replicas, w.Stable.Weight))
		if in.Aborted {
			canary = max(canary, replicasForWeight(in.Replicas, w.Canary.Weight))
		}
	}
	canary, stable = atLeastMinPods(in, canary), atLeastMinPods(in, stable)
	if in.Aborted {
		// An abort only moves back to stable: the stable side never shrinks
		// and the canary never grows again. The step it aims at follows
		// available pods, which a status not yet updated for the last
		// scale reports as none; without this a pass would undo the one
		// before.
		stable = max(stable, in.Stable.Replicas)
		if in.Canary != nil {
			canary = min(canary, in.Canary.Replicas)
		}
	}
	return canary, stable
}

// replicasForWeight is the number of pods that carries weight percent of the
// traffic, rounded up.
func replicasForWeight(replicas, weight int32) int32 {
	return int32(math.Ceil(float64(weight*replicas) / 100))
}

// atLeastMinPods raises a non-zero count to minPodsPerReplicaSet, which is
// capped at spec.replicas as in Argo Rollouts: a side could never reach more
// (the step would wait forever).
func atLeastMinPods(in CanaryInput, count int32) int32 {
	if count == 0 || in.MinPodsPerReplicaSet == nil {
		return count
	}
	return max(count, min(*in.MinPodsPerReplicaSet, in.Replicas))
}

// basicCanaryReplicas approximates the weight with the ratio of canary to
// stable pods. It moves towards that split one bounded step at a time: it
// first grows (stable before canary) up to spec.replicas+maxSurge pods, then,
// once no older ReplicaSet has pods left, shrinks the side that is too big as
// far as spec.replicas-maxUnavailable available pods allow.
func basicCanaryReplicas(in CanaryInput) (int32, int32) {
	surge, unavailable := CanaryFenceposts(in.MaxSurge, in.MaxUnavailable, in.Replicas)
	wantCanary, wantStable := closestCanaryStableSplit(in.Replicas, effectiveWeight(in), surge)

	// A ReplicaSet about to be created counts as one with no pods.
	canaryRS := in.Canary
	if canaryRS == nil {
		canaryRS = &ReplicaSetCounts{}
	}
	stableRS := in.Stable
	if stableRS == nil {
		wantCanary, wantStable = in.Replicas, 0
	}

	canary := canaryRS.Replicas
	var stable int32
	if stableRS != nil {
		stable = stableRS.Replicas
	}
	var older int32
	for _, rs := range in.Others {
		older += rs.Replicas
	}
	maxTotal := in.Replicas + surge
	room := maxTotal - (older + canary + stable)

	if stableRS != nil && stable < wantStable && room > 0 {
		grown := min(stable+room, wantStable)
		room -= grown - stable
		stable = grown
	}
	if canary < wantCanary && room > 0 {
		canary = min(canary+room, wantCanary)
	}

	// Older ReplicaSets are drained first; until they are empty the canary
	// and stable sides only grow.
	if older > 0 {
		return canary, stable
	}

	minAvailable := in.Replicas - unavailable
	// While the canary grows, the stable side may shrink even if some of its
	// pods are not available (else a crash-looping stable could block the
	// update); while the canary shrinks (abort), the same holds for the canary.
	growing := wantCanary >= canaryRS.Replicas
	counted := podsCountedForScaleDown(canaryRS, !growing) + podsCountedForScaleDown(stableRS, growing)
	if counted <= minAvailable {
		return canary, stable
	}
	excess := counted - minAvailable
	switch {
	case !growing:
		canary = shrinkTowards(canaryRS, wantCanary, excess, canary)
		canary, stable = keepWithinFenceposts(canaryRS, stableRS, canary, stable, maxTotal, minAvailable)
	case stableRS != nil:
		stable = shrinkTowards(stableRS, wantStable, excess, stable)
		stable, canary = keepWithinFenceposts(stableRS, canaryRS, stable, canary, maxTotal, minAvailable)
	}
	return canary, stable
}

// podsCountedForScaleDown is how many pods of rs count towards the available
// minimum when deciding how far to scale down: its available pods, or its
// spec.replicas when availability is ignored or pods above spec are about to
// go away anyway.
func podsCountedForScaleDown(rs *ReplicaSetCounts, ignoreAvailability bool) int32 {
	if rs == nil {
		return 0
	}
	if rs.Replicas < rs.AvailableReplicas || ignoreAvailability {
		return rs.Replicas
	}
	return rs.AvailableReplicas
}

// shrinkTowards removes up to excess pods from rs, never going below want.
func shrinkTowards(rs *ReplicaSetCounts, want, excess, current int32) int32 {
	if rs != nil && rs.Replicas > want {
		return max(want, rs.Replicas-excess)
	}
	return current
}

// keepWithinFenceposts corrects the counts after the drained side shrank:
// the other side gives back pods above maxTotal, but only as far as the
// available minimum allows; what it may not give back the drained side does.
func keepWithinFenceposts(drainedRS, otherRS *ReplicaSetCounts, drained, other, maxTotal, minAvailable int32) (int32, int32) {
	if otherRS == nil {
		return drained, other
	}
	var available int32
	if drainedRS != nil {
		available += min(drainedRS.AvailableReplicas, drained)
	}
	other -= max(0, other+drained-maxTotal)
	available += min(otherRS.AvailableReplicas, other)
	lostAvailable := max(0, otherRS.AvailableReplicas-other)
	missingAvailable := max(0, minAvailable-available)
	other += min(lostAvailable, missingAvailable)
	drained -= max(0, other+drained-maxTotal)
	return drained, other
}

// closestCanaryStableSplit picks the canary and stable pod counts whose ratio
// is closest to weight. The two sum to replicas, or replicas+1 when a surge is
// allowed and that gets closer. For a weight strictly between 0 and 100
// neither side is 0, unless there is a single pod and no surge. When two
// choices are equally close the larger canary wins.
func closestCanaryStableSplit(replicas, weight, surge int32) (int32, int32) {
	if replicas == 0 {
		return 0, 0
	}
	type split struct{ canary, total int32 }
	var candidates []split

	exact := float64(replicas*weight) / 100
	up, down := int32(math.Ceil(exact)), int32(math.Floor(exact))
	zeroAllowed := weight == 0 || weight == 100 || (replicas == 1 && surge == 0)

	if up < replicas || zeroAllowed {
		candidates = append(candidates, split{up, replicas})
	}
	// On a tie rounding down is never better, so it is not offered.
	if !halfwayBetween(replicas, weight) && (down != 0 || zeroAllowed) {
		candidates = append(candidates, split{down, replicas})
	}
	if surge > 0 {
		candidates = append(candidates, split{up, replicas + 1})
		if !halfwayBetween(replicas+1, weight) && (down != 0 || zeroAllowed) {
			candidates = append(candidates, split{down, replicas + 1})
		}
	}
	if len(candidates) == 0 {
		// Only reachable without surge when weight lies halfway below
		// spec.replicas (5 replicas at 90%): rounding up would leave no
		// stable pod and the tie rule dropped rounding down. Argo Rollouts
		// then runs no canary at all; rounding down keeps both sides running.
		return down, replicas - down
	}

	best := candidates[0]
	bestDistance := weightDistance(weight, best.canary, best.total)
	for _, c := range candidates[1:] {
		if d := weightDistance(weight, c.canary, c.total); d < bestDistance {
			best, bestDistance = c, d
		}
	}
	return best.canary, best.total - best.canary
}

// halfwayBetween reports whether weight percent of total pods lies exactly
// halfway between two whole pod counts.
func halfwayBetween(total, weight int32) bool {
	_, frac := math.Modf(float64(total) * (float64(weight) / 100))
	return frac == 0.5
}

// weightDistance is how far canary of total pods is from weight percent.
func weightDistance(weight, canary, total int32) float64 {
	return math.Abs(float64(canary*100)/float64(total) - float64(weight))
}

// CanaryFenceposts resolves a canary's maxSurge and maxUnavailable together,
// as Argo Rollouts does: nil means 25%, surge rounds up, unavailable rounds
// down, and when both come out 0 unavailable becomes 1 so the update can
// still move. Unavailable never exceeds replicas and is 0 for 0 replicas.
func CanaryFenceposts(maxSurge, maxUnavailable *intstr.IntOrString, replicas int32) (surge, unavailable int32) {
	surge, surgeErr := resolveFencepost(maxSurge, replicas, true)
	unavailable, unavailableErr := resolveFencepost(maxUnavailable, replicas, false)
	if surgeErr != nil || unavailableErr != nil {
		// Validation rejects such values; Argo Rollouts then resolves both to 0.
		return 0, 0
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, capUnavailable(unavailable, replicas)
}

// MaxSurgeCount resolves maxSurge against replicas as Argo Rollouts does for
// a canary: nil means 25%, a percentage rounds up, an invalid value is 0.
func MaxSurgeCount(v *intstr.IntOrString, replicas int32) int32 {
	surge, err := resolveFencepost(v, replicas, true)
	if err != nil {
		return 0
	}
	return surge
}

// MaxUnavailableCount resolves maxUnavailable against replicas: nil means
// 25%, a percentage rounds down, the result never exceeds replicas and an
// invalid value is 0. It sees maxUnavailable alone; Argo Rollouts' rule that
// unavailable becomes 1 when surge and unavailable both resolve to 0 needs
// both values, see CanaryFenceposts.
func MaxUnavailableCount(v *intstr.IntOrString, replicas int32) int32 {
	unavailable, err := resolveFencepost(v, replicas, false)
	if err != nil {
		return 0
	}
	return capUnavailable(unavailable, replicas)
}

func capUnavailable(unavailable, replicas int32) int32 {
	if replicas == 0 {
		return 0
	}
	return min(unavailable, replicas)
}

// resolveFencepost turns an int or percentage into a pod count. Like Argo
// Rollouts (which uses the lenient intstr.GetValueFromIntOrPercent), any
// string is a percentage, with or without its "%".
func resolveFencepost(v *intstr.IntOrString, replicas int32, roundUp bool) (int32, error) {
	if v == nil {
		v = &defaultCanaryFencepost
	}
	if v.Type == intstr.Int {
		return v.IntVal, nil
	}
	percent, err := strconv.Atoi(strings.ReplaceAll(v.StrVal, "%", ""))
	if err != nil {
		return 0, fmt.Errorf("invalid maxSurge/maxUnavailable %q: %w", v.StrVal, err)
	}
	scaled := float64(percent) * float64(replicas) / 100
	if roundUp {
		return int32(math.Ceil(scaled)), nil
	}
	return int32(math.Floor(scaled)), nil
}

// DesiredWeight returns the canary weight for a step index: the last setWeight
// at or before stepIndex (0 when there is none yet), 100 when the steps are
// done or there are no steps, and 0 when aborted. A nil stepIndex is step 0.
func DesiredWeight(steps []v1alpha1.CanaryStep, stepIndex *int32, aborted bool) int32 {
	if aborted {
		return 0
	}
	index, ok := currentStep(steps, stepIndex)
	if !ok {
		return 100
	}
	for i := index; i >= 0; i-- {
		if w := steps[i].SetWeight; w != nil {
			return *w
		}
	}
	return 0
}

// CurrentSetCanaryScale returns the last setCanaryScale at or before
// stepIndex. It returns nil when there is none, when the steps are done, and
// when that last setCanaryScale is matchTrafficWeight (which hands the canary
// size back to the weight). A setWeight in between does not end it.
func CurrentSetCanaryScale(steps []v1alpha1.CanaryStep, stepIndex *int32) *v1alpha1.SetCanaryScale {
	index, ok := currentStep(steps, stepIndex)
	if !ok {
		return nil
	}
	for i := index; i >= 0; i-- {
		scs := steps[i].SetCanaryScale
		if scs == nil {
			continue
		}
		if scs.MatchTrafficWeight {
			return nil
		}
		return scs
	}
	return nil
}

// currentStep returns the index of the step being run, false when there are
// no steps or all are done.
func currentStep(steps []v1alpha1.CanaryStep, stepIndex *int32) (int, bool) {
	index := 0
	if stepIndex != nil {
		index = int(*stepIndex)
	}
	if index < 0 || index >= len(steps) {
		return 0, false
	}
	return index, true
}

// PauseDuration parses a pause step's duration. An int is seconds; a string is
// seconds ("10") or a Go duration ("1h", "30s"), truncated to whole seconds as
// Argo Rollouts does. A nil pause or duration waits until promoted
// (indefinite). A value that parses as neither, or a negative one, is an error.
func PauseDuration(p *v1alpha1.RolloutPause) (d time.Duration, indefinite bool, err error) {
	if p == nil || p.Duration == nil {
		return 0, true, nil
	}
	var seconds int64
	if p.Duration.Type == intstr.Int {
		seconds = int64(p.Duration.IntVal)
	} else if s, err := strconv.ParseInt(p.Duration.StrVal, 10, 32); err == nil {
		seconds = s
	} else {
		parsed, err := time.ParseDuration(p.Duration.StrVal)
		if err != nil {
			return 0, false, fmt.Errorf("pause duration %q is neither seconds nor a duration: %w", p.Duration.StrVal, err)
		}
		seconds = int64(parsed / time.Second)
	}
	if seconds < 0 {
		return 0, false, fmt.Errorf("pause duration %s is negative", p.Duration.String())
	}
	return time.Duration(seconds) * time.Second, false, nil
}
