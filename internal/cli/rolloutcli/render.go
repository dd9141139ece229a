package rolloutcli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
	"github.com/skiffcd/skiff/internal/rolloutops"
)

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// Strategy names the strategy of ro as the plugin does.
func Strategy(ro *v1alpha1.Rollout) string {
	switch {
	case ro.Spec.Strategy.BlueGreen != nil:
		return "BlueGreen"
	case ro.Spec.Strategy.Canary != nil:
		return "Canary"
	}
	return "-"
}

// Status is the phase and message of ro, computed from its spec and status
// as the controller computes them, so a spec change the controller has not
// seen yet shows as Progressing.
func Status(ro *v1alpha1.Rollout) (v1alpha1.RolloutPhase, string) {
	return rollout.Phase(ro)
}

// Step is "N/M" for a canary with steps, "-" otherwise.
func Step(ro *v1alpha1.Rollout) string {
	c := ro.Spec.Strategy.Canary
	if c == nil || len(c.Steps) == 0 {
		return "-"
	}
	index := int32(0)
	if ro.Status.CurrentStepIndex != nil {
		index = *ro.Status.CurrentStepIndex
	}
	return fmt.Sprintf("%d/%d", index, len(c.Steps))
}

// SetWeight is the weight the current canary step asks for, "-" for a
// blue-green rollout.
func SetWeight(ro *v1alpha1.Rollout) string {
	c := ro.Spec.Strategy.Canary
	if c == nil {
		return "-"
	}
	return fmt.Sprint(rollout.DesiredWeight(c.Steps, ro.Status.CurrentStepIndex, ro.Status.Abort))
}

// ActualWeight is the canary's share of traffic: the weight set on the
// traffic router, or else the canary's share of the available pods.
func ActualWeight(info *rolloutops.Info) string {
	ro := info.Rollout
	if ro.Spec.Strategy.Canary == nil {
		return "-"
	}
	if w := ro.Status.Canary.Weights; w != nil {
		return fmt.Sprint(w.Canary.Weight)
	}
	var canary, total int32
	for _, rs := range info.ReplicaSets {
		total += rs.Status.AvailableReplicas
		if hash(&rs) == ro.Status.CurrentPodHash {
			canary += rs.Status.AvailableReplicas
		}
	}
	if total == 0 {
		return "0"
	}
	return fmt.Sprint(canary * 100 / total)
}

func hash(rs *appsv1.ReplicaSet) string {
	return rs.Labels[rollout.PodTemplateHashLabel]
}

// ReplicaSetRoles names what a ReplicaSet is to its Rollout: stable,
// canary, active, preview (comma separated), or "".
func ReplicaSetRoles(ro *v1alpha1.Rollout, rs *appsv1.ReplicaSet) string {
	h := hash(rs)
	if h == "" {
		return ""
	}
	var roles []string
	st := &ro.Status
	if h == st.StableRS {
		roles = append(roles, "stable")
	}
	if ro.Spec.Strategy.Canary != nil && h == st.CurrentPodHash && h != st.StableRS {
		roles = append(roles, "canary")
	}
	if ro.Spec.Strategy.BlueGreen != nil {
		if h == st.BlueGreen.ActiveSelector {
			roles = append(roles, "active")
		}
		// The new revision is the preview one, with or without a preview
		// Service, until it is active.
		if (h == st.BlueGreen.PreviewSelector || h == st.CurrentPodHash) && h != st.BlueGreen.ActiveSelector {
			roles = append(roles, "preview")
		}
	}
	return strings.Join(roles, ",")
}

// WriteList prints rollouts as `kubectl argo rollouts list rollouts` does.
func WriteList(w io.Writer, rollouts []v1alpha1.Rollout) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tSTRATEGY\tSTATUS\tSTEP\tSET-WEIGHT\tREADY\tDESIRED\tUP-TO-DATE\tAVAILABLE")
	for i := range rollouts {
		ro := &rollouts[i]
		phase, _ := Status(ro)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d\t%d\t%d\t%d\n", ro.Name, Strategy(ro), phase, Step(ro), SetWeight(ro),
			ro.Status.ReadyReplicas, ro.Status.Replicas, rollout.Replicas(ro), ro.Status.UpdatedReplicas, ro.Status.AvailableReplicas)
	}
	return tw.Flush()
}

// WriteStatus prints "PHASE - MESSAGE", or the phase alone.
func WriteStatus(w io.Writer, ro *v1alpha1.Rollout) error {
	phase, message := Status(ro)
	if message == "" {
		_, err := fmt.Fprintln(w, phase)
		return err
	}
	_, err := fmt.Fprintf(w, "%s - %s\n", phase, message)
	return err
}

// WriteTree prints info as `kubectl argo rollouts get rollout` does: a
// summary, then the Rollout with its revisions, their ReplicaSets, pods
// and AnalysisRuns; ages are counted to now.
func WriteTree(w io.Writer, info *rolloutops.Info, now time.Time) error {
	var buf bytes.Buffer
	if err := writeTree(&buf, info, now); err != nil {
		return err
	}
	// The table pads empty cells; drop the spaces that end lines.
	lines := strings.SplitAfter(buf.String(), "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, "\n") {
			lines[i] = strings.TrimRight(l, " \n") + "\n"
		}
	}
	_, err := io.WriteString(w, strings.Join(lines, ""))
	return err
}

func writeTree(w io.Writer, info *rolloutops.Info, now time.Time) error {
	ro := info.Rollout
	phase, message := Status(ro)
	tw := newTable(w)
	field := func(name, value string) { fmt.Fprintf(tw, "%s:\t%s\n", name, value) }
	field("Name", ro.Name)
	field("Namespace", ro.Namespace)
	field("Status", string(phase))
	if message != "" {
		field("Message", message)
	}
	field("Strategy", Strategy(ro))
	if ro.Spec.Strategy.Canary != nil {
		if len(ro.Spec.Strategy.Canary.Steps) > 0 {
			field("  Step", Step(ro))
		}
		field("  SetWeight", SetWeight(ro))
		field("  ActualWeight", ActualWeight(info))
	}
	for i, image := range images(info) {
		name := "Images"
		if i > 0 {
			name = ""
		}
		fmt.Fprintf(tw, "%s\t%s\n", colon(name), image)
	}
	fmt.Fprintln(tw, "Replicas:\t")
	field("  Desired", fmt.Sprint(rollout.Replicas(ro)))
	field("  Current", fmt.Sprint(ro.Status.Replicas))
	field("  Updated", fmt.Sprint(ro.Status.UpdatedReplicas))
	field("  Ready", fmt.Sprint(ro.Status.ReadyReplicas))
	field("  Available", fmt.Sprint(ro.Status.AvailableReplicas))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "NAME\tKIND\tSTATUS\tAGE\tINFO")
	row := func(prefix, name, kind, status string, created metav1.Time, info string) {
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\n", prefix, name, kind, status, age(created, now), info)
	}
	row("", ro.Name, "Rollout", string(phase), ro.CreationTimestamp, "")
	type group struct {
		revision int64
		rs       *appsv1.ReplicaSet
		runs     []v1alpha1.AnalysisRun
	}
	var groups []group
	byHash := map[string]int{}
	for i := range info.ReplicaSets {
		rs := &info.ReplicaSets[i]
		byHash[hash(rs)] = len(groups)
		groups = append(groups, group{revision: v1alpha1.RolloutRevision(rs), rs: rs})
	}
	var loose []v1alpha1.AnalysisRun
	for _, run := range info.AnalysisRuns {
		if i, ok := byHash[run.Labels[rollout.PodTemplateHashLabel]]; ok && run.Labels[rollout.PodTemplateHashLabel] != "" {
			groups[i].runs = append(groups[i].runs, run)
			continue
		}
		loose = append(loose, run)
	}
	for gi, g := range groups {
		last := gi == len(groups)-1 && len(loose) == 0
		fmt.Fprintf(tw, "%s# revision:%d\t\t\t\t\n", branch(last), g.revision)
		indent := child(last)
		pods := info.Pods[g.rs.UID]
		rsLast := len(g.runs) == 0
		row(indent+branch(rsLast), g.rs.Name, "ReplicaSet", replicaSetStatus(g.rs), g.rs.CreationTimestamp, ReplicaSetRoles(ro, g.rs))
		podIndent := indent + child(rsLast)
		for pi := range pods {
			pod := &pods[pi]
			row(podIndent+branch(pi == len(pods)-1), pod.Name, "Pod", PodStatus(pod), pod.CreationTimestamp, podInfo(pod))
		}
		for ri := range g.runs {
			run := &g.runs[ri]
			row(indent+branch(ri == len(g.runs)-1), run.Name, "AnalysisRun", string(firstPhase(run.Status.Phase)), run.CreationTimestamp, RunSummary(run))
		}
	}
	for ri := range loose {
		run := &loose[ri]
		row(branch(ri == len(loose)-1), run.Name, "AnalysisRun", string(firstPhase(run.Status.Phase)), run.CreationTimestamp, RunSummary(run))
	}
	return tw.Flush()
}

func colon(name string) string {
	if name == "" {
		return ""
	}
	return name + ":"
}

func branch(last bool) string {
	if last {
		return "└──"
	}
	return "├──"
}

func child(last bool) string {
	if last {
		return "   "
	}
	return "│  "
}

func firstPhase(p v1alpha1.AnalysisPhase) v1alpha1.AnalysisPhase {
	if p == "" {
		return v1alpha1.AnalysisPhasePending
	}
	return p
}

func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// images lists the images of the ReplicaSets that run pods or have a role,
// each with the roles of its ReplicaSets: "nginx:1.25 (stable, active)".
func images(info *rolloutops.Info) []string {
	var order []string
	roles := map[string][]string{}
	for i := range info.ReplicaSets {
		rs := &info.ReplicaSets[i]
		role := ReplicaSetRoles(info.Rollout, rs)
		if role == "" && ptr.Deref(rs.Spec.Replicas, 0) == 0 {
			continue
		}
		for _, c := range rs.Spec.Template.Spec.Containers {
			if _, ok := roles[c.Image]; !ok {
				order = append(order, c.Image)
				roles[c.Image] = nil
			}
			if role != "" {
				roles[c.Image] = append(roles[c.Image], strings.Split(role, ",")...)
			}
		}
	}
	out := make([]string, len(order))
	for i, image := range order {
		out[i] = image
		if r := roles[image]; len(r) > 0 {
			out[i] += " (" + strings.Join(r, ", ") + ")"
		}
	}
	return out
}

// replicaSetStatus is ScaledDown, Progressing or Healthy.
func replicaSetStatus(rs *appsv1.ReplicaSet) string {
	want := ptr.Deref(rs.Spec.Replicas, 1)
	switch {
	case want == 0 && rs.Status.Replicas == 0:
		return "ScaledDown"
	case rs.Status.AvailableReplicas < want || rs.Status.Replicas != want:
		return "Progressing"
	}
	return "Healthy"
}

// PodStatus is what kubectl shows as a pod's STATUS: Terminating, the
// reason a container waits or terminated, or the phase.
func PodStatus(pod *corev1.Pod) string {
	if pod.DeletionTimestamp != nil {
		return "Terminating"
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
			return cs.State.Waiting.Reason
		}
		if cs.State.Terminated != nil && cs.State.Terminated.Reason != "" {
			return cs.State.Terminated.Reason
		}
	}
	if pod.Status.Reason != "" {
		return pod.Status.Reason
	}
	if pod.Status.Phase == "" {
		return string(corev1.PodPending)
	}
	return string(pod.Status.Phase)
}

// podInfo is "ready:R/C,restarts:N".
func podInfo(pod *corev1.Pod) string {
	ready, restarts := 0, int32(0)
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Ready {
			ready++
		}
		restarts += cs.RestartCount
	}
	return fmt.Sprintf("ready:%d/%d,restarts:%d", ready, len(pod.Spec.Containers), restarts)
}

// RunSummary counts the metrics of an AnalysisRun by result:
// "✔ 2,✖ 1,? 0,⚠ 0" (successful, failed, inconclusive, error).
func RunSummary(run *v1alpha1.AnalysisRun) string {
	s := run.Status.RunSummary
	if s.Count == 0 {
		s = v1alpha1.RunSummary{Count: int32(len(run.Status.MetricResults))}
		for _, m := range run.Status.MetricResults {
			switch m.Phase {
			case v1alpha1.AnalysisPhaseSuccessful:
				s.Successful++
			case v1alpha1.AnalysisPhaseFailed:
				s.Failed++
			case v1alpha1.AnalysisPhaseInconclusive:
				s.Inconclusive++
			case v1alpha1.AnalysisPhaseError:
				s.Error++
			}
		}
	}
	return fmt.Sprintf("metrics:%d ✔ %d,✖ %d,? %d,⚠ %d", s.Count, s.Successful, s.Failed, s.Inconclusive, s.Error)
}
