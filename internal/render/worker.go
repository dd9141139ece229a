package render

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Helm's template engine, krusty and go-jsonnet take no context and cannot
// be interrupted: a template looping for an hour keeps its goroutine, and a
// core, for an hour. Those steps run in worker processes instead: the skiff
// binary (or whatever binary links this package, a test binary included)
// re-executed with workerEnv set. A worker is killed with SIGKILL when its
// render's deadline passes, when its caller gives up, when its output grows
// past the limit or its memory past MaxMemoryBytes; the kernel then takes
// back its CPU and memory at once, and the next render starts a fresh one.
//
// The worker only runs the library call. Everything that can check a
// context or count bytes (walking files, fetching chart dependencies,
// decoding the output with a running byte count) stays in the caller.

// workerEnv, set to workerProtocol, makes a process serve jobs instead of
// running its main. It is checked in init, before the main package (or the
// test framework) starts: any binary linking this package can be a worker.
const (
	workerEnv      = "SKIFF_RENDER_WORKER"
	workerProtocol = "1"
)

// The worker reads jobs from fd 3 and writes results to fd 4: its stdout and
// stderr are the libraries' (kustomize prints warnings there).
const (
	workerJobsFD    = 3
	workerResultsFD = 4
)

func init() {
	if os.Getenv(workerEnv) != workerProtocol {
		return
	}
	jobs := os.NewFile(workerJobsFD, "render-jobs")
	results := os.NewFile(workerResultsFD, "render-results")
	go exitWithParent(os.Getppid())
	if err := serveWorker(jobs, results); err != nil {
		fmt.Fprintln(os.Stderr, "render worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// exitWithParent ends the worker once its parent is gone (it is then
// adopted by another process): the end of the job stream would tell it
// only after its job, which may run for hours. Pdeathsig would tell it at
// once, but it follows the thread that started the worker, not the
// process, and the Go runtime may end that thread.
func exitWithParent(parent int) {
	for {
		time.Sleep(time.Second)
		if os.Getppid() != parent {
			os.Exit(1)
		}
	}
}

// ErrUnavailable marks a render that did not run to an answer of its own:
// no worker could be started or none became free before the deadline, a
// worker died of something else than its job, a chart dependency could not
// be downloaded. Retrying may succeed; such failures say nothing about the
// revision and are not worth remembering.
var ErrUnavailable = errors.New("render unavailable")

// Unavailable marks err as ErrUnavailable, keeping its message.
func Unavailable(err error) error { return unavailableError{err} }

type unavailableError struct{ err error }

func (e unavailableError) Error() string   { return e.err.Error() }
func (e unavailableError) Unwrap() []error { return []error{e.err, ErrUnavailable} }

// PoolOptions configure a Pool; zero fields take their defaults.
type PoolOptions struct {
	// Size bounds the workers, hence the renders running at once; default
	// max(4, GOMAXPROCS).
	Size int
	// MaxMemoryBytes bounds a worker's resident memory; a worker above it
	// is killed and its render fails. The worker's Go heap target
	// (GOMEMLIMIT) is set below it. Default 1 GiB.
	MaxMemoryBytes int64
	// IdleTimeout is how long an idle worker is kept for the next render;
	// default one minute.
	IdleTimeout time.Duration
	// Executable is the binary to run as a worker; default the running
	// binary.
	Executable string
}

// Pool runs isolated render steps in worker processes: at most Size at
// once, each worker reused until it fails, is killed or idles out.
type Pool struct {
	opts  PoolOptions
	slots chan struct{}

	mu   sync.Mutex
	idle []*worker

	started, killed, jobs atomic.Int64
}

// PoolStats count a pool's work, for tests and benchmarks.
type PoolStats struct {
	// Started and Killed count worker processes; Jobs the steps run.
	Started, Killed, Jobs int64
	// Idle is the number of workers waiting for a job.
	Idle int
}

// NewPool returns a pool; workers start on demand.
func NewPool(opts PoolOptions) *Pool {
	if opts.Size <= 0 {
		opts.Size = max(4, runtime.GOMAXPROCS(0))
	}
	if opts.MaxMemoryBytes <= 0 {
		opts.MaxMemoryBytes = 1 << 30
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = time.Minute
	}
	return &Pool{opts: opts, slots: make(chan struct{}, opts.Size)}
}

// Size is the number of renders the pool runs at once.
func (p *Pool) Size() int { return p.opts.Size }

// Stats returns the pool's counters.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	idle := len(p.idle)
	p.mu.Unlock()
	return PoolStats{Started: p.started.Load(), Killed: p.killed.Load(), Jobs: p.jobs.Load(), Idle: idle}
}

// DefaultPool returns the process's pool, used by renders whose Request
// names none.
func DefaultPool() *Pool { return defaultPool() }

var defaultPool = sync.OnceValue(func() *Pool { return NewPool(PoolOptions{}) })

// errOutputLimit is a worker's output passing the job's byte budget.
var errOutputLimit = errors.New("rendered output is larger than the limit")

// run runs j in a worker and returns its outputs. The worker is killed
// when ctx ends first; the error is then ctx's, wrapped with
// ErrUnavailable when no worker was free in time.
func (p *Pool) run(ctx context.Context, j job) ([]jobOutput, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, Unavailable(fmt.Errorf("no render worker was free: %w", ctx.Err()))
	}
	defer func() { <-p.slots }()
	w, err := p.take()
	if err != nil {
		return nil, Unavailable(fmt.Errorf("starting a render worker: %w", err))
	}
	p.jobs.Add(1)

	type result struct {
		outs []jobOutput
		err  error
	}
	done := make(chan result, 1)
	go func() {
		outs, err := w.do(j)
		done <- result{outs, err}
	}()
	memory := time.NewTicker(25 * time.Millisecond)
	defer memory.Stop()
	for {
		select {
		case r := <-done:
			var jobErr *jobError
			switch {
			case r.err == nil || errors.As(r.err, &jobErr):
				p.put(w)
				return r.outs, r.err
			case errors.Is(r.err, errOutputLimit):
				p.kill(w)
				return nil, fmt.Errorf("%w of %d bytes", errOutputLimit, j.MaxOutputBytes)
			case errors.Is(r.err, errNotSent):
				// It died idle (the kernel's OOM killer, say): not this job's doing.
				p.kill(w)
				return nil, Unavailable(r.err)
			default:
				// It died during the job: a Go fatal error (a template
				// recursing without end overflows the stack) is the job's.
				p.kill(w)
				return nil, fmt.Errorf("the render crashed its worker (%s): %w", w.cmd.ProcessState, r.err)
			}
		case <-ctx.Done():
			p.kill(w)
			<-done
			return nil, ctx.Err()
		case <-memory.C:
			if rss := w.rss(); rss > p.opts.MaxMemoryBytes {
				p.kill(w)
				<-done
				return nil, fmt.Errorf("render used more than the limit of %d MiB of memory", p.opts.MaxMemoryBytes>>20)
			}
		}
	}
}

// take returns an idle worker, or starts one.
func (p *Pool) take() (*worker, error) {
	p.mu.Lock()
	for len(p.idle) > 0 {
		w := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if !w.idleTimer.Stop() {
			continue // its idle timer fired: it is being closed
		}
		select {
		case <-w.exited: // died idle
			w.kill() // closes its pipes; it is reaped already
		default:
			p.mu.Unlock()
			return w, nil
		}
	}
	p.mu.Unlock()
	return p.start()
}

// put returns w to the idle list; it exits after IdleTimeout unused.
func (p *Pool) put(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.idleTimer = time.AfterFunc(p.opts.IdleTimeout, func() {
		p.mu.Lock()
		for i, iw := range p.idle {
			if iw == w {
				p.idle = append(p.idle[:i], p.idle[i+1:]...)
				break
			}
		}
		p.mu.Unlock()
		w.close()
	})
	p.idle = append(p.idle, w)
}

func (p *Pool) kill(w *worker) {
	p.killed.Add(1)
	w.kill()
}

// start runs a new worker process.
func (p *Pool) start() (*worker, error) {
	exe := p.opts.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	jobsR, jobsW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	resultsR, resultsW, err := os.Pipe()
	if err != nil {
		_ = jobsR.Close()
		_ = jobsW.Close()
		return nil, err
	}
	// "render-worker" only names the process in ps; init dispatches on the
	// environment before any argument is parsed.
	cmd := exec.Command(exe, "render-worker")
	cmd.Env = append(os.Environ(),
		workerEnv+"="+workerProtocol,
		// A render is sequential: one core is its share.
		"GOMAXPROCS=1",
		// The heap target sits below the kill line so that the collector
		// works hard before the pool has to step in.
		"GOMEMLIMIT="+strconv.FormatInt(p.opts.MaxMemoryBytes*3/4, 10),
	)
	cmd.Stdout = os.Stderr // never the caller's stdout: `skiff render` prints manifests there
	cmd.Stderr = os.Stderr
	cmd.ExtraFiles = []*os.File{jobsR, resultsW} // fds 3 and 4
	err = cmd.Start()
	_ = jobsR.Close()
	_ = resultsW.Close()
	if err != nil {
		_ = jobsW.Close()
		_ = resultsR.Close()
		return nil, err
	}
	p.started.Add(1)
	w := &worker{cmd: cmd, jobs: jobsW, resultsFile: resultsR, results: bufio.NewReaderSize(resultsR, 64<<10), exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // reaps the process whatever ends it
		close(w.exited)
	}()
	return w, nil
}

// worker is one worker process, used by one job at a time.
type worker struct {
	cmd         *exec.Cmd
	jobs        *os.File
	resultsFile *os.File
	results     *bufio.Reader
	exited      chan struct{}
	idleTimer   *time.Timer // guarded by the pool's mu
}

// errNotSent is a job the worker did not take.
var errNotSent = errors.New("sending the job to the render worker")

// do sends j and reads its answer. A *jobError is the job's own failure;
// any other error leaves the worker unusable.
func (w *worker) do(j job) ([]jobOutput, error) {
	data, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotSent, err)
	}
	if err := writeFrame(w.jobs, frameJob, data); err != nil {
		return nil, fmt.Errorf("%w: %w", errNotSent, err)
	}
	return readResults(w.results, j.MaxOutputBytes)
}

// kill ends the process at once and waits until it is reaped.
func (w *worker) kill() {
	_ = w.cmd.Process.Kill()
	<-w.exited
	_ = w.jobs.Close()
	_ = w.resultsFile.Close()
}

// close lets an idle worker exit on its own (end of its job stream).
func (w *worker) close() {
	_ = w.jobs.Close()
	select {
	case <-w.exited:
	case <-time.After(5 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.exited
	}
	_ = w.resultsFile.Close()
}

// rss is the worker's resident memory in bytes, 0 where /proc cannot tell.
func (w *worker) rss() int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(w.cmd.Process.Pid) + "/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// Frames are a type byte, a big-endian uint32 length and the payload.
const (
	frameJob    byte = 'j' // parent → worker: a JSON job
	frameOutput byte = 'o' // one output: uint16 name length, name, flags byte, text
	frameError  byte = 'e' // the job failed: the message
	frameDone   byte = 'd' // the job succeeded
)

// maxJobBytes bounds a job frame: a request, not data.
const maxJobBytes = 16 << 20

func writeFrame(w io.Writer, typ byte, payload []byte) error {
	var hdr [5]byte
	hdr[0] = typ
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(payload)))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

func readFrameHeader(r io.Reader) (byte, uint32, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, 0, err
	}
	return hdr[0], binary.BigEndian.Uint32(hdr[1:]), nil
}

// jobError is a job's own failure, as the worker reported it.
type jobError struct{ msg string }

func (e *jobError) Error() string { return e.msg }

// readResults reads a job's outputs, refusing (before reading it) any frame
// that would take the total past budget.
func readResults(r io.Reader, budget int64) ([]jobOutput, error) {
	var outs []jobOutput
	var total int64
	for {
		typ, n, err := readFrameHeader(r)
		if err != nil {
			return nil, fmt.Errorf("reading the worker's answer: %w", err)
		}
		switch typ {
		case frameOutput:
			if total += int64(n); total > budget {
				return nil, errOutputLimit
			}
			payload := make([]byte, n)
			if _, err := io.ReadFull(r, payload); err != nil {
				return nil, fmt.Errorf("reading the worker's answer: %w", err)
			}
			out, err := decodeOutput(payload)
			if err != nil {
				return nil, err
			}
			outs = append(outs, out)
		case frameError:
			if n > 1<<20 {
				return nil, fmt.Errorf("worker error message of %d bytes", n)
			}
			msg := make([]byte, n)
			if _, err := io.ReadFull(r, msg); err != nil {
				return nil, fmt.Errorf("reading the worker's answer: %w", err)
			}
			return nil, &jobError{msg: string(msg)}
		case frameDone:
			return outs, nil
		default:
			return nil, fmt.Errorf("unexpected frame %q from the worker", typ)
		}
	}
}

func encodeOutput(o jobOutput) []byte {
	buf := make([]byte, 0, 3+len(o.Name)+len(o.Text))
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(o.Name)))
	buf = append(buf, o.Name...)
	var flags byte
	if o.CRD {
		flags = 1
	}
	buf = append(buf, flags)
	return append(buf, o.Text...)
}

func decodeOutput(p []byte) (jobOutput, error) {
	if len(p) < 3 {
		return jobOutput{}, errors.New("short output frame from the worker")
	}
	n := int(binary.BigEndian.Uint16(p))
	if len(p) < 3+n {
		return jobOutput{}, errors.New("short output frame from the worker")
	}
	return jobOutput{Name: string(p[2 : 2+n]), CRD: p[2+n] == 1, Text: p[3+n:]}, nil
}

// serveWorker runs jobs from in until it ends, writing each one's outputs
// and result to out. It returns nil at the end of in.
func serveWorker(in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	w := bufio.NewWriterSize(out, 64<<10)
	for {
		typ, n, err := readFrameHeader(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if typ != frameJob || n > maxJobBytes {
			return fmt.Errorf("unexpected frame %q of %d bytes", typ, n)
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(r, data); err != nil {
			return err
		}
		var j job
		if err := json.Unmarshal(data, &j); err != nil {
			return fmt.Errorf("decoding a job: %w", err)
		}
		outs, err := j.run()
		if err != nil {
			if err := writeFrame(w, frameError, []byte(err.Error())); err != nil {
				return err
			}
		} else {
			for _, o := range outs {
				if err := writeFrame(w, frameOutput, encodeOutput(o)); err != nil {
					return err
				}
			}
			if err := writeFrame(w, frameDone, nil); err != nil {
				return err
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}
