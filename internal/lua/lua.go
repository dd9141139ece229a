// Package lua runs the Lua scripts Argo CD users keep in argocd-cm: health
// checks, action discovery and actions. It uses github.com/yuin/gopher-lua
// in the sandbox Argo CD runs them in, and bounds every call.
//
// The sandbox: without useOpenLibs a script sees the base library (without
// dofile, loadfile, collectgarbage; print discards), table, string and math,
// `require` of the preloaded "os" (time and date only) and "json" (encode and
// decode), and nothing else: no io, no os.execute, no files, no package
// paths. With useOpenLibs it sees all of gopher-lua's libraries, as in Argo
// CD (the limits below still hold).
//
// The limits, per call:
//   - time: Options.Timeout (1s, as Argo CD). The VM checks it before every
//     instruction. A call stuck inside one library function (a pathological
//     string pattern) cannot be interrupted: the caller gets the timeout error
//     once Timeout plus a grace period has passed, the call's goroutine is
//     left to finish on its own, and that script is refused (ErrHung) until
//     it does, so that one bad script burns at most one goroutine.
//   - memory: Options.MemoryLimit (64 MiB). gopher-lua has no allocator hook,
//     so a watchdog samples the process heap (runtime/metrics, no
//     stop-the-world) every few milliseconds while calls run. When the heap
//     has grown by more than the limit since a call began, it forces a GC and
//     stops every running call whose live heap growth still exceeds the
//     limit. It bounds what a script keeps alive, to within one sampling
//     period of allocation; a script that starts while another hogs memory
//     may be stopped with it, so a call stopped for memory is retried once.
//     string.rep, the one library function that can build an arbitrarily large
//     value from small arguments, refuses results over the limit. `..` and
//     table.concat combine values the watchdog bounds, but a string doubled
//     again and again grows by one allocation per step, which no sampler
//     interrupts: on loaded cores the watchdog may stop it only a doubling or
//     two past the limit (tests saw 38 to 78 limits mapped).
//   - stack: gopher-lua's fixed call stack (256 frames) and registry
//     (5120 slots) bound recursion with a "stack overflow" error.
//
// Scripts are compiled once per script text (the compiled FunctionProto is
// immutable and shared); each call gets a fresh LState, so that no call can
// leave globals or patched libraries behind for the next one.
package lua

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Script is one Lua script and whether it may use all libraries
// (argocd-cm's resource.customizations.useOpenLibs.<group_kind>).
type Script struct {
	Code     string
	OpenLibs bool
}

// Options bound every call of a Runner. Zero values take the defaults.
type Options struct {
	// Timeout is the longest a call may run: 1s by default, as Argo CD.
	Timeout time.Duration
	// MemoryLimit is how much the live heap may grow during a call: 64 MiB
	// by default.
	MemoryLimit uint64
}

const (
	defaultTimeout     = time.Second
	defaultMemoryLimit = 64 << 20
	// hangGrace is how long past its timeout a call stuck in a library
	// function is waited for before it is abandoned.
	hangGrace = time.Second
	// timeoutCooldown is how long a script that ran out of time is refused.
	timeoutCooldown = 30 * time.Second
	// maxCompiled bounds the compiled-script cache; it is emptied when full,
	// which only costs recompiling the scripts in use.
	maxCompiled = 512
)

// The errors that stop a call. Errors returned wrap them, so callers can
// test with errors.Is.
var (
	ErrTimeout = errors.New("time limit exceeded")
	ErrMemory  = errors.New("memory limit exceeded")
	ErrHung    = errors.New("script refused while an earlier call of it is stuck in a library function")
)

// Runner runs scripts under its Options, caching their compiled form.
type Runner struct {
	opts Options

	mu       sync.Mutex
	compiled map[string]compiled
	hung     map[string]bool
	// timedOut is when each script last ran out of time: it is refused
	// for timeoutCooldown after, so that a script that loops on every
	// object of a kind costs one timeout, not one per object.
	timedOut map[string]time.Time

	// extend, for tests, adds Go functions to every state.
	extend func(*lua.LState)
}

type compiled struct {
	proto *lua.FunctionProto
	err   error
}

// New returns a Runner with opts, defaults filled in.
func New(opts Options) *Runner {
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	if opts.MemoryLimit == 0 {
		opts.MemoryLimit = defaultMemoryLimit
	}
	return &Runner{opts: opts, compiled: map[string]compiled{}, hung: map[string]bool{}, timedOut: map[string]time.Time{}}
}

// Default is the Runner the package-level functions use.
var Default = New(Options{})

// compile returns the compiled form of code, compiling it on first use.
func (r *Runner) compile(code string) (*lua.FunctionProto, error) {
	r.mu.Lock()
	c, ok := r.compiled[code]
	r.mu.Unlock()
	if ok {
		return c.proto, c.err
	}
	chunk, err := parse.Parse(strings.NewReader(code), "script")
	if err == nil {
		c.proto, err = lua.Compile(chunk, "script")
	}
	if err != nil {
		c.err = fmt.Errorf("lua: compiling script: %s", strings.TrimSpace(err.Error()))
	}
	r.mu.Lock()
	if len(r.compiled) >= maxCompiled {
		clear(r.compiled)
	}
	r.compiled[code] = c
	r.mu.Unlock()
	return c.proto, c.err
}

// Check compiles code, keeping it for later calls, and returns its syntax
// error if any.
func (r *Runner) Check(code string) error {
	_, err := r.compile(code)
	return err
}

// outcome carries a call's result from its goroutine.
type outcome[T any] struct {
	val T
	err error
	// hung: the call was abandoned inside a library function; finished
	// tells when it ends after all.
	hung     bool
	finished <-chan outcome[T]
}

// run executes s with setup's globals on a fresh state and decodes the
// value the script returns. It never panics and returns within the timeout
// plus a grace period, whatever the script does.
func run[T any](r *Runner, s Script, setup func(*lua.LState), decode func(*lua.LState, lua.LValue) (T, error)) (T, error) {
	var zero T
	proto, err := r.compile(s.Code)
	if err != nil {
		return zero, err
	}
	r.mu.Lock()
	hung := r.hung[s.Code]
	last, timedOut := r.timedOut[s.Code]
	r.mu.Unlock()
	if hung {
		return zero, fmt.Errorf("lua: script stopped after %s: %w: %w", r.opts.Timeout, ErrTimeout, ErrHung)
	}
	if timedOut && time.Since(last) < timeoutCooldown {
		return zero, fmt.Errorf("lua: script stopped after %s: %w (at %s; it is not run again before %s)",
			r.opts.Timeout, ErrTimeout, last.UTC().Format(time.TimeOnly), last.Add(timeoutCooldown).UTC().Format(time.TimeOnly))
	}
	res := call(r, proto, s.OpenLibs, setup, decode)
	if errors.Is(res.err, ErrMemory) {
		// Another call's allocations may have been charged to this one.
		res = call(r, proto, s.OpenLibs, setup, decode)
	}
	r.mu.Lock()
	switch {
	case res.hung:
		r.hung[s.Code] = true
		go func() {
			// Refused only while stuck: a loaded machine may merely have
			// been slow to schedule it.
			<-res.finished
			r.mu.Lock()
			delete(r.hung, s.Code)
			r.timedOut[s.Code] = time.Now()
			r.mu.Unlock()
		}()
	case errors.Is(res.err, ErrTimeout):
		r.timedOut[s.Code] = time.Now()
	default:
		delete(r.timedOut, s.Code)
	}
	r.mu.Unlock()
	return res.val, res.err
}

// call runs proto once on its own goroutine and waits for it, at most until
// the timeout plus hangGrace.
func call[T any](r *Runner, proto *lua.FunctionProto, openLibs bool, setup func(*lua.LState), decode func(*lua.LState, lua.LValue) (T, error)) outcome[T] {
	done := make(chan outcome[T], 1)
	go func() {
		var o outcome[T]
		defer func() {
			if p := recover(); p != nil {
				o = outcome[T]{err: fmt.Errorf("lua: script crashed the interpreter: %v", p)}
			}
			done <- o
		}()
		o.val, o.err = execute(r, proto, openLibs, setup, decode)
	}()
	wait := time.NewTimer(r.opts.Timeout + hangGrace)
	defer wait.Stop()
	select {
	case o := <-done:
		return o
	case <-wait.C:
		return outcome[T]{hung: true, finished: done, err: fmt.Errorf("lua: script stopped after %s: %w; it is stuck in a library function and refused until that call ends", r.opts.Timeout, ErrTimeout)}
	}
}

// execute runs proto on a fresh, sandboxed state under the time and memory
// limits.
func execute[T any](r *Runner, proto *lua.FunctionProto, openLibs bool, setup func(*lua.LState), decode func(*lua.LState, lua.LValue) (T, error)) (T, error) {
	var zero T
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	if err := openSandbox(L, openLibs, r.opts.MemoryLimit); err != nil {
		return zero, fmt.Errorf("lua: opening libraries: %w", err)
	}
	if r.extend != nil {
		r.extend(L)
	}
	setup(L)

	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	timer := time.AfterFunc(r.opts.Timeout, func() { stop(ErrTimeout) })
	defer timer.Stop()
	release := watchMemory(r.opts.MemoryLimit, func() { stop(ErrMemory) })
	defer release()
	L.SetContext(ctx)

	L.Push(L.NewFunctionFromProto(proto))
	err := L.PCall(0, 1, nil)
	if cause := context.Cause(ctx); cause != nil {
		return zero, stopped(cause, r.opts)
	}
	if err != nil {
		return zero, fmt.Errorf("lua: %w", scriptError(err))
	}
	ret := L.Get(-1)
	L.SetContext(context.Background())
	return decode(L, ret)
}

// stopped describes why a call was stopped.
func stopped(cause error, opts Options) error {
	if errors.Is(cause, ErrMemory) {
		return fmt.Errorf("lua: script stopped: it used more than %d MiB: %w", opts.MemoryLimit>>20, ErrMemory)
	}
	return fmt.Errorf("lua: script stopped after %s: %w", opts.Timeout, ErrTimeout)
}

// scriptError strips gopher-lua's error down to the script's message.
func scriptError(err error) error {
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) && apiErr.Object != nil {
		return errors.New(apiErr.Object.String())
	}
	return err
}
