package resourceactions

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/internal/opserr"
)

// fakeCustom defines actions for one kind, as argocd-cm would.
type fakeCustom struct {
	kind    string
	actions []Action
	merge   bool
	run     func(obj *unstructured.Unstructured, params []Param) ([]Impacted, error)
}

func (f fakeCustom) Discover(obj *unstructured.Unstructured) ([]Action, bool, bool, error) {
	if obj.GetKind() != f.kind {
		return nil, false, false, nil
	}
	return f.actions, f.merge, true, nil
}

func (f fakeCustom) Run(obj *unstructured.Unstructured, _ string, params []Param) ([]Impacted, error) {
	return f.run(obj, params)
}

func TestCustomActions(t *testing.T) {
	setLabel := func(obj *unstructured.Unstructured, _ []Param) ([]Impacted, error) {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["touched"] = "yes"
		obj.SetLabels(labels)
		return []Impacted{{Operation: OpPatch, Object: obj}}, nil
	}
	tests := map[string]struct {
		custom   fakeCustom
		manifest string
		action   string
		list     []string
		want     map[string]any
		patches  []string // the patches sent, status ones marked
		err      string
	}{
		"a custom set replaces the built-in actions of its kind": {
			custom:   fakeCustom{kind: "Deployment", actions: []Action{{Name: "touch"}}, run: setLabel},
			manifest: deployment, action: "touch", list: []string{"touch"},
			want: map[string]any{"metadata.labels.touched": "yes"}, patches: []string{`{"metadata":{"labels":{"touched":"yes"}}}`},
		},
		"a merged custom set adds to the built-in actions and wins on a name": {
			custom:   fakeCustom{kind: "Deployment", actions: []Action{{Name: "touch"}, {Name: "restart", DisplayName: "Touch instead"}}, merge: true, run: setLabel},
			manifest: deployment, action: "restart", list: []string{"pause", "restart", "resume (disabled)", "scale replicas=3", "touch"},
			want: map[string]any{"metadata.labels.touched": "yes"}, patches: []string{`{"metadata":{"labels":{"touched":"yes"}}}`},
		},
		"a custom set of another kind leaves the built-in ones": {
			custom:   fakeCustom{kind: "Widget", actions: []Action{{Name: "touch"}}, run: setLabel},
			manifest: daemonSet, action: "restart", list: []string{"restart"},
			patches: []string{`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-12-07T14:30:05Z"}}}}}`},
		},
		"a change of status goes to the status subresource": {
			custom: fakeCustom{kind: "Rollout", actions: []Action{{Name: "skip"}}, run: func(obj *unstructured.Unstructured, _ []Param) ([]Impacted, error) {
				_ = unstructured.SetNestedField(obj.Object, int64(2), "status", "currentStepIndex")
				return []Impacted{{Operation: OpPatch, Object: obj}}, nil
			}},
			manifest: updatingRollout, action: "skip", list: []string{"skip"},
			want: map[string]any{"status.currentStepIndex": int64(2)}, patches: []string{`status {"status":{"currentStepIndex":2}}`},
		},
		"a created object is created": {
			custom: fakeCustom{kind: "CronJob", actions: []Action{{Name: "make"}}, run: func(obj *unstructured.Unstructured, _ []Param) ([]Impacted, error) {
				job := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "x"}}}
				return []Impacted{{Operation: OpCreate, Object: job}}, nil
			}},
			manifest: cronJob, action: "make", list: []string{"make"}, patches: []string{"create Job x"},
		},
		"a script's error is the action's, invalid": {
			custom: fakeCustom{kind: "Deployment", actions: []Action{{Name: "boom"}}, run: func(*unstructured.Unstructured, []Param) ([]Impacted, error) {
				return nil, errors.New("attempt to index a nil value")
			}},
			manifest: deployment, action: "boom", list: []string{"boom"}, err: "running action boom on Deployment web: attempt to index a nil value",
		},
		"patching another object is refused": {
			custom: fakeCustom{kind: "Deployment", actions: []Action{{Name: "other"}}, run: func(obj *unstructured.Unstructured, _ []Param) ([]Impacted, error) {
				obj.SetName("someone-else")
				return []Impacted{{Operation: OpPatch, Object: obj}}, nil
			}},
			manifest: deployment, action: "other", list: []string{"other"}, err: "not the object it ran on",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cat := Catalog{Custom: tc.custom}
			obj := object(t, tc.manifest)
			actions, err := cat.List(obj)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(actions); !reflect.DeepEqual(got, tc.list) {
				t.Errorf("actions %q, want %q", got, tc.list)
			}
			changes, err := cat.Plan(obj, tc.action, nil, now)
			if tc.err != "" {
				if !errors.Is(err, opserr.ErrInvalid) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want an invalid one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var sent []string
			for _, c := range changes {
				switch {
				case c.Create != nil:
					sent = append(sent, "create "+c.Create.GetKind()+" "+c.Create.GetName())
				case c.Patch.Status:
					sent = append(sent, "status "+c.Patch.Data)
				default:
					sent = append(sent, c.Patch.Data)
				}
			}
			if !reflect.DeepEqual(sent, tc.patches) {
				t.Errorf("writes %q, want %q", sent, tc.patches)
			}
			got, _, err := Apply(obj, changes)
			if err != nil {
				t.Fatal(err)
			}
			checkFields(t, got, tc.want)
		})
	}
}
