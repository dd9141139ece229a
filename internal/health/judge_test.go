package health

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestJudgeAppliesTheCustomRuleBeforeTheBuiltInOnes(t *testing.T) {
	degradedWidgets := func(obj *unstructured.Unstructured) (Result, bool) {
		if obj.GetKind() != "Widget" && obj.GetKind() != "Deployment" {
			return Result{}, false
		}
		return Result{Status: Degraded, Message: "custom"}, true
	}
	deleting := widgetObj("Widget")
	now := metav1.Now()
	deleting.SetDeletionTimestamp(&now)
	tests := map[string]struct {
		obj  *unstructured.Unstructured
		want Result
	}{
		"a kind the custom rule covers gets its result": {
			obj: widgetObj("Widget"), want: Result{Status: Degraded, Message: "custom"},
		},
		"the custom rule overrides a built-in rule": {
			obj: widgetObj("Deployment"), want: Result{Status: Degraded, Message: "custom"},
		},
		"a kind the custom rule does not cover gets the built-in rule": {
			obj: widgetObj("Gadget"), want: Assess(widgetObj("Gadget")),
		},
		"an object pending deletion is Progressing whatever the custom rule says": {
			obj: deleting, want: Result{Status: Progressing, Message: "Pending deletion"},
		},
		"no object is Missing": {
			obj: nil, want: Result{Status: Missing},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := (Judge{Custom: degradedWidgets}).Assess(tt.obj); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func widgetObj(kind string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": kind,
		"metadata": map[string]any{"name": "w"},
		"status":   map[string]any{},
	}}
}
