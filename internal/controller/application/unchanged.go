package application

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/argocdcm"
	"github.com/skiffcd/skiff/internal/clustercache"
)

// comparisonInputs identifies what a comparison's outcome was found on,
// so that a later comparison can tell, without rendering, decoding or
// diffing, that it would find the same: most comparisons are polls of apps
// where nothing changed.
type comparisonInputs struct {
	// app is the resourceVersion of the Application holding the outcome:
	// its spec, the status the outcome was derived from, and no operation.
	app string
	// project is the AppProject's resourceVersion.
	project string
	// render is the reposerver's key of the rendered sources (the
	// resolved revisions among them).
	render string
	// objects are the desired objects' keys; live is the cluster cache's
	// Versions of them and of the objects tracked to the app.
	objects []clustercache.ResourceKey
	live    [sha256.Size]byte
	// settings are the argocd-cm settings the health was judged by: a
	// change of them (a health script) may change the outcome.
	settings *argocdcm.Settings
}

// lastComparisons holds, per app, the inputs of its last comparison whose
// outcome may stand for the next one.
type lastComparisons struct {
	mu   sync.Mutex
	apps map[string]comparisonInputs
	// writing holds the apps whose operation result, carrying a
	// comparison, is being written: the watch event of that write may
	// reach a comparison before the operation worker remembers it.
	writing map[string]bool
}

func (l *lastComparisons) get(app string) (comparisonInputs, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	in, ok := l.apps[app]
	return in, ok
}

func (l *lastComparisons) remember(app string, in comparisonInputs) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.apps == nil {
		l.apps = map[string]comparisonInputs{}
	}
	l.apps[app] = in
	delete(l.writing, app)
}

// beginWrite forgets app's last comparison and marks a write that carries
// a new one as under way, until remember or forget.
func (l *lastComparisons) beginWrite(app string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.apps, app)
	if l.writing == nil {
		l.writing = map[string]bool{}
	}
	l.writing[app] = true
}

// beingWritten reports whether a write carrying app's comparison is under way.
func (l *lastComparisons) beingWritten(app string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writing[app]
}

// moved records that the Application holding app's last outcome is now at
// version: a write of the comparison's timestamps alone.
func (l *lastComparisons) moved(app, version string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if in, ok := l.apps[app]; ok {
		in.app = version
		l.apps[app] = in
	}
}

func (l *lastComparisons) forget(app string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.apps, app)
	delete(l.writing, app)
}

// unchanged reports whether comparing app now would find what its last
// comparison found: the same Application version, the same project, the
// same render (its sources resolved again, no older than maxRevisionAge
// when set, as compare would) and the same live versions. Only the
// comparison's timestamps would move.
func (r *Reconciler) unchanged(ctx context.Context, app *v1alpha1.Application, maxRevisionAge time.Duration) bool {
	last, ok := r.compared.get(app.Name)
	if !ok || last.app != app.ResourceVersion || last.settings != r.settings() {
		return false
	}
	// Cheapest first: a live change, the most common reason to compare
	// other than a poll, shows here.
	tgt, err := r.targetOf(app.Name)
	if err != nil || tgt.cache.Versions(app.Name, last.objects) != last.live {
		return false
	}
	proj, err := r.project(ctx, app)
	if err != nil || proj.ResourceVersion != last.project {
		return false
	}
	req := r.manifestRequest(app, tgt.caps, false, maxRevisionAge)
	req.Unless = last.render
	resp, err := r.Repo.Manifests(ctx, req)
	// An error is for the full comparison to report.
	return err == nil && resp.Unchanged
}

// reusable reports whether a comparison's outcome may stand for later
// comparisons with the same inputs: it succeeded, and nothing that follows
// from it depends on the time. Auto-sync's self-heal back-off does, for an
// app out of sync; an operation moves on its own.
func reusable(app *v1alpha1.Application, cmp comparison) bool {
	return cmp.inputs != nil && app.Operation == nil &&
		(app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced || !app.IsAutomated())
}
