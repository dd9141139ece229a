package rolloutcli

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
	"github.com/skiffcd/skiff/internal/rolloutops"
)

func canary(steps ...v1alpha1.CanaryStep) *v1alpha1.Rollout {
	return &v1alpha1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ns", Generation: 1},
		Spec: v1alpha1.RolloutSpec{
			Replicas: ptr.To[int32](5),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "demo"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "demo"}},
				Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1"}},
					Containers:     []corev1.Container{{Name: "web", Image: "nginx:1"}, {Name: "side", Image: "envoy:1"}},
				},
			},
			Strategy: v1alpha1.RolloutStrategy{Canary: &v1alpha1.CanaryStrategy{Steps: steps}},
		},
		Status: v1alpha1.RolloutStatus{ObservedGeneration: "1"},
	}
}

func blueGreen() *v1alpha1.Rollout {
	ro := canary()
	ro.Spec.Strategy = v1alpha1.RolloutStrategy{BlueGreen: &v1alpha1.BlueGreenStrategy{ActiveService: "active", PreviewService: "preview"}}
	return ro
}

var fourSteps = []v1alpha1.CanaryStep{
	{SetWeight: ptr.To[int32](20)}, {Pause: &v1alpha1.RolloutPause{}}, {SetWeight: ptr.To[int32](60)}, {Pause: &v1alpha1.RolloutPause{}},
}

func TestLint(t *testing.T) {
	const good = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: good}
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec: {containers: [{name: a, image: nginx}]}
  strategy:
    canary:
      steps: [{setWeight: 20}, {pause: {duration: 10s}}, {pause: {}}]
---
apiVersion: v1
kind: Service
metadata: {name: ignored}
`
	tests := map[string]struct {
		yaml  string
		count int
		want  []string // substrings of the problems, in order
	}{
		"a valid canary and a Service": {yaml: good, count: 1},
		"no selector, both strategies and an unparsable pause": {
			yaml: `kind: Rollout
metadata: {name: bad}
spec:
  template:
    metadata: {labels: {app: a}}
    spec: {containers: [{name: a, image: nginx}]}
  strategy:
    blueGreen: {activeService: web}
    canary:
      steps: [{pause: {duration: soon}}]
`,
			count: 1,
			want: []string{
				"document 1 (rollout bad): spec.selector: Required value",
				"spec.strategy: Invalid value: \"canary and blueGreen\": Multiple Strategies can not be listed",
				`spec.strategy.canary.steps[0].pause.duration: Invalid value: "soon"`,
			},
		},
		"an unknown field": {
			yaml:  "kind: Rollout\nmetadata: {name: typo}\nspec: {replica: 2}\n",
			count: 1,
			want:  []string{`document 1 (rollout typo): error unmarshaling JSON: while decoding JSON: json: unknown field "replica"`},
		},
		"a step with two actions and a weight out of range in the second document": {
			yaml:  good + "---\n" + strings.Replace(good[:strings.Index(good, "---")], "{setWeight: 20}", "{setWeight: 120, pause: {}}", 1),
			count: 2,
			want: []string{
				"document 3 (rollout good): spec.strategy.canary.steps[0]: Invalid value",
				"spec.strategy.canary.steps[0].setWeight: Invalid value: 120: must be between 0 and 100",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			count, problems := Lint([]byte(tc.yaml))
			if count != tc.count {
				t.Errorf("checked %d rollouts, want %d", count, tc.count)
			}
			if len(problems) != len(tc.want) {
				t.Fatalf("got %d problems %v, want %d", len(problems), problems, len(tc.want))
			}
			for i, p := range problems {
				if !strings.Contains(p.String(), tc.want[i]) {
					t.Errorf("problem %d: %q lacks %q", i, p.String(), tc.want[i])
				}
			}
		})
	}
}

func TestStepAndWeights(t *testing.T) {
	tests := map[string]struct {
		ro                  *v1alpha1.Rollout
		step, weight, roles string
	}{
		"a canary at its pause step": {
			ro: func() *v1alpha1.Rollout {
				ro := canary(fourSteps...)
				ro.Status.CurrentStepIndex, ro.Status.CurrentPodHash, ro.Status.StableRS = ptr.To[int32](1), "new", "old"
				return ro
			}(),
			step: "1/4", weight: "20", roles: "canary",
		},
		"an aborted canary weighs nothing": {
			ro: func() *v1alpha1.Rollout {
				ro := canary(fourSteps...)
				ro.Status.CurrentStepIndex, ro.Status.Abort, ro.Status.CurrentPodHash = ptr.To[int32](3), true, "new"
				return ro
			}(),
			step: "3/4", weight: "0", roles: "canary",
		},
		"a blue-green rollout has no step nor weight": {
			ro: func() *v1alpha1.Rollout {
				ro := blueGreen()
				ro.Status.BlueGreen.PreviewSelector = "new"
				return ro
			}(),
			step: "-", weight: "-", roles: "preview",
		},
		"a new blue-green revision without a preview Service is the preview": {
			ro: func() *v1alpha1.Rollout {
				ro := blueGreen()
				ro.Status.CurrentPodHash, ro.Status.StableRS, ro.Status.BlueGreen.ActiveSelector = "new", "old", "old"
				return ro
			}(),
			step: "-", weight: "-", roles: "preview",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{rollout.PodTemplateHashLabel: "new"}}}
			if got := Step(tc.ro); got != tc.step {
				t.Errorf("step %q, want %q", got, tc.step)
			}
			if got := SetWeight(tc.ro); got != tc.weight {
				t.Errorf("weight %q, want %q", got, tc.weight)
			}
			if got := ReplicaSetRoles(tc.ro, rs); got != tc.roles {
				t.Errorf("roles %q, want %q", got, tc.roles)
			}
		})
	}
}

func TestWriteTreeAndList(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-90 * time.Second))
	ro := canary(fourSteps...)
	ro.CreationTimestamp = created
	ro.Status = v1alpha1.RolloutStatus{
		ObservedGeneration: "1", CurrentStepIndex: ptr.To[int32](1), CurrentPodHash: "new", StableRS: "old",
		PauseConditions: []v1alpha1.PauseCondition{{Reason: v1alpha1.PauseReasonCanaryPauseStep}},
		Replicas:        5, UpdatedReplicas: 1, ReadyReplicas: 5, AvailableReplicas: 5,
	}
	rs := func(hash, image string, revision string, replicas int32) appsv1.ReplicaSet {
		return appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "demo-" + hash, UID: types.UID(hash), CreationTimestamp: created,
				Labels: map[string]string{rollout.PodTemplateHashLabel: hash}, Annotations: map[string]string{v1alpha1.AnnotationRolloutRevision: revision}},
			Spec:   appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}}}},
			Status: appsv1.ReplicaSetStatus{Replicas: replicas, AvailableReplicas: replicas},
		}
	}
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-new-abcde", CreationTimestamp: created},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Ready: true, RestartCount: 2}}},
	}
	run := v1alpha1.AnalysisRun{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-new-1", CreationTimestamp: created, Labels: map[string]string{rollout.PodTemplateHashLabel: "new"}},
		Status: v1alpha1.AnalysisRunStatus{Phase: v1alpha1.AnalysisPhaseSuccessful, MetricResults: []v1alpha1.MetricResult{
			{Name: "a", Phase: v1alpha1.AnalysisPhaseSuccessful}, {Name: "b", Phase: v1alpha1.AnalysisPhaseFailed}}},
	}
	info := &rolloutops.Info{
		Rollout:      ro,
		ReplicaSets:  []appsv1.ReplicaSet{rs("new", "nginx:2", "2", 1), rs("old", "nginx:1", "1", 4)},
		Pods:         map[types.UID][]corev1.Pod{"new": {pod}},
		AnalysisRuns: []v1alpha1.AnalysisRun{run},
	}
	var buf bytes.Buffer
	if err := WriteTree(&buf, info, now); err != nil {
		t.Fatal(err)
	}
	want := `Name:            demo
Namespace:       ns
Status:          Paused
Message:         CanaryPauseStep
Strategy:        Canary
  Step:          1/4
  SetWeight:     20
  ActualWeight:  20
Images:          nginx:2 (canary)
                 nginx:1 (stable)
Replicas:
  Desired:       5
  Current:       5
  Updated:       1
  Ready:         5
  Available:     5

NAME                     KIND         STATUS      AGE  INFO
demo                     Rollout      Paused      90s
├──# revision:2
│  ├──demo-new           ReplicaSet   Healthy     90s  canary
│  │  └──demo-new-abcde  Pod          Running     90s  ready:1/1,restarts:2
│  └──demo-new-1         AnalysisRun  Successful  90s  metrics:2 ✔ 1,✖ 1,? 0,⚠ 0
└──# revision:1
   └──demo-old           ReplicaSet   Healthy     90s  stable
`
	if buf.String() != want {
		t.Errorf("tree:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := WriteList(&buf, []v1alpha1.Rollout{*ro}); err != nil {
		t.Fatal(err)
	}
	wantList := `NAME  STRATEGY  STATUS  STEP  SET-WEIGHT  READY  DESIRED  UP-TO-DATE  AVAILABLE
demo  Canary    Paused  1/4   20          5/5    5        1           5
`
	if buf.String() != wantList {
		t.Errorf("list:\n%s\nwant:\n%s", buf.String(), wantList)
	}
}

func TestStatusPrinter(t *testing.T) {
	tests := map[string]struct {
		phases   []v1alpha1.RolloutCondition
		paused   bool
		wantDone bool
		wantErr  string
		wantOut  string
	}{
		"a paused rollout is not done": {paused: true, wantOut: "Paused - manually paused\n"},
		"an aborted rollout is Degraded": {
			phases:   []v1alpha1.RolloutCondition{{Type: v1alpha1.RolloutProgressing, Reason: string(rollout.ReasonRolloutAborted), Message: "aborted"}},
			wantDone: true, wantErr: "is Degraded: RolloutAborted: aborted", wantOut: "Degraded - RolloutAborted: aborted\n",
		},
		"a complete rollout is Healthy": {wantDone: true, wantOut: "Healthy\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ro := blueGreen()
			ro.Spec.Replicas = ptr.To[int32](0)
			ro.Spec.Paused = tc.paused
			ro.Status.Conditions = tc.phases
			ro.Status.BlueGreen.ActiveSelector, ro.Status.CurrentPodHash, ro.Status.StableRS = "a", "a", "a"
			var out bytes.Buffer
			p := &StatusPrinter{Out: &out}
			done, err := p.See(&rolloutops.Info{Rollout: ro})
			if _, err2 := p.See(&rolloutops.Info{Rollout: ro}); (err2 == nil) != (err == nil) {
				t.Errorf("a second look changed the error: %v then %v", err, err2)
			}
			if done != tc.wantDone || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("got done %v err %v, want %v %q", done, err, tc.wantDone, tc.wantErr)
			}
			if out.String() != tc.wantOut {
				t.Errorf("printed %q, want %q (once)", out.String(), tc.wantOut)
			}
		})
	}
}

func TestTreePrinter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		tty       bool
		pauseLast bool // pause the rollout before the third look
		wantTrees int
		wantEsc   bool
	}{
		"off a terminal a tree that only ages is printed once": {wantTrees: 1},
		"off a terminal a change prints the tree again":        {pauseLast: true, wantTrees: 2},
		"on a terminal every look redraws in place":            {tty: true, wantTrees: 3, wantEsc: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ro := blueGreen()
			ro.CreationTimestamp = metav1.NewTime(now.Add(-time.Minute))
			var out bytes.Buffer
			look := 0
			p := &TreePrinter{Out: &out, TTY: tc.tty, Now: func() time.Time { return now.Add(time.Duration(look) * time.Hour) }}
			for look = 0; look < 3; look++ {
				if look == 2 && tc.pauseLast {
					ro.Spec.Paused = true
				}
				if done, err := p.See(&rolloutops.Info{Rollout: ro}); done || err != nil {
					t.Fatalf("look %d: done %v err %v", look, done, err)
				}
			}
			if n := strings.Count(out.String(), "Name:"); n != tc.wantTrees {
				t.Errorf("printed %d trees, want %d:\n%s", n, tc.wantTrees, out.String())
			}
			if got := strings.Contains(out.String(), "\x1b["); got != tc.wantEsc {
				t.Errorf("escape sequences %v, want %v", got, tc.wantEsc)
			}
		})
	}
}

func TestParseImages(t *testing.T) {
	tests := map[string]struct {
		pairs   []string
		want    []rolloutops.ContainerImage
		wantErr string
	}{
		"pairs in the order given": {pairs: []string{"*=x:1", "web=nginx:2"},
			want: []rolloutops.ContainerImage{{Container: "*", Image: "x:1"}, {Container: "web", Image: "nginx:2"}}},
		"an image keeps what follows the first =": {pairs: []string{"web=a=b"}, want: []rolloutops.ContainerImage{{Container: "web", Image: "a=b"}}},
		"no pair at all":             {wantErr: "want at least one CONTAINER=IMAGE"},
		"a pair without an =":        {pairs: []string{"nginx:2"}, wantErr: `"nginx:2": want CONTAINER=IMAGE`},
		"a pair without an image":    {pairs: []string{"web="}, wantErr: `"web=": want CONTAINER=IMAGE`},
		"a pair without a container": {pairs: []string{"=nginx:2"}, wantErr: `"=nginx:2": want CONTAINER=IMAGE`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseImages(tc.pairs)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("got %v, %v; want the error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
