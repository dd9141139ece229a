package appcli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Watcher is a Backend that streams the changes of an Application, which
// Waiter follows instead of reading it again and again.
type Watcher interface {
	// Watch calls onChange with the Application's current version and
	// every later one until onChange returns true or an error (which Watch
	// returns as it is), ctx ends (ctx's error), or the stream fails or
	// ends (a *StreamError).
	Watch(ctx context.Context, name string, onChange func(*v1alpha1.Application) (bool, error)) error
}

// StreamError says a stream could not be opened or ended; a Waiter reads
// the Application instead.
type StreamError struct{ Err error }

func (e *StreamError) Error() string { return "application stream: " + e.Err.Error() }
func (e *StreamError) Unwrap() error { return e.Err }

// maxEvent bounds one event of a stream.
const maxEvent = 64 << 20

// streamEvent is one event of GET /api/v1/stream/applications, Argo CD's
// shape.
type streamEvent struct {
	Result struct {
		Type        string                `json:"type"`
		Application *v1alpha1.Application `json:"application"`
	} `json:"result"`
}

// Watch follows GET /api/v1/stream/applications?name=, a stream of
// server-sent events: `data: {"result":{"type","application"}}` and
// `: ping` comments.
func (a *API) Watch(ctx context.Context, name string, onChange func(*v1alpha1.Application) (bool, error)) error {
	resp, err := a.Client.Stream(ctx, "/api/v1/stream/applications?name="+url.QueryEscape(name))
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &StreamError{Err: err}
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	var data bytes.Buffer
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("the server ended it")
			}
			return &StreamError{Err: err}
		}
		line = bytes.TrimRight(line, "\r\n")
		if value, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if data.Len()+len(value) > maxEvent {
				return &StreamError{Err: fmt.Errorf("an event larger than %d bytes", maxEvent)}
			}
			if data.Len() > 0 {
				data.WriteByte('\n') // rows of one event join with newlines
			}
			data.Write(bytes.TrimPrefix(value, []byte(" ")))
			continue
		}
		if len(line) > 0 || data.Len() == 0 {
			continue // a comment (": ping"), another field, or nothing yet
		}
		var ev streamEvent
		err = json.Unmarshal(data.Bytes(), &ev)
		data.Reset()
		if err != nil {
			return &StreamError{Err: fmt.Errorf("reading an event: %w", err)}
		}
		app := ev.Result.Application
		if app == nil || app.Name != name {
			continue
		}
		if ev.Result.Type == "DELETED" {
			return &StreamError{Err: fmt.Errorf("application %s was deleted", name)}
		}
		if done, err := onChange(app); err != nil || done {
			return err
		}
	}
}
