package notify

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Argo Rollouts' notification configuration, in Skiff's namespace: the same
// format as Argo CD's, with triggers that fire on the Rollout's events.
const (
	RolloutConfigMapName = "argo-rollouts-notification-configmap"
	RolloutSecretName    = "argo-rollouts-notification-secret"
)

// ParseRollouts reads Argo Rollouts' notification ConfigMap and Secret,
// over the Rollouts catalog (on-rollout-completed, on-rollout-step-completed,
// on-rollout-updated, on-rollout-aborted, on-rollout-paused,
// on-analysis-run-running, on-analysis-run-error, on-analysis-run-failed,
// on-scaling-replica-set).
func ParseRollouts(cm map[string]string, secret map[string][]byte) (*Config, []error) {
	return parse(cm, secret, rolloutCatalogTemplates(), rolloutCatalogTriggers(), true)
}

// EventTrigger names the trigger an event reason fires, as Argo Rollouts
// does: "on-" and the reason in kebab case (RolloutStepCompleted →
// on-rollout-step-completed).
func EventTrigger(reason string) string {
	var b strings.Builder
	b.WriteString("on")
	for _, r := range reason {
		if unicode.IsUpper(r) {
			b.WriteByte('-')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// EventDeliveries are the notifications an event of a Rollout sends: one
// per subscription to the event's trigger whose conditions hold (a
// condition without when always does). Events send every time; there is no
// once-per state.
func (c *Config) EventDeliveries(reason string, rollout map[string]any, subs []Subscription, now func() time.Time) ([]Delivery, []error) {
	name := EventTrigger(reason)
	trigger, ok := c.Triggers[name]
	if !ok {
		return nil, nil
	}
	env := Env(nil, now)
	delete(env, "app")
	env["rollout"] = rollout
	var templates []string
	for i, cond := range trigger.Conditions {
		if strings.TrimSpace(cond.When) != "" {
			v, err := run(cond.When, env)
			if err != nil {
				return nil, []error{fmt.Errorf("trigger %s condition %d: %w", name, i, err)}
			}
			if held, _ := v.(bool); !held {
				continue
			}
		}
		templates = append(templates, cond.Send...)
	}
	var due []Delivery
	for _, sub := range subs {
		if sub.Trigger == name && len(templates) > 0 {
			due = append(due, Delivery{Subscription: sub, StateKey: name, Templates: templates})
		}
	}
	return due, nil
}

// RolloutVars returns what Rollout templates see: .rollout, .context,
// .serviceType and the helpers Vars gives.
func RolloutVars(rollout map[string]any, context map[string]string, serviceType string, now func() time.Time) map[string]any {
	vars := Vars(nil, context, serviceType, now)
	delete(vars, "app")
	vars["rollout"] = rollout
	return vars
}

func rolloutCatalogTriggers() map[string]Trigger {
	out := map[string]Trigger{}
	for _, reason := range []string{
		"RolloutCompleted", "RolloutStepCompleted", "RolloutUpdated", "RolloutAborted", "RolloutPaused",
		"AnalysisRunRunning", "AnalysisRunError", "AnalysisRunFailed", "ScalingReplicaSet",
	} {
		name := EventTrigger(reason)
		out[name] = Trigger{Name: name, Conditions: []Condition{{Send: []string{strings.TrimPrefix(name, "on-")}}}}
	}
	return out
}

func rolloutCatalogTemplate(name, title, message, color string) Template {
	return Template{
		Name:    name,
		Title:   title,
		Message: message,
		Email:   &EmailTemplate{Subject: title},
		Slack: &SlackTemplate{Attachments: `[{"title": "{{.rollout.metadata.name}}", "color": "` + color + `",
 "fields": [{"title": "Strategy", "value": "{{if .rollout.spec.strategy.blueGreen}}BlueGreen{{else}}Canary{{end}}", "short": true},
            {"title": "Phase", "value": "{{.rollout.status.phase}}", "short": true}]}]`},
	}
}

func rolloutCatalogTemplates() map[string]Template {
	list := []Template{
		rolloutCatalogTemplate("rollout-completed", "Rollout {{.rollout.metadata.name}} completed",
			"Rollout {{.rollout.metadata.name}} has been completed.", "#18be52"),
		rolloutCatalogTemplate("rollout-step-completed", "Rollout {{.rollout.metadata.name}} step completed",
			"Rollout {{.rollout.metadata.name}} step number {{.rollout.status.currentStepIndex}}/{{len .rollout.spec.strategy.canary.steps}} has been completed.", "#18be52"),
		rolloutCatalogTemplate("rollout-updated", "Rollout {{.rollout.metadata.name}} updated",
			"Rollout {{.rollout.metadata.name}} has been updated.", "#0dadea"),
		rolloutCatalogTemplate("rollout-aborted", "Rollout {{.rollout.metadata.name}} aborted",
			"Rollout {{.rollout.metadata.name}} has been aborted: {{.rollout.status.message}}", "#e96d76"),
		rolloutCatalogTemplate("rollout-paused", "Rollout {{.rollout.metadata.name}} paused",
			"Rollout {{.rollout.metadata.name}} has been paused.", "#0dadea"),
		rolloutCatalogTemplate("analysis-run-running", "Rollout {{.rollout.metadata.name}}: analysis running",
			"Rollout {{.rollout.metadata.name}}'s analysis run is running.", "#0dadea"),
		rolloutCatalogTemplate("analysis-run-error", "Rollout {{.rollout.metadata.name}}: analysis error",
			"Rollout {{.rollout.metadata.name}}'s analysis run is in error state.", "#e96d76"),
		rolloutCatalogTemplate("analysis-run-failed", "Rollout {{.rollout.metadata.name}}: analysis failed",
			"Rollout {{.rollout.metadata.name}}'s analysis run failed.", "#e96d76"),
		rolloutCatalogTemplate("scaling-replica-set", "Rollout {{.rollout.metadata.name}} scaled",
			"Scaling Rollout {{.rollout.metadata.name}}'s replicaset to {{.rollout.spec.replicas}}.", "#18be52"),
	}
	out := make(map[string]Template, len(list))
	for _, t := range list {
		out[t.Name] = t
	}
	return out
}
