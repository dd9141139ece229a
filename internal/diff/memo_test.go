package diff

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/knowntypes"
)

func TestFingerprintTellsInputsApart(t *testing.T) {
	type inputs struct {
		desired, live map[string]any
		opts          Options
	}
	base := func() map[string]any {
		return map[string]any{
			"kind": "ConfigMap",
			"data": map[string]any{"a": "1", "b": "2"},
			"list": []any{int64(1), "x", nil, true, 1.5},
		}
	}
	changed := func(change func(o map[string]any)) map[string]any {
		o := base()
		change(o)
		return o
	}
	same := inputs{desired: base(), live: base()}
	tests := map[string]struct {
		a, b inputs
		same bool
	}{
		"the same content built again is the same fingerprint": {
			a: same, b: inputs{desired: base(), live: base()}, same: true,
		},
		"a changed value differs": {
			a: same, b: inputs{desired: changed(func(o map[string]any) { o["data"].(map[string]any)["b"] = "3" }), live: base()},
		},
		"a number and its string differ": {
			a: same, b: inputs{desired: changed(func(o map[string]any) { o["list"].([]any)[0] = "1" }), live: base()},
		},
		"an integer and the equal float differ": {
			a: same, b: inputs{desired: changed(func(o map[string]any) { o["list"].([]any)[0] = 1.0 }), live: base()},
		},
		"moving a character from a key into its value differs": {
			// Without lengths both would write a, s (a string's tag), s, x.
			a: inputs{desired: map[string]any{"as": "x"}, live: base()},
			b: inputs{desired: map[string]any{"a": "sx"}, live: base()},
		},
		"moving a field from desired to live differs": {
			a: inputs{desired: map[string]any{"a": "1", "b": "2"}, live: map[string]any{}},
			b: inputs{desired: map[string]any{"a": "1"}, live: map[string]any{"b": "2"}},
		},
		"a null and a missing field differ": {
			a: same, b: inputs{desired: changed(func(o map[string]any) { o["extra"] = nil }), live: base()},
		},
		"the reordered list differs": {
			a: same, b: inputs{desired: changed(func(o map[string]any) { l := o["list"].([]any); l[0], l[1] = l[1], l[0] }), live: base()},
		},
		"swapping desired and live differs": {
			a: inputs{desired: changed(func(o map[string]any) { o["kind"] = "Secret" }), live: base()},
			b: inputs{desired: base(), live: changed(func(o map[string]any) { o["kind"] = "Secret" })},
		},
		"other ignore rules differ": {
			a: same, b: inputs{desired: base(), live: base(), opts: Options{IgnoreDifferences: []v1alpha1.ResourceIgnoreDifferences{{Kind: "ConfigMap", JSONPointers: []string{"/data/a"}}}}},
		},
		"other known type fields differ": {
			a: same, b: inputs{desired: base(), live: base(), opts: Options{KnownTypeFields: []knowntypes.Field{{Kind: "ConfigMap", Field: "data", Type: "core/v1/ResourceList"}}}},
		},
		"another field manager differs": {
			a: same, b: inputs{desired: base(), live: base(), opts: Options{Manager: "someone-else"}},
		},
	}
	sum := func(t *testing.T, in inputs) [32]byte {
		t.Helper()
		got, err := fingerprint(&unstructured.Unstructured{Object: in.desired}, &unstructured.Unstructured{Object: in.live}, in.opts)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := sum(t, tc.a) == sum(t, tc.b); got != tc.same {
				t.Fatalf("same fingerprint = %v, want %v", got, tc.same)
			}
		})
	}
}

func TestMemoComputesEachPairOnce(t *testing.T) {
	desired := load(t, "deployment/desired-replicas.yaml")
	live := load(t, "deployment/live.yaml")
	calls := 0
	m := &Memo{compare: func(d, l *unstructured.Unstructured, o Options) (bool, error) {
		calls++
		return Modified(d, l, o)
	}}
	ask := func(owner string, live *unstructured.Unstructured) bool {
		t.Helper()
		got, err := m.Modified(owner, "apps/Deployment/default/guestbook", desired, live, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if !ask("app", live) || calls != 1 {
		t.Fatalf("first answer: want modified from one comparison, got %d comparisons", calls)
	}
	if !ask("app", live.DeepCopy()) || calls != 1 {
		t.Fatalf("the same pair again: want the remembered answer, got %d comparisons", calls)
	}
	if !ask("other-app", live) || calls != 2 {
		t.Fatalf("another owner: want its own comparison, got %d comparisons", calls)
	}
	scaled := live.DeepCopy()
	if err := unstructured.SetNestedField(scaled.Object, desired.Object["spec"].(map[string]any)["replicas"], "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if ask("app", scaled) || calls != 3 {
		t.Fatalf("live now matches: want not modified from a new comparison, got %d comparisons", calls)
	}
	annotated := desired.DeepCopy()
	annotated.SetAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": "app:apps/Deployment:default/guestbook"})
	if _, err := m.Modified("app", "apps/Deployment/default/guestbook", annotated, scaled, Options{}); err != nil || calls != 4 {
		t.Fatalf("a sync's desired object (annotated): want a new comparison, got %d comparisons, err %v", calls, err)
	}
	if ask("app", scaled) || calls != 4 {
		t.Fatalf("the comparison's pair after the sync's: want the remembered answer, got %d comparisons", calls)
	}
	m.Forget("app")
	ask("app", scaled)
	if calls != 5 {
		t.Fatalf("after Forget: want a new comparison, got %d comparisons", calls)
	}
}

func TestMemoDoesNotRememberErrors(t *testing.T) {
	desired := load(t, "deployment/desired.yaml")
	live := load(t, "deployment/live.yaml")
	calls := 0
	m := &Memo{compare: func(*unstructured.Unstructured, *unstructured.Unstructured, Options) (bool, error) {
		calls++
		return false, errors.New("boom")
	}}
	for range 2 {
		if _, err := m.Modified("app", "key", desired, live, Options{}); err == nil {
			t.Fatal("want the comparison's error")
		}
	}
	if calls != 2 {
		t.Fatalf("want every failed comparison tried again, got %d calls for 2 asks", calls)
	}
}
