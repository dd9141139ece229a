package application

import (
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
