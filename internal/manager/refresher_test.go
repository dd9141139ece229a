package manager

import (
	"context"
	"testing"
)

// recordingRefresher remembers the apps it was asked to refresh.
type recordingRefresher struct{ apps []string }

func (r *recordingRefresher) RefreshApps(_ context.Context, _ string, apps []string) error {
	r.apps = append(r.apps, apps...)
	return nil
}

func TestElectedRefresherRefreshesInProcessOnlyOnTheLeader(t *testing.T) {
	tests := map[string]struct {
		elected    bool
		wantLocal  int
		wantRemote int
	}{
		"the leader queues the refresh itself":            {elected: true, wantLocal: 2},
		"a replica that does not lead writes annotations": {elected: false, wantRemote: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			elected := make(chan struct{})
			if tc.elected {
				close(elected)
			}
			local, remote := &recordingRefresher{}, &recordingRefresher{}
			r := electedRefresher{elected: elected, local: local, remote: remote}
			if err := r.RefreshApps(context.Background(), "https://git.example/repo", []string{"a", "b"}); err != nil {
				t.Fatal(err)
			}
			if len(local.apps) != tc.wantLocal || len(remote.apps) != tc.wantRemote {
				t.Errorf("refreshed in process %v, by annotation %v; want %d and %d apps", local.apps, remote.apps, tc.wantLocal, tc.wantRemote)
			}
		})
	}
}
