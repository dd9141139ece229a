package notify

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// ConditionResult is the outcome of one trigger condition for one app.
type ConditionResult struct {
	// Key identifies the condition within its trigger, stable while the
	// condition's text does not change.
	Key       string
	Triggered bool
	// OncePer is the value of the condition's oncePer expression, "" without one.
	OncePer   string
	Templates []string
}

var (
	programsMu sync.Mutex
	programs   = map[string]*vm.Program{}
)

// compile caches compiled expressions: triggers are evaluated on every app change.
func compile(expression string) (*vm.Program, error) {
	programsMu.Lock()
	defer programsMu.Unlock()
	if p, ok := programs[expression]; ok {
		return p, nil
	}
	p, err := expr.Compile(expression, expr.AllowUndefinedVariables())
	if err != nil {
		return nil, err
	}
	programs[expression] = p
	return p, nil
}

// check compiles every condition so that a broken trigger is reported when
// the configuration is read.
// Event triggers (Argo Rollouts') may leave when out: the event is the
// condition.
func (t Trigger) check(eventTriggers bool) error {
	if len(t.Conditions) == 0 {
		return fmt.Errorf("no conditions")
	}
	for i, c := range t.Conditions {
		if strings.TrimSpace(c.When) == "" && !eventTriggers {
			return fmt.Errorf("condition %d: when is empty", i)
		}
		if len(c.Send) == 0 {
			return fmt.Errorf("condition %d: send is empty", i)
		}
		if strings.TrimSpace(c.When) != "" {
			if _, err := compile(c.When); err != nil {
				return fmt.Errorf("condition %d: %w", i, err)
			}
		}
		if c.OncePer != "" {
			if _, err := compile(c.OncePer); err != nil {
				return fmt.Errorf("condition %d oncePer: %w", i, err)
			}
		}
	}
	return nil
}

// Env returns the variables trigger conditions see: the app as a map and
// the time helpers of notifications-engine.
func Env(app map[string]any, now func() time.Time) map[string]any {
	return map[string]any{
		"app": app,
		"time": map[string]any{
			"Now": now,
			"Parse": func(s string) time.Time {
				t, err := time.Parse(time.RFC3339, s)
				if err != nil {
					panic(err) // expr turns the panic into an evaluation error
				}
				return t
			},
		},
	}
}

// Evaluate runs every condition of t against env.
func (t Trigger) Evaluate(env map[string]any) ([]ConditionResult, error) {
	results := make([]ConditionResult, 0, len(t.Conditions))
	for i, c := range t.Conditions {
		res := ConditionResult{Key: conditionKey(i, c.When), Templates: c.Send}
		triggered, err := run(c.When, env)
		if err != nil {
			return nil, fmt.Errorf("trigger %s condition %d: %w", t.Name, i, err)
		}
		res.Triggered, _ = triggered.(bool)
		if res.Triggered && c.OncePer != "" {
			v, err := run(c.OncePer, env)
			if err != nil {
				return nil, fmt.Errorf("trigger %s oncePer %d: %w", t.Name, i, err)
			}
			if v != nil {
				res.OncePer = fmt.Sprint(v)
			}
		}
		results = append(results, res)
	}
	return results, nil
}

func run(expression string, env map[string]any) (any, error) {
	p, err := compile(expression)
	if err != nil {
		return nil, err
	}
	return expr.Run(p, env)
}

func conditionKey(i int, when string) string {
	sum := sha1.Sum([]byte(when))
	return fmt.Sprintf("[%d].%s", i, base64.RawURLEncoding.EncodeToString(sum[:])[:12])
}
