package applicationset

import (
	"fmt"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// ParsePolicy reads the server's policy flag as Argo CD's ApplicationSet
// controller reads --policy: one of the four policies, "" standing for sync.
func ParsePolicy(s string) (v1alpha1.ApplicationsSyncPolicy, error) {
	switch p := v1alpha1.ApplicationsSyncPolicy(s); p {
	case "":
		return v1alpha1.ApplicationsSyncPolicySync, nil
	case v1alpha1.ApplicationsSyncPolicyCreateOnly, v1alpha1.ApplicationsSyncPolicyCreateUpdate,
		v1alpha1.ApplicationsSyncPolicyCreateDelete, v1alpha1.ApplicationsSyncPolicySync:
		return p, nil
	default:
		return "", fmt.Errorf("unknown ApplicationSet policy %q: want sync, create-only, create-update or create-delete", s)
	}
}

// effectivePolicy is the policy that governs set's Applications, by Argo
// CD's rule (utils.DefaultPolicy): the set's syncPolicy.applicationsSync
// when it names one and the server lets sets override its policy (Argo's
// --enable-policy-override, on by default only when --policy is unset),
// else the server's policy ("" is sync).
func effectivePolicy(set *v1alpha1.ApplicationSet, server v1alpha1.ApplicationsSyncPolicy, override bool) v1alpha1.ApplicationsSyncPolicy {
	if server == "" {
		server = v1alpha1.ApplicationsSyncPolicySync
	}
	sp := set.Spec.SyncPolicy
	if !override || sp == nil || sp.ApplicationsSync == nil {
		return server
	}
	return *sp.ApplicationsSync
}

// ServerPolicy reads the server's flags as Argo CD's ApplicationSet
// controller reads --policy and --enable-policy-override: the policy
// (ParsePolicy), and whether sets may override it — as override says when
// given (non-nil), else exactly when no policy was given.
func ServerPolicy(policy string, override *bool) (v1alpha1.ApplicationsSyncPolicy, bool, error) {
	p, err := ParsePolicy(policy)
	if err != nil {
		return "", false, err
	}
	if override != nil {
		return p, *override, nil
	}
	return p, policy == "", nil
}
