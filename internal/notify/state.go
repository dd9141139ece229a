package notify

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// NotifiedAnnotation records what was sent for an app, as Argo CD does.
const NotifiedAnnotation = "notified.notifications.argoproj.io"

// maxStateEntries bounds the annotation: oncePer keys accumulate (one per
// revision), so the oldest are dropped.
const maxStateEntries = 100

// State maps a sent notification's key to the Unix time it was sent.
type State map[string]int64

// ParseState reads the annotation; a malformed value starts afresh.
func ParseState(annotation string) State {
	s := State{}
	if annotation != "" {
		_ = json.Unmarshal([]byte(annotation), &s)
	}
	return s
}

// Encode returns the annotation value, keeping the newest entries.
func (s State) Encode() string {
	if len(s) > maxStateEntries {
		keys := sortedKeys(s)
		sort.SliceStable(keys, func(i, j int) bool { return s[keys[i]] > s[keys[j]] })
		for _, k := range keys[maxStateEntries:] {
			delete(s, k)
		}
	}
	data, _ := json.Marshal(s) // a map of strings to numbers always marshals
	return string(data)
}

// Delivery is a notification due: its templates to one subscription.
type Delivery struct {
	Subscription
	// StateKey is recorded in State once the delivery succeeded.
	StateKey  string
	Templates []string
}

// Plan evaluates the subscribed triggers for app and returns what is due.
// It updates state for conditions that stopped holding, so that they send
// again the next time they hold (conditions without oncePer).
func (c *Config) Plan(app map[string]any, subs []Subscription, state State, now func() time.Time) ([]Delivery, []error) {
	env := Env(app, now)
	results := map[string][]ConditionResult{}
	var due []Delivery
	var errs []error
	for _, sub := range subs {
		res, evaluated := results[sub.Trigger]
		if !evaluated {
			trigger, ok := c.Triggers[sub.Trigger]
			if !ok {
				errs = append(errs, fmt.Errorf("trigger %q is not defined", sub.Trigger))
				results[sub.Trigger] = nil
				continue
			}
			var err error
			if res, err = trigger.Evaluate(env); err != nil {
				errs = append(errs, err)
			}
			results[sub.Trigger] = res
		}
		for _, r := range res {
			key := fmt.Sprintf("%s%s:%s:%s", sub.Trigger, r.Key, sub.Service, sub.Recipient)
			if r.OncePer != "" {
				key = r.OncePer + ":" + key
			}
			if !r.Triggered {
				delete(state, key)
				continue
			}
			if _, sent := state[key]; sent {
				continue
			}
			due = append(due, Delivery{Subscription: sub, StateKey: key, Templates: r.Templates})
		}
	}
	return due, errs
}
