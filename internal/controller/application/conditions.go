package application

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// conditions edits an Application's condition list, keeping the transition
// time of a condition whose message did not change.
type conditions struct {
	byType map[v1alpha1.ApplicationConditionType]v1alpha1.ApplicationCondition
	order  []v1alpha1.ApplicationConditionType
	now    metav1.Time
}

func newConditions(existing []v1alpha1.ApplicationCondition, now metav1.Time) *conditions {
	c := &conditions{byType: map[v1alpha1.ApplicationConditionType]v1alpha1.ApplicationCondition{}, now: now}
	for _, cond := range existing {
		if _, ok := c.byType[cond.Type]; !ok {
			c.order = append(c.order, cond.Type)
		}
		c.byType[cond.Type] = cond
	}
	return c
}

// set records a condition; an empty message clears it.
func (c *conditions) set(t v1alpha1.ApplicationConditionType, message string) {
	if message == "" {
		c.clear(t)
		return
	}
	old, ok := c.byType[t]
	if ok && old.Message == message {
		return
	}
	if !ok {
		c.order = append(c.order, t)
	}
	c.byType[t] = v1alpha1.ApplicationCondition{Type: t, Message: message, LastTransitionTime: &c.now}
}

func (c *conditions) clear(t v1alpha1.ApplicationConditionType) {
	delete(c.byType, t)
}

func (c *conditions) list() []v1alpha1.ApplicationCondition {
	var out []v1alpha1.ApplicationCondition
	for _, t := range c.order {
		if cond, ok := c.byType[t]; ok {
			out = append(out, cond)
		}
	}
	return out
}

// hasCondition reports whether app has a condition of type t.
func hasCondition(app *v1alpha1.Application, t v1alpha1.ApplicationConditionType) bool {
	for _, c := range app.Status.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}
