package rolloutops

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// canary is testdata/canary.yaml.
func canary() *v1alpha1.Rollout {
	data, err := os.ReadFile("testdata/canary.yaml")
	if err != nil {
		panic(err)
	}
	ro := &v1alpha1.Rollout{}
	if err := yaml.UnmarshalStrict(data, ro); err != nil {
		panic(err)
	}
	return ro
}

// blueGreen is canary as a blue-green rollout with a preview Service.
func blueGreen() *v1alpha1.Rollout {
	ro := canary()
	ro.Spec.Strategy = v1alpha1.RolloutStrategy{BlueGreen: &v1alpha1.BlueGreenStrategy{ActiveService: "active", PreviewService: "preview"}}
	return ro
}

func TestPromotePatches(t *testing.T) {
	paused := []v1alpha1.PauseCondition{{Reason: v1alpha1.PauseReasonCanaryPauseStep}}
	tests := map[string]struct {
		ro   func() *v1alpha1.Rollout
		full bool
		want []Patch
	}{
		"a canary paused at a step has its pause conditions cleared": {
			ro: func() *v1alpha1.Rollout {
				ro := canary()
				ro.Status.CurrentStepIndex, ro.Status.PauseConditions = ptr.To[int32](1), paused
				return ro
			},
			want: []Patch{statusPatch(`{"status":{"pauseConditions":null}}`)},
		},
		"a canary that is not paused moves to the next step": {
			ro: func() *v1alpha1.Rollout {
				ro := canary()
				ro.Status.CurrentStepIndex = ptr.To[int32](2)
				return ro
			},
			want: []Patch{statusPatch(`{"status":{"pauseConditions":null,"currentStepIndex":3}}`)},
		},
		"a canary without a step index counts from step 0": {
			ro:   func() *v1alpha1.Rollout { return canary() },
			want: []Patch{statusPatch(`{"status":{"pauseConditions":null,"currentStepIndex":1}}`)},
		},
		"a canary past its last step stays there": {
			ro: func() *v1alpha1.Rollout {
				ro := canary()
				ro.Status.CurrentStepIndex = ptr.To[int32](4)
				return ro
			},
			want: []Patch{statusPatch(`{"status":{"pauseConditions":null,"currentStepIndex":4}}`)},
		},
		"a manually paused blue-green rollout is unpaused in its spec, after its status": {
			ro: func() *v1alpha1.Rollout {
				ro := blueGreen()
				ro.Spec.Paused = true
				ro.Status.PauseConditions = []v1alpha1.PauseCondition{{Reason: v1alpha1.PauseReasonBlueGreenPause}}
				return ro
			},
			want: []Patch{statusPatch(`{"status":{"pauseConditions":null}}`), specPatch(`{"spec":{"paused":false}}`)},
		},
		"a blue-green rollout that is not paused needs nothing": {
			ro: blueGreen,
		},
		"full promotes an update in progress": {
			ro: func() *v1alpha1.Rollout {
				ro := canary()
				ro.Status.CurrentPodHash, ro.Status.StableRS = "new", "old"
				return ro
			},
			full: true,
			want: []Patch{statusPatch(`{"status":{"promoteFull":true}}`)},
		},
		"full on a stable rollout needs nothing": {
			ro: func() *v1alpha1.Rollout {
				ro := canary()
				ro.Status.CurrentPodHash, ro.Status.StableRS = "same", "same"
				return ro
			},
			full: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := PromotePatches(tc.ro(), tc.full)
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("patch %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestSimplePatches(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	tests := map[string]struct {
		got, want Patch
	}{
		"abort sets status.abort":      {got: AbortPatch(), want: statusPatch(`{"status":{"abort":true}}`)},
		"retry clears status.abort":    {got: RetryPatch(), want: statusPatch(`{"status":{"abort":false}}`)},
		"pause sets spec.paused":       {got: PausePatch(), want: specPatch(`{"spec":{"paused":true}}`)},
		"restart sets restartAt (UTC)": {got: RestartPatch(at), want: specPatch(`{"spec":{"restartAt":"2026-01-02T02:04:05Z"}}`)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %+v, want %+v", tc.got, tc.want)
			}
		})
	}
}

func TestSetImagePatch(t *testing.T) {
	webPatch := func(image string) string {
		return `[{"op":"test","path":"/spec/template/spec/containers/0/name","value":"web"},{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"` + image + `"}]`
	}
	tests := map[string]struct {
		images      []ContainerImage
		workloadRef bool
		want        string
		wantErr     string
	}{
		"one container": {
			images: []ContainerImage{{"web", "nginx:2"}},
			want:   webPatch("nginx:2"),
		},
		"an init container": {
			images: []ContainerImage{{"init", "busybox:2"}},
			want:   `[{"op":"test","path":"/spec/template/spec/initContainers/0/name","value":"init"},{"op":"replace","path":"/spec/template/spec/initContainers/0/image","value":"busybox:2"}]`,
		},
		"a star sets every container, a name overrides it": {
			images: []ContainerImage{{"*", "x:1"}, {"side", "envoy:2"}},
			want: `[{"op":"test","path":"/spec/template/spec/containers/0/name","value":"web"},{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"x:1"},` +
				`{"op":"test","path":"/spec/template/spec/containers/1/name","value":"side"},{"op":"replace","path":"/spec/template/spec/containers/1/image","value":"envoy:2"},` +
				`{"op":"test","path":"/spec/template/spec/initContainers/0/name","value":"init"},{"op":"replace","path":"/spec/template/spec/initContainers/0/image","value":"x:1"}]`,
		},
		"of two images for one container the later wins": {
			images: []ContainerImage{{"web", "nginx:2"}, {"web", "nginx:3"}},
			want:   webPatch("nginx:3"),
		},
		"an unknown container":      {images: []ContainerImage{{"db", "postgres"}}, wantErr: `no container named "db"`},
		"no image at all":           {wantErr: "no image to set on rollout demo"},
		"an image without a name":   {images: []ContainerImage{{"", "nginx:2"}}, wantErr: `"=nginx:2": want a container name and an image`},
		"a container without image": {images: []ContainerImage{{"web", ""}}, wantErr: `"web=": want a container name and an image`},
		"a workloadRef rollout points at its Deployment": {
			images: []ContainerImage{{"web", "nginx:2"}}, workloadRef: true,
			wantErr: "takes its pod template from Deployment web (workloadRef): set the image there, e.g. kubectl set image deployment/web web=nginx:2",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ro := canary()
			if tc.workloadRef {
				ro.Spec.WorkloadRef = &v1alpha1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
			}
			got, err := SetImagePatch(ro, tc.images)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("got %v, want an ErrInvalid with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Type != types.JSONPatchType || got.Status || got.Data != tc.want {
				t.Errorf("got %+v\nwant %s", got, tc.want)
			}
		})
	}
}

// replicaSet is the ReplicaSet the controller would make of template at
// revision, with the defaults the API server adds to a pod template.
func replicaSet(t *testing.T, template corev1.PodTemplateSpec, revision string) appsv1.ReplicaSet {
	t.Helper()
	h := rollout.PodTemplateHash(&template, nil)
	stored := *template.DeepCopy()
	stored.Labels = map[string]string{"app": "demo", rollout.PodTemplateHashLabel: h}
	stored.Spec.RestartPolicy, stored.Spec.DNSPolicy, stored.Spec.SchedulerName = corev1.RestartPolicyAlways, corev1.DNSClusterFirst, corev1.DefaultSchedulerName
	stored.Spec.SecurityContext = &corev1.PodSecurityContext{}
	stored.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
	for i := range stored.Spec.Containers {
		c := &stored.Spec.Containers[i]
		c.TerminationMessagePath, c.TerminationMessagePolicy, c.ImagePullPolicy = "/dev/termination-log", corev1.TerminationMessageReadFile, corev1.PullIfNotPresent
	}
	return appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-" + h, Labels: map[string]string{rollout.PodTemplateHashLabel: h},
			Annotations: map[string]string{v1alpha1.AnnotationRolloutRevision: revision}},
		Spec: appsv1.ReplicaSetSpec{Template: stored},
	}
}

func TestUndoPatch(t *testing.T) {
	ro := canary()
	v1 := ro.Spec.Template
	v2 := *v1.DeepCopy()
	v2.Spec.Containers[0].Image = "nginx:2"
	v3 := *v1.DeepCopy()
	v3.Spec.Containers[0].Image = "nginx:3"
	v3.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent // set by the user: a default kept
	rss := []appsv1.ReplicaSet{replicaSet(t, v3, "3"), replicaSet(t, v2, "2"), replicaSet(t, v1, "1")}
	tests := map[string]struct {
		current    corev1.PodTemplateSpec
		rss        []appsv1.ReplicaSet // nil: revisions 3, 2 and 1
		toRevision int64
		want       *corev1.PodTemplateSpec
		skipped    string
		wantErr    string
	}{
		"no revision goes back to the one before the newest": {current: v3, want: &v2},
		"a revision is restored by number":                   {current: v3, toRevision: 1, want: &v1},
		"a template that set a default itself keeps it":      {current: v1, toRevision: 3, want: &v3},
		"the current template is not restored again":         {current: v2, toRevision: 2, skipped: "already matches revision 2"},
		"a revision that is not there":                       {current: v3, toRevision: 7, wantErr: "no revision 7"},
		"a rollout with one revision has no previous one":    {current: v1, rss: rss[2:], wantErr: "no previous revision"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ro := canary()
			ro.Spec.Template = tc.current
			revisions := rss
			if tc.rss != nil {
				revisions = tc.rss
			}
			p, skipped, err := UndoPatch(ro, revisions, tc.toRevision)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("got %v, want an ErrInvalid with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.skipped != "" {
				if p != nil || !strings.Contains(skipped, tc.skipped) {
					t.Fatalf("got %+v %q, want skipped with %q", p, skipped, tc.skipped)
				}
				return
			}
			var ops []struct {
				Op, Path string
				Value    corev1.PodTemplateSpec
			}
			if err := json.Unmarshal([]byte(p.Data), &ops); err != nil || len(ops) != 1 || ops[0].Path != "/spec/template" {
				t.Fatalf("patch %s: %v", p.Data, err)
			}
			if got, want := rollout.PodTemplateHash(&ops[0].Value, nil), rollout.PodTemplateHash(tc.want, nil); got != want {
				t.Errorf("restored template hashes to %s, want %s (the revision's ReplicaSet):\n%s", got, want, p.Data)
			}
		})
	}
}
