package rolloutcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/appcli"
	"github.com/skiffcd/skiff/internal/rolloutops"
)

// ParseImages reads the CONTAINER=IMAGE arguments of `set image`.
func ParseImages(pairs []string) ([]rolloutops.ContainerImage, error) {
	if len(pairs) == 0 {
		return nil, errors.New("want at least one CONTAINER=IMAGE")
	}
	images := make([]rolloutops.ContainerImage, 0, len(pairs))
	for _, p := range pairs {
		name, image, ok := strings.Cut(p, "=")
		if !ok || name == "" || image == "" {
			return nil, fmt.Errorf("%q: want CONTAINER=IMAGE", p)
		}
		images = append(images, rolloutops.ContainerImage{Container: name, Image: image})
	}
	return images, nil
}

// DegradedError is the end of `status --watch` on a Degraded rollout.
type DegradedError struct {
	Name, Message string
}

func (e *DegradedError) Error() string {
	return fmt.Sprintf("rollout %s is Degraded: %s", e.Name, e.Message)
}

// Watcher polls a Rollout and the objects under it.
type Watcher struct {
	Backend Backend
	// Interval between reads; zero means 500 ms.
	Interval time.Duration
}

// Watch reads key until see reports done or an error, or ctx ends
// (appcli.ErrTimeout when it ran out of time).
func (w Watcher) Watch(ctx context.Context, key client.ObjectKey, see func(*rolloutops.Info) (done bool, err error)) error {
	interval := w.Interval
	if interval == 0 {
		interval = 500 * time.Millisecond
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		// Each read has its own deadline: a wait's deadline makes the
		// client's rate limiter fail early, which is not a read error.
		readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		info, err := w.Backend.Load(readCtx, key)
		cancel()
		if err != nil {
			return err
		}
		if done, err := see(info); err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return appcli.ErrTimeout
			}
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

// StatusPrinter prints the status line of a Rollout each time it changes
// and says when the rollout is done: Healthy, or Degraded (a
// *DegradedError).
type StatusPrinter struct {
	Out  io.Writer
	last string
}

// See prints the status of info.Rollout if it changed.
func (p *StatusPrinter) See(info *rolloutops.Info) (bool, error) {
	var buf bytes.Buffer
	_ = WriteStatus(&buf, info.Rollout)
	if line := buf.String(); line != p.last {
		p.last = line
		fmt.Fprint(p.Out, line)
	}
	switch phase, message := Status(info.Rollout); phase {
	case v1alpha1.RolloutPhaseHealthy:
		return true, nil
	case v1alpha1.RolloutPhaseDegraded:
		return true, &DegradedError{Name: info.Rollout.Name, Message: message}
	}
	return false, nil
}

// TreePrinter shows the tree of a Rollout each time it changes: on a
// terminal it redraws in place, elsewhere it prints the new tree below the
// last one.
type TreePrinter struct {
	Out io.Writer
	TTY bool
	// Now stamps ages; nil means time.Now.
	Now func() time.Time

	last  string
	drawn int
}

// See shows info; it never says done.
func (p *TreePrinter) See(info *rolloutops.Info) (bool, error) {
	now := time.Now()
	if p.Now != nil {
		now = p.Now()
	}
	var buf bytes.Buffer
	if err := WriteTree(&buf, info, now); err != nil {
		return false, err
	}
	if p.TTY {
		if p.drawn > 0 {
			fmt.Fprintf(p.Out, "\x1b[%dA", p.drawn)
		}
		fmt.Fprint(p.Out, "\x1b[J", buf.String())
		p.drawn = bytes.Count(buf.Bytes(), []byte("\n"))
		return false, nil
	}
	// Ages change every second; only other changes print a new tree.
	var sig bytes.Buffer
	_ = WriteTree(&sig, info, time.Time{})
	if sig.String() != p.last {
		if p.last != "" {
			fmt.Fprintln(p.Out)
		}
		p.last = sig.String()
		fmt.Fprint(p.Out, buf.String())
	}
	return false, nil
}
