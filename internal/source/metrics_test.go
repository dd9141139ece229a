package source

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gitRequestCounts reads argocd_git_request_total and the count of
// argocd_git_request_duration_seconds of repo for requestType.
func gitRequestCounts(t *testing.T, repo, requestType string) (total float64, observed uint64) {
	t.Helper()
	var counter, histogram dto.Metric
	if err := gitRequests.WithLabelValues(repo, requestType).Write(&counter); err != nil {
		t.Fatal(err)
	}
	if err := gitRequestSeconds.WithLabelValues(repo, requestType).(prometheus.Histogram).Write(&histogram); err != nil {
		t.Fatal(err)
	}
	return counter.GetCounter().GetValue(), histogram.GetHistogram().GetSampleCount()
}

func TestGitRequestsAreCountedAsArgoCDCountsThem(t *testing.T) {
	root := t.TempDir()
	fx := newStandardFixture(t, root, "apps")
	srv := newGitHTTPServer(t, root)
	url, creds := srv.repoURL("apps"), httpCreds()
	cache := NewCache(t.TempDir(), Options{})
	ctx := testContext(t)

	lsBefore, lsObservedBefore := gitRequestCounts(t, url, gitLsRemote)
	fetchBefore, fetchObservedBefore := gitRequestCounts(t, url, gitFetch)
	if got, err := cache.Resolve(ctx, url, creds, "main"); err != nil || got != fx.c3 {
		t.Fatalf("Resolve = %s, %v; want %s", got, err, fx.c3)
	}
	ls, lsObserved := gitRequestCounts(t, url, gitLsRemote)
	fetches, fetchObserved := gitRequestCounts(t, url, gitFetch)
	if ls-lsBefore != 1 || lsObserved-lsObservedBefore != 1 {
		t.Errorf("ls-remote: %v requests and %d durations, want 1 and 1", ls-lsBefore, lsObserved-lsObservedBefore)
	}
	if fetches-fetchBefore != 1 || fetchObserved-fetchObservedBefore != 1 {
		t.Errorf("fetch: %v requests and %d durations, want 1 and 1", fetches-fetchBefore, fetchObserved-fetchObservedBefore)
	}
}
