package rollout

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// OlderReplicaSet is what ScaleDownOlder needs to know of a canary's
// ReplicaSet that is neither the canary nor the stable one.
type OlderReplicaSet struct {
	Replicas int32 // spec.replicas
	// Unavailable are its pods known not to be available: spec.replicas
	// less status.availableReplicas, 0 when the status is older than its
	// last scale.
	Unavailable int32
	// Referenced says the traffic router still sends it traffic
	// (status.canary.weights names it): it is left alone.
	Referenced bool
	// ScaleDownDeadline is its scale-down-deadline annotation; zero when
	// it has none.
	ScaleDownDeadline time.Time
}

// OlderInput is the state ScaleDownOlder decides on.
type OlderInput struct {
	Replicas       int32               // the Rollout's spec.replicas, default applied
	MaxSurge       *intstr.IntOrString // spec.strategy.canary.maxSurge
	MaxUnavailable *intstr.IntOrString // spec.strategy.canary.maxUnavailable
	// Available are the available pods of all the Rollout's ReplicaSets.
	Available int32
	// Older are the ReplicaSets to scale down, newest revision first.
	Older              []OlderReplicaSet
	TrafficRouted      bool
	DynamicStableScale bool
	// FullyPromoted says the new revision is the stable one.
	FullyPromoted bool
	// ScaleDownDelay (scaleDownDelaySeconds, default 30 s) keeps a
	// traffic-routed canary's previous stable ReplicaSet up after the
	// promotion, for at most RevisionLimit of them (scaleDownDelayRevisionLimit;
	// nil: no limit).
	ScaleDownDelay time.Duration
	RevisionLimit  *int32
	Now            time.Time
}

// OlderScale is the decision for one older ReplicaSet.
type OlderScale struct {
	Replicas int32 // its spec.replicas from now on
	// Deadline, when not zero, is the scale-down deadline to annotate it
	// with: it stays up until then.
	Deadline time.Time
}

// ScaleDownOlder decides how far the older ReplicaSets of a canary go down
// on this pass, as Argo Rollouts' scaleDownOldReplicaSetsForCanary does.
// Pods known to be unavailable go at once. Then, newest first, as many
// available pods go as keep spec.replicas-maxUnavailable of the Rollout's
// pods available: without a traffic router every older pod still gets
// traffic, so they go only within that budget. With a router an older
// ReplicaSet gets no traffic and goes to 0, except the previous stable one
// after a promotion, which waits for scaleDownDelaySeconds first (not with
// dynamicStableScale, which already scaled it with its traffic); nothing
// goes while the budget is spent.
func ScaleDownOlder(in OlderInput) []OlderScale {
	out := make([]OlderScale, len(in.Older))
	for i, rs := range in.Older {
		out[i].Replicas = rs.Replicas
		if rs.Replicas > 0 && rs.Unavailable > 0 {
			out[i].Replicas = max(0, rs.Replicas-rs.Unavailable)
		}
	}
	_, unavailable := CanaryFenceposts(in.MaxSurge, in.MaxUnavailable, in.Replicas)
	budget := in.Available - (in.Replicas - unavailable)
	if budget <= 0 {
		return out
	}
	delayed := int32(0)
	for i, rs := range in.Older {
		if in.TrafficRouted && rs.Referenced {
			continue
		}
		if budget <= 0 {
			break
		}
		current := out[i].Replicas
		if current == 0 {
			continue
		}
		want := int32(0)
		switch {
		case !in.TrafficRouted:
			want = max(0, current-budget)
		case (in.FullyPromoted || !rs.ScaleDownDeadline.IsZero()) && !in.DynamicStableScale:
			delayed++
			withinLimit := in.RevisionLimit == nil || delayed <= *in.RevisionLimit
			switch {
			case rs.ScaleDownDeadline.IsZero() && withinLimit:
				want, out[i].Deadline = current, in.Now.Add(in.ScaleDownDelay)
			case rs.ScaleDownDeadline.IsZero():
				delayed-- // not delayed after all: it goes now
			case withinLimit && in.Now.Before(rs.ScaleDownDeadline):
				want = current
			}
		}
		out[i].Replicas = want
		budget -= current - want
	}
	return out
}
