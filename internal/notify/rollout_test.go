package notify

import (
	"strings"
	"testing"
	"time"
)

func TestEventTrigger(t *testing.T) {
	tests := map[string]struct{ reason, want string }{
		"a rollout event":      {"RolloutCompleted", "on-rollout-completed"},
		"a three-word event":   {"RolloutStepCompleted", "on-rollout-step-completed"},
		"an analysis event":    {"AnalysisRunFailed", "on-analysis-run-failed"},
		"a ReplicaSet scaling": {"ScalingReplicaSet", "on-scaling-replica-set"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := EventTrigger(tc.reason); got != tc.want {
				t.Errorf("EventTrigger(%q) = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}

func TestEventDeliveries(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC) }
	cfg, errs := ParseRollouts(map[string]string{
		"service.webhook.hook": "url: http://127.0.0.1:1/\n",
		"trigger.on-rollout-aborted": `- when: rollout.metadata.name == "web"
  send: [rollout-aborted]`,
	}, nil)
	if len(errs) > 0 {
		t.Fatalf("parse errors: %v", errs)
	}
	subs := cfg.SubscriptionsOf(map[string]string{
		"notifications.argoproj.io/subscribe.on-rollout-completed.hook": "",
		"notifications.argoproj.io/subscribe.on-rollout-aborted.hook":   "",
	}, nil, nil)
	tests := map[string]struct {
		reason, rollout string
		want            string
	}{
		"a catalog trigger without when sends":         {reason: "RolloutCompleted", rollout: "web", want: "rollout-completed"},
		"a trigger whose condition holds sends":        {reason: "RolloutAborted", rollout: "web", want: "rollout-aborted"},
		"a trigger whose condition fails sends none":   {reason: "RolloutAborted", rollout: "api"},
		"an event nobody subscribed to sends none":     {reason: "RolloutPaused", rollout: "web"},
		"an event without a trigger of its name is ok": {reason: "SwitchService", rollout: "web"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ro := map[string]any{"metadata": map[string]any{"name": tc.rollout}}
			due, errs := cfg.EventDeliveries(tc.reason, ro, subs, now)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			var got []string
			for _, d := range due {
				got = append(got, strings.Join(d.Templates, "+"))
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("deliveries %v, want %q", got, tc.want)
			}
		})
	}
}

func TestRolloutTriggersMayLeaveWhenOut(t *testing.T) {
	trigger := map[string]string{"trigger.on-custom": "- send: [rollout-completed]\n"}
	if _, errs := ParseRollouts(trigger, nil); len(errs) > 0 {
		t.Errorf("Argo Rollouts config refused a trigger without when: %v", errs)
	}
	if _, errs := Parse(trigger, nil); len(errs) == 0 {
		t.Error("Argo CD config accepted a trigger without when")
	}
}

func TestRolloutCatalogTemplatesRender(t *testing.T) {
	cfg, errs := ParseRollouts(nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ro := map[string]any{
		"metadata": map[string]any{"name": "web"},
		"spec":     map[string]any{"replicas": 3, "strategy": map[string]any{"canary": map[string]any{"steps": []any{map[string]any{}, map[string]any{}}}}},
		"status":   map[string]any{"phase": "Degraded", "message": "RolloutAborted: metric failed", "currentStepIndex": 1},
	}
	vars := RolloutVars(ro, nil, "slack", time.Now)
	for name, tmpl := range cfg.Templates {
		n, err := tmpl.Render(vars)
		if err != nil {
			t.Errorf("template %s: %v", name, err)
			continue
		}
		if !strings.Contains(n.Message, "web") {
			t.Errorf("template %s message %q does not name the rollout", name, n.Message)
		}
	}
}
