package manager

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// recordingRefresher remembers the apps it was asked to refresh and
// whether the request that asked was still open.
type recordingRefresher struct {
	mu           sync.Mutex
	apps         []string
	afterAnswer  bool
	ctxErr       error
	requestEnded <-chan struct{}
}

func (r *recordingRefresher) RefreshApps(ctx context.Context, _ string, apps []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.apps = append(r.apps, apps...)
	r.ctxErr = ctx.Err()
	if r.requestEnded != nil {
		select {
		case <-r.requestEnded:
			r.afterAnswer = true
		default:
		}
	}
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
			answered := make(chan struct{})
			local, remote := &recordingRefresher{}, &recordingRefresher{requestEnded: answered}
			// The request's context ends with the answer: the annotations
			// are still written after it.
			request, cancel := context.WithCancel(context.Background())
			r := ownerRefresher{owns: tc.owns, local: local, remote: remote, annotating: &sync.WaitGroup{}}
			remote.mu.Lock() // the annotations wait for the answer
			if err := r.RefreshApps(request, "https://git.example/repo", []string{"a", "b"}); err != nil {
				t.Fatal(err)
			}
			cancel()
			close(answered)
			remote.mu.Unlock()
			r.annotating.Wait()
			if len(tc.wantRemote) > 0 && !remote.afterAnswer {
				t.Error("the annotations were written before the webhook was answered")
			}
			if remote.ctxErr != nil {
				t.Errorf("the annotations were written with an ended context: %v", remote.ctxErr)
			}
			if !slices.Equal(local.apps, tc.wantLocal) || !slices.Equal(remote.apps, tc.wantRemote) {
				t.Errorf("refreshed in process %v, by annotation %v; want %v and %v", local.apps, remote.apps, tc.wantLocal, tc.wantRemote)
			}
		})
	}
}
