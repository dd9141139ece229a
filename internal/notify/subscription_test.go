package notify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSubscriptionsOf(t *testing.T) {
	cfg := &Config{
		DefaultTriggers: []string{"on-sync-succeeded"},
		Subscriptions: []GlobalSubscription{
			{Recipients: []string{"webhook:hook"}, Triggers: []string{"on-created"}, Selector: "team=web"},
		},
	}
	tests := map[string]struct {
		app, project, labels map[string]string
		want                 []Subscription
	}{
		"an annotation naming a trigger and a service subscribes each recipient": {
			app:  map[string]string{"notifications.argoproj.io/subscribe.on-sync-failed.slack": "a;b"},
			want: []Subscription{{"on-sync-failed", "slack", "a"}, {"on-sync-failed", "slack", "b"}},
		},
		"an empty value subscribes a webhook without a recipient": {
			app:  map[string]string{"notifications.argoproj.io/subscribe.on-created.receiver": ""},
			want: []Subscription{{"on-created", "receiver", ""}},
		},
		"an annotation naming only a service uses the default triggers": {
			app:  map[string]string{"notifications.argoproj.io/subscribe.slack": "a"},
			want: []Subscription{{"on-sync-succeeded", "slack", "a"}},
		},
		"the legacy recipients annotation uses the default triggers": {
			app:  map[string]string{"recipients.argocd-notifications.argoproj.io": "slack:test-channel"},
			want: []Subscription{{"on-sync-succeeded", "slack", "test-channel"}},
		},
		"a project annotation applies and duplicates collapse": {
			app:     map[string]string{"notifications.argoproj.io/subscribe.slack": "a"},
			project: map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.slack": "a"},
			want:    []Subscription{{"on-sync-succeeded", "slack", "a"}},
		},
		"a global subscription applies to apps its selector matches": {
			labels: map[string]string{"team": "web"},
			want:   []Subscription{{"on-created", "webhook", "hook"}},
		},
		"a global subscription skips apps its selector does not match": {
			labels: map[string]string{"team": "db"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := cfg.SubscriptionsOf(tt.app, tt.project, tt.labels)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Error(diff)
			}
		})
	}
}
