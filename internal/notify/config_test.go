package notify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func readFixture(t *testing.T, name string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	if err := yaml.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func toBytes(m map[string]string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

func TestParse(t *testing.T) {
	tests := map[string]struct {
		cm, secret map[string]string
		wantErrs   []string
		check      func(t *testing.T, c *Config)
	}{
		"a service's $key references are resolved from the Secret": {
			cm:     map[string]string{"service.slack": "token: $slack-token\napiURL: http://127.0.0.1/api"},
			secret: map[string]string{"slack-token": "xoxb-1"},
			check: func(t *testing.T, c *Config) {
				want := ServiceConfig{Type: "slack", Name: "slack", Settings: map[string]any{"token": "xoxb-1", "apiURL": "http://127.0.0.1/api"}}
				if diff := cmp.Diff(want, c.Services["slack"]); diff != "" {
					t.Error(diff)
				}
			},
		},
		"a named webhook service is keyed by its name": {
			cm: map[string]string{"service.webhook.github": "url: http://127.0.0.1/hook"},
			check: func(t *testing.T, c *Config) {
				if got := c.Services["github"].Type; got != "webhook" {
					t.Errorf("type = %q, want webhook", got)
				}
			},
		},
		"triggers, templates, default triggers and context are read": {
			cm: map[string]string{
				"trigger.on-drift": "- when: app.status.sync.status == 'OutOfSync'\n  oncePer: app.status.sync.revision\n  send: [drift]",
				"template.drift":   "message: drift\nwebhook:\n  hook:\n    method: POST\n    body: '{}'",
				"defaultTriggers":  "[on-drift]",
				"context":          "argocdUrl: https://cd.example.com",
			},
			check: func(t *testing.T, c *Config) {
				want := Trigger{Name: "on-drift", Conditions: []Condition{{When: "app.status.sync.status == 'OutOfSync'", OncePer: "app.status.sync.revision", Send: []string{"drift"}}}}
				if diff := cmp.Diff(want, c.Triggers["on-drift"]); diff != "" {
					t.Error(diff)
				}
				if c.Templates["drift"].Webhook["hook"].Method != "POST" {
					t.Error("webhook template not read")
				}
				if diff := cmp.Diff([]string{"on-drift"}, c.DefaultTriggers); diff != "" {
					t.Error(diff)
				}
				if c.Context["argocdUrl"] != "https://cd.example.com" {
					t.Error("context not read")
				}
			},
		},
		"an invalid trigger is reported and the rest still works": {
			cm: map[string]string{
				"trigger.broken": "- when: app.status ==\n  send: [app-sync-succeeded]",
				"trigger.good":   "- when: 'true'\n  send: [app-sync-succeeded]",
			},
			wantErrs: []string{"trigger.broken"},
			check: func(t *testing.T, c *Config) {
				if _, ok := c.Triggers["broken"]; ok {
					t.Error("broken trigger kept")
				}
				if _, ok := c.Triggers["good"]; !ok {
					t.Error("good trigger lost")
				}
			},
		},
		"an invalid template is reported and a trigger sending it is dropped": {
			cm: map[string]string{
				"template.broken": "message: '{{.app.metadata.name'",
				"trigger.uses":    "- when: 'true'\n  send: [broken]",
			},
			wantErrs: []string{"template.broken", "trigger.uses"},
			check: func(t *testing.T, c *Config) {
				if _, ok := c.Triggers["on-sync-succeeded"]; !ok {
					t.Error("catalog lost")
				}
			},
		},
		"the legacy config.yaml and notifiers.yaml map onto the same model": {
			cm:     readFixture(t, "legacy-cm.yaml"),
			secret: readFixture(t, "legacy-secret.yaml"),
			check: func(t *testing.T, c *Config) {
				if diff := cmp.Diff([]string{"on-sync-succeeded", "on-health-degraded"}, c.DefaultTriggers); diff != "" {
					t.Error(diff)
				}
				if c.Services["slack"].Settings["token"] != "xoxb-very-secret-token" {
					t.Errorf("slack service = %v", c.Services["slack"])
				}
				if c.Templates["custom"].Message == "" || c.Triggers["on-custom"].Conditions[0].Send[0] != "custom" {
					t.Error("custom legacy trigger or template lost")
				}
				if got := c.Mask("token is xoxb-very-secret-token"); strings.Contains(got, "secret-token") {
					t.Errorf("mask = %q", got)
				}
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c, errs := Parse(tt.cm, toBytes(tt.secret))
			if len(errs) != len(tt.wantErrs) {
				t.Fatalf("errors = %v, want %d mentioning %v", errs, len(tt.wantErrs), tt.wantErrs)
			}
			for i, want := range tt.wantErrs {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d = %v, want it to mention %q", i, errs[i], want)
				}
			}
			tt.check(t, c)
		})
	}
}
