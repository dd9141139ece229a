package notify

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// Subscription annotations.
const (
	subscribePrefix = "notifications.argoproj.io/subscribe."
	// legacyRecipients is argocd-notifications' annotation: "slack:chan1, email:a@b".
	legacyRecipients = "recipients.argocd-notifications.argoproj.io"
)

// Subscription is one trigger sent to one recipient of one service.
type Subscription struct {
	Trigger   string
	Service   string
	Recipient string
}

// SubscriptionsOf collects the subscriptions of an app from its annotations,
// its project's annotations and the global subscriptions, without duplicates.
// Subscriptions that name no trigger use the default triggers.
func (c *Config) SubscriptionsOf(appAnnotations, projectAnnotations, appLabels map[string]string) []Subscription {
	seen := map[Subscription]bool{}
	var out []Subscription
	add := func(triggers []string, service, recipient string) {
		if len(triggers) == 0 {
			triggers = c.DefaultTriggers
		}
		for _, trigger := range triggers {
			s := Subscription{Trigger: trigger, Service: service, Recipient: strings.TrimSpace(recipient)}
			if seen[s] {
				continue
			}
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, annotations := range []map[string]string{appAnnotations, projectAnnotations} {
		for _, key := range sortedKeys(annotations) {
			value := annotations[key]
			switch {
			case strings.HasPrefix(key, subscribePrefix):
				rest := strings.TrimPrefix(key, subscribePrefix)
				var triggers []string
				service := rest
				if i := strings.LastIndex(rest, "."); i >= 0 {
					triggers, service = []string{rest[:i]}, rest[i+1:]
				}
				if strings.TrimSpace(value) == "" {
					// Webhooks are subscribed with an empty recipient.
					add(triggers, service, "")
				}
				for _, r := range strings.Split(value, ";") {
					if strings.TrimSpace(r) != "" {
						add(triggers, service, r)
					}
				}
			case key == legacyRecipients || strings.HasSuffix(key, "."+legacyRecipients):
				var triggers []string
				if t := strings.TrimSuffix(key, "."+legacyRecipients); t != key {
					triggers = []string{t}
				}
				for _, dest := range strings.Split(value, ",") {
					if service, r, ok := strings.Cut(strings.TrimSpace(dest), ":"); ok {
						add(triggers, service, r)
					}
				}
			}
		}
	}
	for _, g := range c.Subscriptions {
		if g.Selector != "" {
			sel, err := labels.Parse(g.Selector)
			if err != nil || !sel.Matches(labels.Set(appLabels)) {
				continue
			}
		}
		for _, dest := range g.Recipients {
			if service, r, ok := strings.Cut(dest, ":"); ok {
				add(g.Triggers, service, r)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Trigger < out[j].Trigger })
	return out
}
