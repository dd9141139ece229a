package application

import (
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/syncmap"
)

// operationStarts remembers, per app whose operation this process
// requested or runs, when an operation worker began it: comparisons wait
// for the result from then (compareDeferral). The time is zero while the
// request waits in the operation queue.
type operationStarts struct {
	begun syncmap.Map[client.ObjectKey, time.Time]
}

// queued records an operation this process requested, not yet begun.
func (s *operationStarts) queued(app client.ObjectKey) { s.begun.Store(app, time.Time{}) }

// begin records that an operation worker began app's operation at at.
func (s *operationStarts) begin(app client.ObjectKey, at time.Time) { s.begun.Store(app, at) }

// get returns when app's operation was begun (zero: queued) and whether
// this process requested or runs it at all.
func (s *operationStarts) get(app client.ObjectKey) (begun time.Time, known bool) {
	return s.begun.Load(app)
}

func (s *operationStarts) forget(app client.ObjectKey) { s.begun.Delete(app) }

// writeVersions remembers, per Application, the resourceVersion of the
// operation worker's latest write of it, until the cache shows that write.
type writeVersions struct {
	versions syncmap.Map[client.ObjectKey, string]
}

// wrote records a write of app that the API server answered at version.
func (w *writeVersions) wrote(app client.ObjectKey, version string) { w.versions.Store(app, version) }

// cacheOlder reports whether a cached copy of app at resourceVersion
// cached predates the latest write recorded, which may have finished the
// operation the cached copy still shows. Once the cache has caught up the
// record is dropped (unless a newer write replaced it meanwhile). Without
// a record (none since start) the cache, filled by a LIST after start, is
// current.
func (w *writeVersions) cacheOlder(app client.ObjectKey, cached string) bool {
	written, ok := w.versions.Load(app)
	if !ok {
		return false
	}
	if atLeastVersion(cached, written) {
		w.versions.CompareAndDelete(app, written)
		return false
	}
	return true
}

// atLeastVersion reports whether resourceVersion got is want or later.
// Resource versions are opaque strings; when both are integers (etcd's
// revisions, which the API server uses) a larger one is later, otherwise
// only equality counts.
func atLeastVersion(got, want string) bool {
	if got == want {
		return true
	}
	g, err1 := strconv.ParseUint(got, 10, 64)
	w, err2 := strconv.ParseUint(want, 10, 64)
	return err1 == nil && err2 == nil && g > w
}
