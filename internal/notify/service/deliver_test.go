package service

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skiffcd/skiff/internal/notify"
)

type flaky struct{ failures, calls int }

func (f *flaky) Send(ctx context.Context, _ notify.Notification, _ string) error {
	f.calls++
	if f.calls <= f.failures {
		return errors.New("unavailable")
	}
	return nil
}

func TestDeliver(t *testing.T) {
	tests := map[string]struct {
		failures  int
		wantErr   bool
		wantCalls int
	}{
		"a success needs one attempt":                 {failures: 0, wantCalls: 1},
		"a transient failure is retried":              {failures: 2, wantCalls: 3},
		"a persistent failure gives up after 3 tries": {failures: 5, wantCalls: 3, wantErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			f := &flaky{failures: tt.failures}
			err := Deliver(context.Background(), f, notify.Notification{}, "r", Retry{Attempts: 3, Backoff: time.Millisecond})
			if (err != nil) != tt.wantErr || f.calls != tt.wantCalls {
				t.Errorf("err = %v after %d calls, want error %v after %d", err, f.calls, tt.wantErr, tt.wantCalls)
			}
		})
	}
}
