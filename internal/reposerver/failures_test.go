package reposerver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/skiffcd/skiff/internal/project"
	"github.com/skiffcd/skiff/internal/render"
	"github.com/skiffcd/skiff/internal/source"
	"github.com/skiffcd/skiff/internal/testgit"
)

// cacheCount reads skiff_render_cache_requests_total for result ("hit" or
// "miss"): a miss is a render.
func cacheCount(t *testing.T, result string) float64 {
	t.Helper()
	var m dto.Metric
	if err := cacheResults.WithLabelValues(result).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// A revision that fails to render fails the same way every time: the
// failure is cached like a render, so comparing a broken commit over and
// over costs nothing. A hard refresh or a new commit renders again.
func TestRenderFailuresAreCachedPerRevision(t *testing.T) {
	ctx := context.Background()
	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: [not, a, map]\n"})
	clock := &fakeClock{now: time.Now()}
	server, _ := newTestServer(t, clock, Options{RevisionTTL: time.Minute})

	misses, hits := cacheCount(t, "miss"), cacheCount(t, "hit")
	var first error
	for i := range 2 {
		_, err := server.Manifests(ctx, request(repo.URL(), "app"))
		if err == nil || !strings.Contains(err.Error(), "source 1") || !strings.Contains(err.Error(), "app/bad.yaml") {
			t.Fatalf("call %d: error %v, want one naming the source and the file", i+1, err)
		}
		if i == 0 {
			first = err
		} else if err.Error() != first.Error() {
			t.Errorf("the cached failure reads %q, the render's %q", err, first)
		}
	}
	if got := cacheCount(t, "miss") - misses; got != 1 {
		t.Errorf("%v renders for two calls on one broken revision, want 1", got)
	}
	if got := cacheCount(t, "hit") - hits; got != 1 {
		t.Errorf("%v cache hits, want the second call's", got)
	}

	hard := request(repo.URL(), "app")
	hard.Hard = true
	if _, err := server.Manifests(ctx, hard); err == nil {
		t.Fatal("the hard refresh rendered the broken revision without error")
	}
	if got := cacheCount(t, "miss") - misses; got != 2 {
		t.Errorf("a hard refresh did not render again (%v renders in all, want 2)", got)
	}

	repo.Commit(map[string]string{"app/bad.yaml": configMapYAML})
	clock.Advance(2 * time.Minute)
	resp, err := server.Manifests(ctx, request(repo.URL(), "app"))
	if err != nil || len(resp.Manifests) != 1 {
		t.Fatalf("the fixed revision: %v objects, %v; want 1 object", resp, err)
	}
}

func TestCacheableFailure(t *testing.T) {
	tooLarge := fmt.Errorf("source 1: %w", &source.RepoError{Op: "checkout", Err: fmt.Errorf("big.bin: file is %w", source.ErrTooLarge)})
	tests := map[string]struct {
		callerErr, err error
		want           bool
	}{
		"a template error is the revision's own": {
			err: errors.New("helm: template: x.yaml:3: function \"nope\" not defined"), want: true,
		},
		"a render stopped at its own deadline is the revision's own": {
			err: fmt.Errorf("render of Helm stopped at its deadline of 1m0s: %w", context.DeadlineExceeded), want: true,
		},
		"a render the caller gave up on says nothing": {
			callerErr: context.Canceled, err: fmt.Errorf("render of Helm: %w", context.Canceled),
		},
		"no worker free before the deadline says nothing": {
			err: render.Unavailable(fmt.Errorf("no render worker was free: %w", context.DeadlineExceeded)),
		},
		"a project refusing a repository may change its mind": {
			err: fmt.Errorf("helm: %w", &dependencyNotPermitted{repo: "https://charts.example.com", project: "p"}),
		},
		"a commit with a file over the limit stays so": {
			err: tooLarge, want: true,
		},
		"other checkout failures pass": {
			err: &source.RepoError{Op: "checkout", Err: errors.New("no space left on device")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := cacheableFailure(tc.callerErr, tc.err); got != tc.want {
				t.Errorf("cacheableFailure(%v, %v) = %v, want %v", tc.callerErr, tc.err, got, tc.want)
			}
		})
	}
	if !errors.Is(&dependencyNotPermitted{}, project.ErrNotPermitted) {
		t.Error("a dependency refused by the project is not project.ErrNotPermitted")
	}
}
