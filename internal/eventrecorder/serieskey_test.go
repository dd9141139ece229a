package eventrecorder

import "testing"

func TestSeriesKeyTellsFieldsApart(t *testing.T) {
	base := []string{"uid-1", "Application", "argocd", "guestbook", "Normal", "OperationStarted", "Sync", "started", "application-controller"}
	tests := map[string]struct {
		fields []string
		same   bool
	}{
		"the same fields give the same key": {
			fields: base, same: true,
		},
		"another note gives another key": {
			fields: []string{"uid-1", "Application", "argocd", "guestbook", "Normal", "OperationStarted", "Sync", "finished", "application-controller"},
		},
		"another object with the same name gives another key": {
			fields: []string{"uid-2", "Application", "argocd", "guestbook", "Normal", "OperationStarted", "Sync", "started", "application-controller"},
		},
		"the same text split between fields another way gives another key": {
			fields: []string{"uid-1", "Application", "argocdguest", "book", "Normal", "OperationStarted", "Sync", "started", "application-controller"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := newSeriesKey(tc.fields...) == newSeriesKey(base...)
			if got != tc.same {
				t.Errorf("same key = %v, want %v", got, tc.same)
			}
		})
	}
}
