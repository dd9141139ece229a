package logging

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/go-logr/logr"
)

// recordingSink records what reaches it.
type recordingSink struct {
	name       string
	lines      *[]string
	withValues *int
}

func (s recordingSink) Init(logr.RuntimeInfo)  {}
func (s recordingSink) Enabled(level int) bool { return level == 0 }
func (s recordingSink) Info(_ int, msg string, kv ...any) {
	*s.lines = append(*s.lines, fmt.Sprint(s.name, msg, kv))
}
func (s recordingSink) Error(err error, msg string, kv ...any) {
	*s.lines = append(*s.lines, fmt.Sprint(s.name, msg, " ", err, kv))
}
func (s recordingSink) WithValues(...any) logr.LogSink { *s.withValues++; return s }
func (s recordingSink) WithName(name string) logr.LogSink {
	s.name += name + ": "
	return s
}

func TestDeferValues(t *testing.T) {
	tests := map[string]struct {
		log  func(base logr.Logger)
		want []string
	}{
		"values given before a line come first, in order": {
			log: func(base logr.Logger) {
				base.WithValues("a", 1).WithValues("b", 2).Info("msg", "c", 3)
			},
			want: []string{"msg[a 1 b 2 c 3]"},
		},
		"an error line carries them too": {
			log: func(base logr.Logger) {
				base.WithValues("a", 1).Error(errors.New("boom"), "failed")
			},
			want: []string{"failed boom [a 1]"},
		},
		"loggers derived from one parent keep their own values": {
			log: func(base logr.Logger) {
				parent := base.WithValues("a", 1)
				first, second := parent.WithValues("b", 2), parent.WithValues("c", 3)
				first.Info("first")
				second.Info("second")
				parent.Info("parent")
			},
			want: []string{"first[a 1 b 2]", "second[a 1 c 3]", "parent[a 1]"},
		},
		"a name keeps the values given before it": {
			log: func(base logr.Logger) {
				base.WithValues("a", 1).WithName("ctl").WithValues("b", 2).Info("msg")
			},
			want: []string{"ctl: msg[a 1 b 2]"},
		},
		"a slice the caller reuses after WithValues does not change the values": {
			log: func(base logr.Logger) {
				kv := []any{"a", 1}
				log := base.WithValues(kv...)
				kv[1] = 2
				log.Info("msg")
			},
			want: []string{"msg[a 1]"},
		},
		"a disabled level writes nothing": {
			log: func(base logr.Logger) {
				base.WithValues("a", 1).V(1).Info("debug")
			},
			want: nil,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var lines []string
			withValues := 0
			tc.log(DeferValues(logr.New(recordingSink{lines: &lines, withValues: &withValues})))
			if !slices.Equal(lines, tc.want) {
				t.Errorf("lines %q, want %q", lines, tc.want)
			}
			if withValues != 0 {
				t.Errorf("the sink was given values %d times before a line, want none", withValues)
			}
		})
	}
}
