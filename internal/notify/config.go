// Package notify is Skiff's notification engine, compatible with Argo CD
// Notifications: it reads the argocd-notifications-cm ConfigMap and the
// argocd-notifications-secret Secret (current and legacy formats), evaluates
// triggers over Applications, renders templates and resolves subscriptions.
// It does no I/O: delivery lives in notify/service, the loop in the
// notification controller.
package notify

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Names of the objects that hold the configuration.
const (
	ConfigMapName = "argocd-notifications-cm"
	SecretName    = "argocd-notifications-secret"
)

// Config is the parsed notification configuration.
type Config struct {
	// Services maps a service name ("slack", or "webhook.github" →
	// "github") to its settings, with $key references resolved.
	Services  map[string]ServiceConfig
	Templates map[string]Template
	Triggers  map[string]Trigger
	// DefaultTriggers are used by subscriptions that name no trigger.
	DefaultTriggers []string
	// Context is exposed to templates as .context.
	Context map[string]string
	// Subscriptions apply to every Application.
	Subscriptions []GlobalSubscription
	// Secrets are the Secret's values, to be masked wherever text leaves Skiff.
	Secrets []string

	// eventTriggers: triggers fire on events (Argo Rollouts), so a
	// condition may leave when out.
	eventTriggers bool
}

// ServiceConfig is one `service.<type>[.<name>]` entry.
type ServiceConfig struct {
	Type     string
	Name     string
	Settings map[string]any
}

// Template is one `template.<name>` entry.
type Template struct {
	Name    string
	Message string                     `json:"message,omitempty"`
	Title   string                     `json:"title,omitempty"`
	Slack   *SlackTemplate             `json:"slack,omitempty"`
	Webhook map[string]WebhookTemplate `json:"webhook,omitempty"`
	Email   *EmailTemplate             `json:"email,omitempty"`
}

// SlackTemplate holds Slack-specific fields, each a Go template of JSON.
type SlackTemplate struct {
	Attachments string `json:"attachments,omitempty"`
	Blocks      string `json:"blocks,omitempty"`
}

// WebhookTemplate is the request sent to one named webhook service.
type WebhookTemplate struct {
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	Body   string `json:"body,omitempty"`
}

// EmailTemplate holds email-specific fields.
type EmailTemplate struct {
	Subject string `json:"subject,omitempty"`
}

// Trigger is a named list of conditions.
type Trigger struct {
	Name       string
	Conditions []Condition
}

// Condition sends its templates when When holds; with OncePer, once per
// distinct value of that expression.
type Condition struct {
	When    string   `json:"when"`
	OncePer string   `json:"oncePer,omitempty"`
	Send    []string `json:"send"`
}

// GlobalSubscription is one entry of `subscriptions`.
type GlobalSubscription struct {
	Recipients []string `json:"recipients"`
	Triggers   []string `json:"triggers,omitempty"`
	Selector   string   `json:"selector,omitempty"`
}

// Parse reads the ConfigMap and Secret data. Entries that fail to parse are
// left out and reported in the returned error list; the rest is usable.
// The built-in catalog is included unless the ConfigMap redefines a name.
func Parse(cm map[string]string, secret map[string][]byte) (*Config, []error) {
	return parse(cm, secret, catalogTemplates(), catalogTriggers(), false)
}

func parse(cm map[string]string, secret map[string][]byte, templates map[string]Template, triggers map[string]Trigger, eventTriggers bool) (*Config, []error) {
	cfg := &Config{
		Services:      map[string]ServiceConfig{},
		Templates:     map[string]Template{},
		Triggers:      map[string]Trigger{},
		Context:       map[string]string{},
		eventTriggers: eventTriggers,
	}
	var errs []error
	for name, t := range templates {
		cfg.Templates[name] = t
	}
	for name, t := range triggers {
		cfg.Triggers[name] = t
	}
	for _, v := range secret {
		if len(v) > 0 {
			cfg.Secrets = append(cfg.Secrets, string(v))
		}
	}
	sort.Slice(cfg.Secrets, func(i, j int) bool { return len(cfg.Secrets[i]) > len(cfg.Secrets[j]) })
	resolve := func(s string) string {
		if v, ok := secret[strings.TrimPrefix(s, "$")]; ok && strings.HasPrefix(s, "$") {
			return string(v)
		}
		return s
	}
	for _, key := range sortedKeys(cm) {
		value := cm[key]
		var err error
		switch {
		case strings.HasPrefix(key, "service."):
			err = cfg.parseService(strings.TrimPrefix(key, "service."), value, resolve)
		case strings.HasPrefix(key, "template."):
			err = cfg.parseTemplate(strings.TrimPrefix(key, "template."), value)
		case strings.HasPrefix(key, "trigger."):
			err = cfg.parseTrigger(strings.TrimPrefix(key, "trigger."), value)
		case key == "defaultTriggers":
			err = yaml.Unmarshal([]byte(value), &cfg.DefaultTriggers)
		case key == "context":
			err = yaml.Unmarshal([]byte(value), &cfg.Context)
		case key == "subscriptions":
			err = yaml.Unmarshal([]byte(value), &cfg.Subscriptions)
		case key == "config.yaml":
			err = cfg.parseLegacy(value)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	if raw, ok := secret["notifiers.yaml"]; ok {
		if err := cfg.parseLegacyNotifiers(string(raw)); err != nil {
			errs = append(errs, fmt.Errorf("secret notifiers.yaml: %w", err))
		}
	}
	errs = append(errs, cfg.validate()...)
	return cfg, errs
}

func (c *Config) parseService(key, value string, resolve func(string) string) error {
	typ, name, _ := strings.Cut(key, ".")
	if name == "" {
		name = typ
	}
	settings := map[string]any{}
	if err := yaml.Unmarshal([]byte(value), &settings); err != nil {
		return err
	}
	c.Services[name] = ServiceConfig{Type: typ, Name: name, Settings: resolveRefs(settings, resolve).(map[string]any)}
	return nil
}

// resolveRefs replaces every "$key" string with the Secret's value.
func resolveRefs(v any, resolve func(string) string) any {
	switch v := v.(type) {
	case string:
		return resolve(v)
	case map[string]any:
		for k, e := range v {
			v[k] = resolveRefs(e, resolve)
		}
	case []any:
		for i, e := range v {
			v[i] = resolveRefs(e, resolve)
		}
	}
	return v
}

func (c *Config) parseTemplate(name, value string) error {
	var t Template
	if err := yaml.UnmarshalStrict([]byte(value), &t); err != nil {
		return err
	}
	t.Name = name
	if err := t.check(); err != nil {
		return err
	}
	c.Templates[name] = t
	return nil
}

func (c *Config) parseTrigger(name, value string) error {
	var conds []Condition
	if err := yaml.UnmarshalStrict([]byte(value), &conds); err != nil {
		return err
	}
	t := Trigger{Name: name, Conditions: conds}
	if err := t.check(c.eventTriggers); err != nil {
		return err
	}
	c.Triggers[name] = t
	return nil
}

// validate drops triggers that send templates that do not exist.
func (c *Config) validate() []error {
	var errs []error
	for _, name := range sortedKeys(c.Triggers) {
		for _, cond := range c.Triggers[name].Conditions {
			for _, tmpl := range cond.Send {
				if _, ok := c.Templates[tmpl]; !ok {
					errs = append(errs, fmt.Errorf("trigger.%s: template %q is not defined", name, tmpl))
					delete(c.Triggers, name)
				}
			}
		}
	}
	return errs
}

// Mask replaces every Secret value in s.
func (c *Config) Mask(s string) string {
	for _, v := range c.Secrets {
		s = strings.ReplaceAll(s, v, "******")
	}
	return s
}

// MaskError is Mask for an error, keeping nil as nil.
func (c *Config) MaskError(err error) error {
	if err == nil {
		return nil
	}
	masked := c.Mask(err.Error())
	if masked == err.Error() {
		return err
	}
	return errors.New(masked)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
