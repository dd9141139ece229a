package applicationset

import (
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appset"
)

// errorRequeue is when a set whose pass failed is tried again without
// being woken (Argo's ReconcileRequeueOnValidationError).
const errorRequeue = 3 * time.Minute

// requeueAfter is how long until set's generators are read again without
// an event: appset.RequeueAfter (Argo CD's getMinRequeueAfter).
func requeueAfter(set *v1alpha1.ApplicationSet) time.Duration {
	return appset.RequeueAfter(&set.Spec)
}

// sooner is the sooner of two waits, 0 standing for none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || b > 0 && b < a {
		return b
	}
	return a
}
