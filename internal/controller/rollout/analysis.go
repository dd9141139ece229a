package rollout

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis"
	"github.com/skiffcd/skiff/internal/rollout"
)

// maxRunNameCollisions bounds the ".N" suffixes tried when a run's name is
// taken by a finished run of the same revision (after a retry).
const maxRunNameCollisions = 10

// analysisGate is what the AnalysisRuns of this pass allow the strategy.
type analysisGate struct {
	// prePromotionBlocked holds the active Service on the old revision.
	prePromotionBlocked bool
	// postPromotionPending holds back making the new revision stable.
	postPromotionPending bool
	// stepSucceeded lets the current canary analysis step complete.
	stepSucceeded bool
	// abortMessage says which run aborted the rollout in this pass.
	abortMessage string
	// running says a run the update waits on has not finished: the
	// progress deadline does not count meanwhile, as in Argo Rollouts.
	running bool
}

// invalidAnalysisError is an analysis the spec asks for that cannot be
// built: a missing template, a bad argument. It is reported as InvalidSpec.
type invalidAnalysisError struct{ msg string }

func (e *invalidAnalysisError) Error() string { return e.msg }

// reconcileAnalysis starts the AnalysisRuns the current update needs,
// reads their verdicts (Failed or Error aborts, Inconclusive pauses),
// terminates runs that are no longer current, deletes finished runs beyond
// the history limits, and records the current runs in the status.
func (p *pass) reconcileAnalysis(ctx context.Context) error {
	if err := p.loadAnalysisRuns(ctx); err != nil {
		return err
	}
	st := p.status
	previous := p.currentRuns()
	current := map[rollout.RunType]*v1alpha1.AnalysisRun{}
	p.retriedRuns = map[rollout.RunType]*v1alpha1.AnalysisRun{}
	for runType, run := range previous {
		// Runs of another revision, of an update that was retried, or of a
		// step the canary has left are history now.
		if run.Labels[rollout.PodTemplateHashLabel] != p.hash {
			continue
		}
		if p.retried {
			p.retriedRuns[runType] = run
			continue
		}
		if runType == rollout.RunTypeStep && !p.isCurrentStepRun(run) {
			continue
		}
		current[runType] = run
	}

	skip := st.Abort || st.PromoteFull || st.StableRS == "" || st.StableRS == p.hash ||
		p.newRS.Annotations[AnnotationScaleDownDeadline] != "" || p.rollbackWithinWindow()
	if !skip {
		var err error
		if p.ro.Spec.Strategy.BlueGreen != nil {
			err = p.blueGreenAnalysis(ctx, current)
		} else {
			err = p.canaryAnalysis(ctx, current)
		}
		if err != nil {
			return err
		}
		for _, run := range current {
			p.judge(run)
		}
	}

	keep := map[string]bool{}
	for _, run := range current {
		keep[run.Name] = true
	}
	var others []*v1alpha1.AnalysisRun
	for _, run := range p.runs {
		if keep[run.Name] {
			continue
		}
		others = append(others, run)
	}
	// A skipped analysis stops what runs; an aborted or finished update
	// keeps showing its runs.
	stop := others
	if skip {
		stop = p.runs
	}
	for _, run := range stop {
		if err := p.terminateRun(ctx, run); err != nil {
			return err
		}
	}
	successful, unsuccessful := p.runHistoryLimits()
	for _, run := range rollout.RunsToDelete(others, successful, unsuccessful) {
		if err := p.r.Client.Delete(ctx, run); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting AnalysisRun %s/%s: %w", run.Namespace, run.Name, err)
		}
	}
	p.recordRuns(current)
	return nil
}

// loadAnalysisRuns reads the AnalysisRuns the Rollout owns, from the cache,
// and those its status names that the cache does not show yet.
func (p *pass) loadAnalysisRuns(ctx context.Context) error {
	var list v1alpha1.AnalysisRunList
	if err := p.r.Client.List(ctx, &list, ownedBy(p.ro)...); err != nil {
		return fmt.Errorf("listing AnalysisRuns: %w", err)
	}
	seen := map[string]bool{}
	for i := range list.Items {
		run := &list.Items[i]
		if owner := metav1.GetControllerOf(run); owner != nil && owner.UID == p.ro.UID {
			p.runs = append(p.runs, run)
			seen[run.Name] = true
		}
	}
	for _, ref := range p.runRefs() {
		if *ref == nil || seen[(*ref).Name] {
			continue
		}
		run := &v1alpha1.AnalysisRun{}
		err := p.r.APIReader.Get(ctx, client.ObjectKey{Namespace: p.ro.Namespace, Name: (*ref).Name}, run)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading AnalysisRun %s/%s: %w", p.ro.Namespace, (*ref).Name, err)
		}
		p.runs = append(p.runs, run)
	}
	return nil
}

// runRefs are the status fields naming the current runs, by run type.
func (p *pass) runRefs() map[rollout.RunType]**v1alpha1.RolloutAnalysisRunStatus {
	st := p.status
	return map[rollout.RunType]**v1alpha1.RolloutAnalysisRunStatus{
		rollout.RunTypePrePromotion:  &st.BlueGreen.PrePromotionAnalysisRunStatus,
		rollout.RunTypePostPromotion: &st.BlueGreen.PostPromotionAnalysisRunStatus,
		rollout.RunTypeStep:          &st.Canary.CurrentStepAnalysisRunStatus,
		rollout.RunTypeBackground:    &st.Canary.CurrentBackgroundAnalysisRunStatus,
	}
}

// currentRuns finds the runs the status names.
func (p *pass) currentRuns() map[rollout.RunType]*v1alpha1.AnalysisRun {
	out := map[rollout.RunType]*v1alpha1.AnalysisRun{}
	for runType, ref := range p.runRefs() {
		if *ref == nil {
			continue
		}
		for _, run := range p.runs {
			if run.Name == (*ref).Name {
				out[runType] = run
			}
		}
	}
	return out
}

func (p *pass) isCurrentStepRun(run *v1alpha1.AnalysisRun) bool {
	index := p.status.CurrentStepIndex
	return index != nil && run.Labels[rollout.RunStepIndexLabel] == strconv.Itoa(int(*index))
}

// blueGreenAnalysis runs prePromotionAnalysis once the preview pods are
// all available and before the switch, and postPromotionAnalysis once the
// active Service selects the new pods; each gates the next move.
func (p *pass) blueGreenAnalysis(ctx context.Context, current map[rollout.RunType]*v1alpha1.AnalysisRun) error {
	bg := p.ro.Spec.Strategy.BlueGreen
	st := p.status
	switched := st.BlueGreen.ActiveSelector == p.hash
	if bg.PrePromotionAnalysis != nil && !switched && st.BlueGreen.ActiveSelector != "" {
		if current[rollout.RunTypePrePromotion] != nil || saturated(p.newRS, rollout.PreviewReplicas(bg, p.replicas)) {
			if err := p.ensureRun(ctx, current, rollout.RunTypePrePromotion, 0, bg.PrePromotionAnalysis, "spec.strategy.blueGreen.prePromotionAnalysis"); err != nil {
				return err
			}
		}
		p.gate.prePromotionBlocked = !succeeded(current[rollout.RunTypePrePromotion])
		p.gate.running = p.gate.running || unfinished(current[rollout.RunTypePrePromotion])
	}
	if bg.PostPromotionAnalysis != nil {
		if switched && saturated(p.newRS, p.replicas) {
			if err := p.ensureRun(ctx, current, rollout.RunTypePostPromotion, 0, bg.PostPromotionAnalysis, "spec.strategy.blueGreen.postPromotionAnalysis"); err != nil {
				return err
			}
		}
		p.gate.postPromotionPending = !succeeded(current[rollout.RunTypePostPromotion])
		p.gate.running = p.gate.running || unfinished(current[rollout.RunTypePostPromotion])
	}
	return nil
}

// canaryAnalysis runs the analysis of the current step and the background
// analysis from its startingStep until the update completes.
func (p *pass) canaryAnalysis(ctx context.Context, current map[rollout.RunType]*v1alpha1.AnalysisRun) error {
	canary := p.ro.Spec.Strategy.Canary
	st := p.status
	index := st.CurrentStepIndex
	if index != nil && *index < int32(len(canary.Steps)) {
		if step := canary.Steps[*index]; step.Analysis != nil {
			// A paused rollout starts no new step run (a promote reruns an
			// Inconclusive one).
			if current[rollout.RunTypeStep] != nil || len(st.PauseConditions) == 0 {
				field := fmt.Sprintf("spec.strategy.canary.steps[%d].analysis", *index)
				if err := p.ensureRun(ctx, current, rollout.RunTypeStep, *index, step.Analysis, field); err != nil {
					return err
				}
			}
			p.gate.stepSucceeded = succeeded(current[rollout.RunTypeStep])
			p.gate.running = unfinished(current[rollout.RunTypeStep])
		}
	}
	if bg := canary.Analysis; bg != nil && len(bg.Templates) > 0 && !rollout.BeforeStartingStep(canary, index) {
		if err := p.ensureRun(ctx, current, rollout.RunTypeBackground, 0, &bg.RolloutAnalysis, "spec.strategy.canary.analysis"); err != nil {
			return err
		}
	}
	return nil
}

func unfinished(run *v1alpha1.AnalysisRun) bool {
	return run != nil && !run.Status.Phase.Completed()
}

func succeeded(run *v1alpha1.AnalysisRun) bool {
	return run != nil && run.Status.Phase == v1alpha1.AnalysisPhaseSuccessful
}

// ensureRun creates the run of runType when the current one does not do
// (none yet, or an Inconclusive one that was promoted).
func (p *pass) ensureRun(ctx context.Context, current map[rollout.RunType]*v1alpha1.AnalysisRun, runType rollout.RunType, stepIndex int32, ra *v1alpha1.RolloutAnalysis, field string) error {
	if !rollout.NeedsNewRun(current[runType], p.status) {
		return nil
	}
	// The run this one replaces: the current one when a promote reruns
	// it, the one of the aborted try after a retry, none at first.
	replaced := current[runType]
	if replaced == nil {
		replaced = p.retriedRuns[runType]
	}
	run, err := p.newRun(ctx, runType, stepIndex, ra, field)
	if err != nil {
		return err
	}
	created, err := p.createRun(ctx, run, replaced)
	if err != nil {
		return err
	}
	current[runType] = created
	p.event("AnalysisRunCreated", "Created %s AnalysisRun %s", runType, created.Name)
	return nil
}

// newRun builds the AnalysisRun of a Rollout analysis as Argo Rollouts
// names, labels and owns it.
func (p *pass) newRun(ctx context.Context, runType rollout.RunType, stepIndex int32, ra *v1alpha1.RolloutAnalysis, field string) (*v1alpha1.AnalysisRun, error) {
	templates, clusterTemplates, err := p.analysisTemplates(ctx, ra.Templates, field)
	if err != nil {
		return nil, err
	}
	args, err := rollout.RunArgs(ra.Args, p.status.StableRS, p.hash, p.ro)
	if err != nil {
		return nil, &invalidAnalysisError{msg: fmt.Sprintf("%s.%v", field, err)}
	}
	name := rollout.RunName(p.ro.Name, p.hash, p.revision, runType, stepIndex)
	labels := rollout.RunLabels(p.hash, runType, stepIndex, ra.AnalysisRunMetadata.Labels, p.ro.Spec.Selector.MatchLabels)
	run, err := analysis.NewRun(templates, clusterTemplates, args, name, p.ro.Namespace, labels)
	if err != nil {
		return nil, &invalidAnalysisError{msg: fmt.Sprintf("%s: Invalid value: %v", field, err)}
	}
	run.Spec.DryRun = append(run.Spec.DryRun, ra.DryRun...)
	run.Spec.MeasurementRetention = append(run.Spec.MeasurementRetention, ra.MeasurementRetention...)
	run.Annotations = map[string]string{AnnotationRevision: strconv.FormatInt(p.revision, 10)}
	for k, v := range ra.AnalysisRunMetadata.Annotations {
		run.Annotations[k] = v
	}
	run.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(p.ro, v1alpha1.GroupVersion.WithKind("Rollout"))}
	return run, nil
}

// analysisTemplates reads the templates an analysis names; a missing one
// is an invalid spec until it appears.
func (p *pass) analysisTemplates(ctx context.Context, refs []v1alpha1.AnalysisTemplateRef, field string) ([]*v1alpha1.AnalysisTemplate, []*v1alpha1.ClusterAnalysisTemplate, error) {
	if len(refs) == 0 {
		return nil, nil, &invalidAnalysisError{msg: field + ".templates: Required value: at least one template"}
	}
	var templates []*v1alpha1.AnalysisTemplate
	var clusterTemplates []*v1alpha1.ClusterAnalysisTemplate
	for i, ref := range refs {
		refField := fmt.Sprintf("%s.templates[%d].templateName", field, i)
		var obj client.Object
		kind := "AnalysisTemplate"
		key := client.ObjectKey{Namespace: p.ro.Namespace, Name: ref.TemplateName}
		if ref.ClusterScope && p.r.Namespace != "" {
			return nil, nil, &invalidAnalysisError{msg: fmt.Sprintf("%s: Invalid value: %q: ClusterAnalysisTemplate is cluster-scoped: this Skiff is a namespaced install and reads only namespace %s", refField, ref.TemplateName, p.r.Namespace)}
		}
		if ref.ClusterScope {
			kind, key.Namespace = "ClusterAnalysisTemplate", ""
			t := &v1alpha1.ClusterAnalysisTemplate{}
			clusterTemplates = append(clusterTemplates, t)
			obj = t
		} else {
			t := &v1alpha1.AnalysisTemplate{}
			templates = append(templates, t)
			obj = t
		}
		err := p.r.Client.Get(ctx, key, obj)
		if apierrors.IsNotFound(err) {
			return nil, nil, &invalidAnalysisError{msg: fmt.Sprintf("%s: Invalid value: %q: %s '%s' not found", refField, ref.TemplateName, kind, ref.TemplateName)}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s %s: %w", kind, ref.TemplateName, err)
		}
	}
	return templates, clusterTemplates, nil
}

// createRun creates run, named after the run it replaces: name, then
// name.1, name.2… A run of ours that already holds the next name was
// created by an earlier pass that read an older Rollout (the cache lags
// behind status writes); it is the run, and no second one is started.
func (p *pass) createRun(ctx context.Context, run *v1alpha1.AnalysisRun, replaced *v1alpha1.AnalysisRun) (*v1alpha1.AnalysisRun, error) {
	base := run.Name
	first := 0
	if replaced != nil {
		first = runSuffix(replaced.Name, base) + 1
	}
	for i := first; i <= first+maxRunNameCollisions; i++ {
		run.Name = base
		if i > 0 {
			run.Name = fmt.Sprintf("%s.%d", base, i)
		}
		err := p.r.Client.Create(ctx, run)
		if err == nil {
			return run, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating AnalysisRun %s/%s: %w", run.Namespace, run.Name, err)
		}
		existing := &v1alpha1.AnalysisRun{}
		if err := p.r.APIReader.Get(ctx, client.ObjectKeyFromObject(run), existing); err != nil {
			return nil, fmt.Errorf("reading AnalysisRun %s/%s: %w", run.Namespace, run.Name, err)
		}
		if owner := metav1.GetControllerOf(existing); owner != nil && owner.UID == p.ro.UID {
			return existing, nil
		}
	}
	return nil, fmt.Errorf("creating AnalysisRun %s/%s: %d names taken", run.Namespace, base, maxRunNameCollisions)
}

// runSuffix is N of a run named base.N, 0 for base itself.
func runSuffix(name, base string) int {
	if n, err := strconv.Atoi(strings.TrimPrefix(name, base+".")); err == nil && strings.HasPrefix(name, base+".") {
		return n
	}
	return 0
}

// judge applies a current run's verdict: Failed or Error aborts the
// update, Inconclusive pauses it until a promote.
func (p *pass) judge(run *v1alpha1.AnalysisRun) {
	switch run.Status.Phase {
	case v1alpha1.AnalysisPhaseFailed, v1alpha1.AnalysisPhaseError:
		p.status.Abort = true
		msg := run.Status.Message
		if msg == "" {
			msg = fmt.Sprintf("AnalysisRun '%s' ended %s", run.Name, run.Status.Phase)
		}
		p.gate.abortMessage = msg
	case v1alpha1.AnalysisPhaseInconclusive:
		p.addPause(v1alpha1.PauseReasonInconclusiveAnalysis)
	}
}

// terminateRun asks a run that is still going to stop.
func (p *pass) terminateRun(ctx context.Context, run *v1alpha1.AnalysisRun) error {
	if run.Spec.Terminate || run.Status.Phase.Completed() {
		return nil
	}
	patch := client.MergeFrom(run.DeepCopy())
	run.Spec.Terminate = true
	if err := p.r.Client.Patch(ctx, run, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("terminating AnalysisRun %s/%s: %w", run.Namespace, run.Name, err)
	}
	return nil
}

func (p *pass) runHistoryLimits() (successful, unsuccessful int32) {
	successful, unsuccessful = rollout.DefaultSuccessfulRunHistoryLimit, rollout.DefaultUnsuccessfulRunHistoryLimit
	if a := p.ro.Spec.Analysis; a != nil {
		successful = ptr.Deref(a.SuccessfulRunHistoryLimit, successful)
		unsuccessful = ptr.Deref(a.UnsuccessfulRunHistoryLimit, unsuccessful)
	}
	return successful, unsuccessful
}

// recordRuns writes the current runs into the status and records an Event
// when one changes phase, as Argo Rollouts does.
func (p *pass) recordRuns(current map[rollout.RunType]*v1alpha1.AnalysisRun) {
	for runType, ref := range p.runRefs() {
		run := current[runType]
		if run == nil {
			*ref = nil
			continue
		}
		previous := "NoPreviousStatus"
		if *ref != nil && (*ref).Name == run.Name {
			previous = string((*ref).Status)
		}
		next := &v1alpha1.RolloutAnalysisRunStatus{Name: run.Name, Status: run.Status.Phase, Message: run.Status.Message}
		if run.Status.Phase != "" && previous != string(run.Status.Phase) {
			eventType := corev1.EventTypeNormal
			if run.Status.Phase == v1alpha1.AnalysisPhaseFailed || run.Status.Phase == v1alpha1.AnalysisPhaseError {
				eventType = corev1.EventTypeWarning
			}
			p.eventOfType(eventType, "AnalysisRun"+string(run.Status.Phase), "%s Analysis Run '%s' Status New: '%s' Previous: '%s'", runType, run.Name, run.Status.Phase, previous)
		}
		*ref = next
	}
}

// asInvalidAnalysis reports whether err is a spec problem of an analysis.
func asInvalidAnalysis(err error) (string, bool) {
	var invalid *invalidAnalysisError
	if errors.As(err, &invalid) {
		return invalid.msg, true
	}
	return "", false
}
