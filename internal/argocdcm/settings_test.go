package argocdcm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

func TestSourceTellsSubscribersOnlyWhenTheDataChanges(t *testing.T) {
	src := NewSource(nil)
	var told []*Settings
	src.Subscribe(func(s *Settings) { told = append(told, s) })
	cm := func(name string, data map[string]string, labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: data}
	}
	steps := []struct {
		event     func()
		wantTotal int
	}{
		{func() { src.observe(cm(ConfigMapName, map[string]string{"a": "1"}, nil)) }, 1},
		{func() { src.observe(cm(ConfigMapName, map[string]string{"a": "1"}, map[string]string{"x": "y"})) }, 1},
		{func() { src.observe(cm("argocd-rbac-cm", map[string]string{"a": "2"}, nil)) }, 1},
		{func() { src.observe(cm(ConfigMapName, map[string]string{"a": "2"}, nil)) }, 2},
		// Keys and values that concatenate alike are still different data.
		{func() { src.observe(cm(ConfigMapName, map[string]string{"a": "2", "b": ""}, nil)) }, 3},
		{func() {
			src.observe(toolscache.DeletedFinalStateUnknown{Obj: cm(ConfigMapName, nil, nil)})
		}, 4},
	}
	for i, step := range steps {
		step.event()
		if len(told) != step.wantTotal {
			t.Fatalf("after step %d: subscribers told %d times, want %d", i, len(told), step.wantTotal)
		}
		if got := src.Current(); got != told[len(told)-1] {
			t.Fatalf("after step %d: Current is not the Settings last told", i)
		}
	}
}

func TestDataVersionTellsApartDataThatConcatenatesAlike(t *testing.T) {
	a := dataVersion(map[string]string{"ab": "c"})
	b := dataVersion(map[string]string{"a": "bc"})
	if a == b {
		t.Fatalf("dataVersion(ab=c) == dataVersion(a=bc) = %q", a)
	}
}
