package render

import (
	"context"
	"fmt"
)

// kindJsonnet names the job that evaluates one Jsonnet file of a directory
// render.
const kindJsonnet Kind = "Jsonnet"

// job is the part of a render that runs in a worker: the library call that
// cannot be interrupted, with the reads it needs. It travels as JSON.
type job struct {
	Kind    Kind
	Request Request
	// Dir is the application directory (Helm, Kustomize), File the Jsonnet
	// file; both absolute and already checked to be inside Request.Root.
	Dir, File string
	// Charts holds the chart dependencies the caller downloaded, by
	// dependencyKey: the worker reads them and asks no network.
	Charts map[string]string
	// MaxOutputBytes bounds the job's outputs, in total.
	MaxOutputBytes int64
}

// jobOutput is one text a job produced: a rendered template (Name is its
// path in the chart, CRD marks crds/ files), a kustomize build or a Jsonnet
// evaluation. The caller decodes it.
type jobOutput struct {
	Name string
	Text []byte
	CRD  bool
}

// run runs the job in this process: it is the worker's side.
func (j job) run() ([]jobOutput, error) {
	// The pool kills the worker at the deadline; this context only stops
	// the steps that can check it (walking and copying files).
	ctx, cancel := context.WithTimeout(context.Background(), effectiveLimits(j.Request.Limits).Timeout)
	defer cancel()
	var outs []jobOutput
	var err error
	switch j.Kind {
	case KindHelm:
		outs, err = helmTemplate(ctx, j)
	case KindKustomize:
		outs, err = kustomizeBuild(ctx, j)
	case kindJsonnet:
		outs, err = jsonnetEvaluate(j)
	default:
		return nil, fmt.Errorf("unknown job kind %q", j.Kind)
	}
	if err != nil {
		return nil, err
	}
	var total int64
	for _, o := range outs {
		if total += int64(len(o.Text)); total > j.MaxOutputBytes {
			return nil, fmt.Errorf("%w of %d bytes", errOutputLimit, j.MaxOutputBytes)
		}
	}
	return outs, nil
}

// isolate runs j in the request's worker pool.
func isolate(ctx context.Context, req Request, j job) ([]jobOutput, error) {
	pool := req.Workers
	if pool == nil {
		pool = DefaultPool()
	}
	return pool.run(ctx, j)
}
