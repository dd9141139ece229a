package manager

import (
	"context"
	"slices"
	"testing"
)

// recordingRefresher remembers the apps it was asked to refresh.
type recordingRefresher struct{ apps []string }

func (r *recordingRefresher) RefreshApps(_ context.Context, _ string, apps []string) error {
	r.apps = append(r.apps, apps...)
	return nil
}

func TestOwnerRefresherRefreshesInProcessOnlyTheAppsThisReplicaActsOn(t *testing.T) {
	tests := map[string]struct {
		owns                  func(string) bool
		wantLocal, wantRemote []string
	}{
		"the leader, or the owner of every app, queues the refreshes itself": {
			owns: func(string) bool { return true }, wantLocal: []string{"a", "b"}},
		"a replica that does not lead writes annotations": {
			owns: func(string) bool { return false }, wantRemote: []string{"a", "b"}},
		"a replica sharing the apps queues its own and annotates the others'": {
			owns: func(app string) bool { return app == "b" }, wantLocal: []string{"b"}, wantRemote: []string{"a"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			local, remote := &recordingRefresher{}, &recordingRefresher{}
			r := ownerRefresher{owns: tc.owns, local: local, remote: remote}
			if err := r.RefreshApps(context.Background(), "https://git.example/repo", []string{"a", "b"}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(local.apps, tc.wantLocal) || !slices.Equal(remote.apps, tc.wantRemote) {
				t.Errorf("refreshed in process %v, by annotation %v; want %v and %v", local.apps, remote.apps, tc.wantLocal, tc.wantRemote)
			}
		})
	}
}
