package applicationset

import (
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// The progress of an Application under a RollingSync, as Argo CD names it
// in status.applicationStatus.
const (
	statusWaiting     = "Waiting"
	statusPending     = "Pending"
	statusProgressing = "Progressing"
	statusHealthy     = "Healthy"
)

// Argo CD's messages for each move.
const (
	msgDefaultWaiting      = "No Application status found, defaulting status to Waiting."
	msgPendingChanges      = "Application has pending changes, setting status to Waiting."
	msgSyncSucceeded       = "Application resource completed a sync successfully, updating status from Pending to Progressing."
	msgBecameProgressing   = "Application resource became Progressing, updating status from Pending to Progressing."
	msgAlreadyHealthy      = "Application resource is already Healthy, updating status from Waiting to Healthy."
	msgBecameHealthy       = "Application resource became Healthy, updating status from Progressing to Healthy."
	msgMovedToPending      = "Application moved to Pending status, watching for the Application resource to start Progressing."
	rollingSyncInitiator   = "applicationset-controller"
	strategyRollingSync    = "RollingSync"
	rolloutCompleteMessage = "ApplicationSet Rollout has completed"
)

// rollingSyncOn reports whether set's syncs follow a RollingSync with steps.
func rollingSyncOn(set *v1alpha1.ApplicationSet) bool {
	s := set.Spec.Strategy
	return s != nil && s.Type == strategyRollingSync && s.RollingSync != nil && len(s.RollingSync.Steps) > 0
}

// stepsOf places each app in the first step whose matchExpressions its
// labels satisfy (0-based); an app no step selects is left out: a
// RollingSync never syncs it, as in Argo CD.
func stepsOf(steps []v1alpha1.ApplicationSetRolloutStep, apps []planned) map[string]int {
	out := map[string]int{}
	for i := range apps {
		for s, step := range steps {
			if selects(step, apps[i].app.Labels) {
				out[apps[i].app.Name] = s
				break
			}
		}
	}
	return out
}

// selects reports whether labels satisfy every expression of step (Argo's
// buildAppDependencyList): In needs the label with one of the values;
// NotIn fails on one of them, and holds without the label; any other
// operator never holds.
func selects(step v1alpha1.ApplicationSetRolloutStep, labels map[string]string) bool {
	for _, e := range step.MatchExpressions {
		v, ok := labels[e.Key]
		switch {
		case e.Operator != "In" && e.Operator != "NotIn":
			return false
		case !ok && e.Operator == "In":
			return false
		case ok && slices.Contains(e.Values, v) != (e.Operator == "In"):
			return false
		}
	}
	return true
}

// rollingPass is what one pass of a RollingSync decides.
type rollingPass struct {
	// statuses is the new status.applicationStatus, by app name.
	statuses []v1alpha1.ApplicationSetApplicationStatus
	// syncs are the apps whose sync the pass starts.
	syncs []string
	// progressing is the RolloutProgressing condition.
	progressing v1alpha1.ApplicationSetCondition
}

// progress is one pass of a RollingSync over the set's Applications as
// they are (apps, by name), from the statuses the last pass recorded (prev),
// steps and stepOf (stepsOf) — Argo CD's performProgressiveSyncs:
//
//   - an app goes Waiting when it has changes to sync (OutOfSync, or its
//     revisions moved), Pending when its step may sync and its step's
//     maxUpdate allows, Progressing when a sync begun since it went Pending
//     runs or succeeded (or it is Progressing), and Healthy when it is
//     Healthy, not OutOfSync and its last operation succeeded;
//   - a step may sync once every app of the steps before it is Healthy;
//   - a Pending app that is OutOfSync and has no sync since it went
//     Pending is synced now.
func progress(steps []v1alpha1.ApplicationSetRolloutStep, stepOf map[string]int, prev []v1alpha1.ApplicationSetApplicationStatus, apps []v1alpha1.Application, now metav1.Time) rollingPass {
	byName := map[string]*v1alpha1.Application{}
	statuses := make([]v1alpha1.ApplicationSetApplicationStatus, 0, len(apps))
	for i := range apps {
		app := &apps[i]
		byName[app.Name] = app
		statuses = append(statuses, advance(app, previous(prev, app.Name), stepLabel(stepOf, app.Name), now))
	}
	slices.SortFunc(statuses, func(a, b v1alpha1.ApplicationSetApplicationStatus) int {
		return strings.Compare(a.Application, b.Application)
	})

	// Steps in order: each syncs while all before it are Healthy.
	enabled := map[string]bool{}
	mayProceed := true
	for s := range steps {
		for _, st := range statuses {
			if step, ok := stepOf[st.Application]; ok && step == s {
				enabled[st.Application] = mayProceed
			}
		}
		for _, st := range statuses {
			if step, ok := stepOf[st.Application]; ok && step == s && !(st.Status == statusHealthy && healthy(byName[st.Application])) {
				mayProceed = false
			}
		}
	}

	// Waiting apps of enabled steps go Pending, within maxUpdate.
	total, updating := make([]int, len(steps)), make([]int, len(steps))
	for _, st := range statuses {
		if s, ok := stepOf[st.Application]; ok {
			total[s]++
			if st.Status == statusPending || st.Status == statusProgressing {
				updating[s]++
			}
		}
	}
	for i := range statuses {
		st := &statuses[i]
		s, ok := stepOf[st.Application]
		if !ok || st.Status != statusWaiting || !enabled[st.Application] || updating[s] >= maxUpdate(steps[s].MaxUpdate, total[s]) {
			continue
		}
		st.Status, st.Message, st.LastTransitionTime = statusPending, msgMovedToPending, &now
		updating[s]++
	}

	var syncs []string
	for _, st := range statuses {
		app := byName[st.Application]
		if st.Status == statusPending && enabled[st.Application] && app.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync &&
			app.Operation == nil && !operationSince(app, st.LastTransitionTime) {
			syncs = append(syncs, st.Application)
		}
	}
	return rollingPass{statuses: statuses, syncs: syncs, progressing: progressingCondition(len(steps), stepOf, statuses)}
}

// advance moves one app's status as its Application now stands (Argo's
// updateApplicationSetApplicationStatus).
func advance(app *v1alpha1.Application, prev *v1alpha1.ApplicationSetApplicationStatus, step string, now metav1.Time) v1alpha1.ApplicationSetApplicationStatus {
	revisions := revisionsOf(app)
	var st v1alpha1.ApplicationSetApplicationStatus
	switch {
	case prev == nil:
		st = v1alpha1.ApplicationSetApplicationStatus{Application: app.Name, LastTransitionTime: &now, Message: msgDefaultWaiting,
			Status: statusWaiting, TargetRevisions: revisions}
	default:
		st = *prev.DeepCopy()
		if len(st.TargetRevisions) == 0 {
			st.TargetRevisions = revisions
		}
	}
	st.Step = step
	moveTo := func(status, msg string) {
		st.Status, st.Message, st.LastTransitionTime = status, msg, &now
	}
	// New revisions restart an app's progress, a Pending one's too (its
	// sync may have failed); other changes that of a synced one.
	switch {
	case !slices.Equal(st.TargetRevisions, revisions):
		moveTo(statusWaiting, msgPendingChanges)
	case app.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && st.Status != statusWaiting && st.Status != statusPending:
		moveTo(statusWaiting, msgPendingChanges)
	}
	st.TargetRevisions = revisions
	phase := operationPhase(app)
	if st.Status == statusPending {
		switch {
		case phase == v1alpha1.OperationSucceeded && operationSince(app, st.LastTransitionTime):
			moveTo(statusProgressing, msgSyncSucceeded)
		case phase == v1alpha1.OperationRunning && operationSince(app, st.LastTransitionTime),
			app.Status.Health.Status == v1alpha1.HealthStatusProgressing:
			moveTo(statusProgressing, msgBecameProgressing)
		}
	}
	if st.Status == statusWaiting && healthy(app) {
		moveTo(statusHealthy, msgAlreadyHealthy)
	}
	if st.Status == statusProgressing && healthy(app) {
		moveTo(statusHealthy, msgBecameHealthy)
	}
	return st
}

// healthy is Argo CD's isApplicationHealthy: Healthy, not OutOfSync, and
// no operation, or a succeeded one.
func healthy(app *v1alpha1.Application) bool {
	if app == nil {
		return false
	}
	phase := operationPhase(app)
	return app.Status.Health.Status == v1alpha1.HealthStatusHealthy && app.Status.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync &&
		(phase == "" || phase == v1alpha1.OperationSucceeded)
}

func operationPhase(app *v1alpha1.Application) v1alpha1.OperationPhase {
	if app.Status.OperationState == nil {
		return ""
	}
	return app.Status.OperationState.Phase
}

// operationSince reports whether app's last operation began at or after
// since (both to the second, as they are stored): one the RollingSync
// started, or another begun while the app was Pending.
func operationSince(app *v1alpha1.Application, since *metav1.Time) bool {
	s := app.Status.OperationState
	return s != nil && since != nil && !s.StartedAt.Time.Before(since.Truncate(time.Second))
}

// revisionsOf is the revisions app was last compared at.
func revisionsOf(app *v1alpha1.Application) []string {
	if len(app.Status.Sync.Revisions) > 0 {
		return slices.Clone(app.Status.Sync.Revisions)
	}
	if app.Status.Sync.Revision != "" {
		return []string{app.Status.Sync.Revision}
	}
	return []string{}
}

// maxUpdate is how many apps of a step of total may sync at once: all
// when unset, else the number or the percentage (rounded down, at least
// one unless 0%), as Argo CD reads maxUpdate.
func maxUpdate(v *intstr.IntOrString, total int) int {
	if v == nil {
		return total + 1
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, false)
	if err != nil {
		return total + 1 // Argo ignores an unreadable maxUpdate
	}
	if v.Type == intstr.String && v.StrVal != "0%" && n < 1 {
		n = 1
	}
	return n
}

// stepLabel is the 1-based step of app as status.applicationStatus
// writes it; "-1" when no step selects it.
func stepLabel(stepOf map[string]int, app string) string {
	s, ok := stepOf[app]
	if !ok {
		return "-1"
	}
	return strconv.Itoa(s + 1)
}

func previous(prev []v1alpha1.ApplicationSetApplicationStatus, app string) *v1alpha1.ApplicationSetApplicationStatus {
	for i := range prev {
		if prev[i].Application == app {
			return &prev[i]
		}
	}
	return nil
}

// progressingCondition is RolloutProgressing: True while a step has an app
// that is not Healthy, naming the first such step.
func progressingCondition(steps int, stepOf map[string]int, statuses []v1alpha1.ApplicationSetApplicationStatus) v1alpha1.ApplicationSetCondition {
	for s := range steps {
		for _, st := range statuses {
			if step, ok := stepOf[st.Application]; ok && step == s && st.Status != statusHealthy {
				return v1alpha1.ApplicationSetCondition{Type: v1alpha1.ApplicationSetConditionRolloutProgressing,
					Status: v1alpha1.ApplicationSetConditionStatusTrue, Reason: ReasonApplicationSetModified,
					Message: "ApplicationSet is performing rollout of step " + strconv.Itoa(s+1)}
			}
		}
	}
	return v1alpha1.ApplicationSetCondition{Type: v1alpha1.ApplicationSetConditionRolloutProgressing,
		Status: v1alpha1.ApplicationSetConditionStatusFalse, Reason: ReasonRolloutComplete, Message: rolloutCompleteMessage}
}
