package notify

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
)

// Notification is a rendered template, ready for a service.
type Notification struct {
	Message string
	Title   string
	Slack   *SlackTemplate
	Webhook map[string]WebhookTemplate
	Email   *EmailTemplate
}

// funcs are sprig's functions without those that read the environment:
// a template must not leak the controller's variables.
var funcs = func() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	return f
}()

// check parses every field so that a broken template is reported when the
// configuration is read rather than on first use.
func (t Template) check() error {
	for field, text := range t.fields() {
		if _, err := template.New(field).Funcs(funcs).Parse(text); err != nil {
			return err
		}
	}
	return nil
}

func (t Template) fields() map[string]string {
	f := map[string]string{"message": t.Message, "title": t.Title}
	if t.Slack != nil {
		f["slack.attachments"], f["slack.blocks"] = t.Slack.Attachments, t.Slack.Blocks
	}
	if t.Email != nil {
		f["email.subject"] = t.Email.Subject
	}
	for name, w := range t.Webhook {
		f["webhook."+name+".path"], f["webhook."+name+".body"] = w.Path, w.Body
	}
	return f
}

// Vars returns what templates see: .app, .context, .serviceType (also as
// .notificationType) and the time, strings and repo helpers.
func Vars(app map[string]any, context map[string]string, serviceType string, now func() time.Time) map[string]any {
	return map[string]any{
		"app":              app,
		"context":          context,
		"serviceType":      serviceType,
		"notificationType": serviceType,
		"time": map[string]any{
			"Now":   now,
			"Parse": func(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) },
		},
		"strings": map[string]any{
			"ToUpper":    strings.ToUpper,
			"ToLower":    strings.ToLower,
			"ReplaceAll": strings.ReplaceAll,
		},
		"repo": map[string]any{
			"RepoURLToHTTPS":    repoURLToHTTPS,
			"FullNameByRepoURL": fullNameByRepoURL,
		},
	}
}

// Render executes every field of t with vars.
func (t Template) Render(vars map[string]any) (Notification, error) {
	exec := func(field, text string) (string, error) {
		if text == "" {
			return "", nil
		}
		tmpl, err := template.New(field).Funcs(funcs).Option("missingkey=zero").Parse(text)
		if err != nil {
			return "", fmt.Errorf("template %s %s: %w", t.Name, field, err)
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, vars); err != nil {
			return "", fmt.Errorf("template %s %s: %w", t.Name, field, err)
		}
		return buf.String(), nil
	}
	var n Notification
	var err error
	if n.Message, err = exec("message", t.Message); err != nil {
		return n, err
	}
	if n.Title, err = exec("title", t.Title); err != nil {
		return n, err
	}
	if t.Slack != nil {
		n.Slack = &SlackTemplate{}
		if n.Slack.Attachments, err = exec("slack.attachments", t.Slack.Attachments); err != nil {
			return n, err
		}
		if n.Slack.Blocks, err = exec("slack.blocks", t.Slack.Blocks); err != nil {
			return n, err
		}
	}
	if t.Email != nil {
		n.Email = &EmailTemplate{}
		if n.Email.Subject, err = exec("email.subject", t.Email.Subject); err != nil {
			return n, err
		}
	}
	if len(t.Webhook) > 0 {
		n.Webhook = map[string]WebhookTemplate{}
		for name, w := range t.Webhook {
			out := WebhookTemplate{Method: w.Method}
			if out.Path, err = exec("webhook."+name+".path", w.Path); err != nil {
				return n, err
			}
			if out.Body, err = exec("webhook."+name+".body", w.Body); err != nil {
				return n, err
			}
			n.Webhook[name] = out
		}
	}
	return n, nil
}

// Merge combines the notifications of a condition's templates: later
// templates fill in what earlier ones left empty, as notifications-engine does.
func Merge(ns []Notification) Notification {
	var out Notification
	for _, n := range ns {
		if out.Message == "" {
			out.Message = n.Message
		}
		if out.Title == "" {
			out.Title = n.Title
		}
		if out.Slack == nil {
			out.Slack = n.Slack
		}
		if out.Email == nil {
			out.Email = n.Email
		}
		for name, w := range n.Webhook {
			if out.Webhook == nil {
				out.Webhook = map[string]WebhookTemplate{}
			}
			if _, ok := out.Webhook[name]; !ok {
				out.Webhook[name] = w
			}
		}
	}
	return out
}

// repoURLToHTTPS turns git@host:org/repo.git into https://host/org/repo.
func repoURLToHTTPS(repoURL string) string {
	s := strings.TrimSuffix(repoURL, ".git")
	if rest, ok := strings.CutPrefix(s, "git@"); ok {
		host, path, _ := strings.Cut(rest, ":")
		return "https://" + host + "/" + path
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return repoURL
	}
	u.Scheme, u.User = "https", nil
	return u.String()
}

// fullNameByRepoURL returns "org/repo" of a repository URL.
func fullNameByRepoURL(repoURL string) string {
	u, err := url.Parse(repoURLToHTTPS(repoURL))
	if err != nil {
		return ""
	}
	return strings.Trim(u.Path, "/")
}
