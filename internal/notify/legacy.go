package notify

import (
	"fmt"
	"sort"

	"sigs.k8s.io/yaml"
)

// legacyConfig is the `config.yaml` key of argocd-notifications before it
// moved into Argo CD.
type legacyConfig struct {
	Triggers []struct {
		Name      string `json:"name"`
		Condition string `json:"condition,omitempty"`
		Template  string `json:"template,omitempty"`
		Enabled   *bool  `json:"enabled,omitempty"`
		// Description is accepted and ignored.
		Description string `json:"description,omitempty"`
	} `json:"triggers,omitempty"`
	Templates []struct {
		Name    string                     `json:"name"`
		Title   string                     `json:"title,omitempty"`
		Body    string                     `json:"body,omitempty"`
		Slack   *SlackTemplate             `json:"slack,omitempty"`
		Webhook map[string]WebhookTemplate `json:"webhook,omitempty"`
	} `json:"templates,omitempty"`
	Context       map[string]string    `json:"context,omitempty"`
	Subscriptions []GlobalSubscription `json:"subscriptions,omitempty"`
}

// parseLegacy maps config.yaml onto the current model: a trigger with a
// condition becomes a one-condition trigger, a trigger with only a name
// refers to the catalog, and enabled triggers become the default triggers
// that the legacy recipients annotation subscribes to.
func (c *Config) parseLegacy(value string) error {
	var legacy legacyConfig
	if err := yaml.Unmarshal([]byte(value), &legacy); err != nil {
		return err
	}
	for _, t := range legacy.Templates {
		if t.Name == "" {
			return fmt.Errorf("a template has no name")
		}
		tmpl := Template{Name: t.Name, Title: t.Title, Message: t.Body, Slack: t.Slack, Webhook: t.Webhook}
		if t.Title != "" {
			tmpl.Email = &EmailTemplate{Subject: t.Title}
		}
		if err := tmpl.check(); err != nil {
			return fmt.Errorf("template %s: %w", t.Name, err)
		}
		c.Templates[t.Name] = tmpl
	}
	for _, t := range legacy.Triggers {
		if t.Condition != "" {
			trigger := Trigger{Name: t.Name, Conditions: []Condition{{When: t.Condition, Send: []string{t.Template}}}}
			if err := trigger.check(false); err != nil {
				return fmt.Errorf("trigger %s: %w", t.Name, err)
			}
			c.Triggers[t.Name] = trigger
		} else if _, ok := c.Triggers[t.Name]; !ok {
			return fmt.Errorf("trigger %s has no condition and is not built in", t.Name)
		} else if t.Template != "" {
			existing := c.Triggers[t.Name]
			conds := make([]Condition, len(existing.Conditions))
			for i, cond := range existing.Conditions {
				cond.Send = []string{t.Template}
				conds[i] = cond
			}
			c.Triggers[t.Name] = Trigger{Name: t.Name, Conditions: conds}
		}
		if t.Enabled != nil && *t.Enabled {
			c.DefaultTriggers = append(c.DefaultTriggers, t.Name)
		}
	}
	for k, v := range legacy.Context {
		c.Context[k] = v
	}
	c.Subscriptions = append(c.Subscriptions, legacy.Subscriptions...)
	return nil
}

// parseLegacyNotifiers reads the Secret's notifiers.yaml: one entry per
// service type, webhooks as a list of named entries.
func (c *Config) parseLegacyNotifiers(value string) error {
	var notifiers map[string]any
	if err := yaml.Unmarshal([]byte(value), &notifiers); err != nil {
		return err
	}
	c.addSecretLeaves(notifiers)
	for typ, settings := range notifiers {
		switch s := settings.(type) {
		case map[string]any:
			if _, exists := c.Services[typ]; !exists {
				c.Services[typ] = ServiceConfig{Type: typ, Name: typ, Settings: s}
			}
		case []any:
			for _, e := range s {
				m, ok := e.(map[string]any)
				name, _ := m["name"].(string)
				if !ok || name == "" {
					return fmt.Errorf("%s: every entry needs a name", typ)
				}
				c.Services[name] = ServiceConfig{Type: typ, Name: name, Settings: m}
			}
		default:
			return fmt.Errorf("%s: want a mapping or a list", typ)
		}
	}
	return nil
}

// addSecretLeaves adds the credential values of notifiers.yaml (which holds
// them inline rather than as $key references) to the masked values.
func (c *Config) addSecretLeaves(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && sensitiveKeys[k] && s != "" {
				c.Secrets = append(c.Secrets, s)
			}
			c.addSecretLeaves(e)
		}
	case []any:
		for _, e := range v {
			c.addSecretLeaves(e)
		}
	}
	sort.Slice(c.Secrets, func(i, j int) bool { return len(c.Secrets[i]) > len(c.Secrets[j]) })
}

var sensitiveKeys = map[string]bool{"token": true, "password": true, "signingSecret": true, "apiKey": true, "webhookUrl": true, "webhookURL": true}
