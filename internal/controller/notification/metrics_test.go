package notification

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func TestDeliveriesCountAsArgoCDsSucceededOrNot(t *testing.T) {
	tests := map[string]struct {
		outcome, wantSucceeded string
	}{
		"a sent notification succeeded":              {outcome: outcomeSent, wantSucceeded: "true"},
		"a failed send did not":                      {outcome: outcomeFailed, wantSucceeded: "false"},
		"a template error did not":                   {outcome: outcomeTemplateError, wantSucceeded: "false"},
		"an event dropped from a full queue did not": {outcome: outcomeDropped, wantSucceeded: "false"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			read := func() float64 {
				var m dto.Metric
				if err := deliveries.WithLabelValues("metrics-test", name, tc.wantSucceeded).Write(&m); err != nil {
					t.Fatal(err)
				}
				return m.GetCounter().GetValue()
			}
			before := read()
			observeDelivery("metrics-test", name, tc.outcome)
			if got := read(); got != before+1 {
				t.Errorf("succeeded=%s counted %v times, want once", tc.wantSucceeded, got-before)
			}
		})
	}
}
