package notify

import (
	"testing"
	"time"
)

func TestRender(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	app := map[string]any{
		"metadata": map[string]any{"name": "guestbook"},
		"spec":     map[string]any{"source": map[string]any{"repoURL": "git@github.com:org/guestbook.git"}},
		"status":   map[string]any{"sync": map[string]any{"revision": "abc123"}},
	}
	tests := map[string]struct {
		template Template
		want     string
	}{
		"fields of the app and the context are rendered": {
			template: Template{Message: "{{.app.metadata.name}} at {{.context.argocdUrl}}"},
			want:     "guestbook at https://cd.example.com",
		},
		"sprig functions are available": {
			template: Template{Message: "{{.app.status.sync.revision | trunc 3 | upper}}"},
			want:     "ABC",
		},
		"the repo helper turns an SSH URL into HTTPS": {
			template: Template{Message: "{{call .repo.RepoURLToHTTPS .app.spec.source.repoURL}}"},
			want:     "https://github.com/org/guestbook",
		},
		"the time helper gives the injected clock": {
			template: Template{Message: "{{(call .time.Now).Year}}"},
			want:     "2026",
		},
		"the service type is exposed": {
			template: Template{Message: "{{.serviceType}}"},
			want:     "slack",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			n, err := tt.template.Render(Vars(app, map[string]string{"argocdUrl": "https://cd.example.com"}, "slack", now))
			if err != nil {
				t.Fatal(err)
			}
			if n.Message != tt.want {
				t.Errorf("message = %q, want %q", n.Message, tt.want)
			}
		})
	}
}

func TestCatalogTemplatesRender(t *testing.T) {
	app := map[string]any{
		"metadata": map[string]any{"name": "guestbook"},
		"status":   map[string]any{"sync": map[string]any{}, "health": map[string]any{}, "operationState": map[string]any{}},
	}
	for name, tmpl := range catalogTemplates() {
		t.Run(name, func(t *testing.T) {
			n, err := tmpl.Render(Vars(app, nil, "slack", time.Now))
			if err != nil {
				t.Fatal(err)
			}
			if n.Message == "" || n.Title == "" {
				t.Errorf("empty message or title: %+v", n)
			}
		})
	}
}
