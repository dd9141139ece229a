package analysis

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// An unreachable Prometheus gives Error measurements; after
// consecutiveErrorLimit (default 4) is passed the run is Error.
func TestUnreachableProviderEndsInError(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	run := readRun(t, "prometheus-run.yaml", ns)
	run.Spec.Args[0].Value = v1alpha1.NewAnyString("http://127.0.0.1:1")
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitForRun(t, c, run, "the run to complete", completed)
	res := result(t, got, "error-rate")
	if got.Status.Phase != v1alpha1.AnalysisPhaseError || res.Error != 5 || res.ConsecutiveError != 5 {
		t.Fatalf("run %s (%s), metric %+v; want Error after 5 errors", got.Status.Phase, got.Status.Message, res)
	}
	if !strings.Contains(got.Status.Message, "consecutiveErrors (5) > consecutiveErrorLimit (4)") || !strings.Contains(got.Status.Message, "connection refused") {
		t.Errorf("message = %q, want the limit and the cause", got.Status.Message)
	}
}

// A Secret argument used in a URL never shows in the status, even in the
// error that repeats the URL.
func TestSecretArgumentsAreMasked(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns}, StringData: map[string]string{"token": "hunter2"}}
	if err := c.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	zero := intstr.FromInt32(0)
	run := &v1alpha1.AnalysisRun{
		ObjectMeta: metav1.ObjectMeta{Name: "masked", Namespace: ns},
		Spec: v1alpha1.AnalysisRunSpec{
			Args: []v1alpha1.Argument{{Name: "token", ValueFrom: &v1alpha1.ValueFrom{SecretKeyRef: &v1alpha1.SecretKeyRef{Name: "creds", Key: "token"}}}},
			Metrics: []v1alpha1.Metric{{Name: "m", ConsecutiveErrorLimit: &zero, Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{
				URL: "http://127.0.0.1:1/check?token={{args.token}}"}}}},
		},
	}
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitForRun(t, c, run, "the run to complete", completed)
	status := got.Status.Message + result(t, got, "m").Message + result(t, got, "m").Measurements[0].Message
	if got.Status.Phase != v1alpha1.AnalysisPhaseError || strings.Contains(status, "hunter2") || !strings.Contains(status, "token=*****") {
		t.Errorf("run %s with messages %q; want Error with the token masked", got.Status.Phase, status)
	}
}

// A run whose required argument has no value cannot measure anything: it
// ends in Error naming the argument.
func TestMissingSecretIsAnError(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	run := &v1alpha1.AnalysisRun{
		ObjectMeta: metav1.ObjectMeta{Name: "no-secret", Namespace: ns},
		Spec: v1alpha1.AnalysisRunSpec{
			Args:    []v1alpha1.Argument{{Name: "token", ValueFrom: &v1alpha1.ValueFrom{SecretKeyRef: &v1alpha1.SecretKeyRef{Name: "gone", Key: "token"}}}},
			Metrics: []v1alpha1.Metric{{Name: "m", Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: "http://127.0.0.1:1/"}}}},
		},
	}
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitForRun(t, c, run, "the run to complete", completed)
	if got.Status.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(got.Status.Message, `args.token`) || !strings.Contains(got.Status.Message, string(ReasonArgsUnresolved)) {
		t.Errorf("run %s (%q), want Error naming args.token", got.Status.Phase, got.Status.Message)
	}
}
