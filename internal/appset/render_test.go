package appset

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestSubstitute(t *testing.T) {
	tests := map[string]struct {
		in, want string
		wantErr  bool
	}{
		"a known parameter is replaced, spaces inside the braces trimmed": {
			in: "{{name}}-{{ path.basename }}", want: "guestbook-apps",
		},
		"an unknown parameter is left as written": {
			in: "{{name}}-{{ missing }}", want: "guestbook-{{ missing }}",
		},
		"a parameter that is not a string is left as written": {
			in: "{{nested}}", want: "{{nested}}",
		},
		"empty braces are left as written": {
			in: "a{{}}b", want: "a{{}}b",
		},
		"text without braces is unchanged": {
			in: "plain", want: "plain",
		},
		"an opening {{ without its closing }} is an error": {
			in: "{{name", wantErr: true,
		},
	}
	p := Params{"name": "guestbook", "path.basename": "apps", "nested": map[string]any{"a": "b"}}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := substitute(tc.in, p)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRenderString(t *testing.T) {
	p := Params{"name": "Guest Book", "path": map[string]any{"basename": "apps", "segments": []string{"a", "b"}}}
	tests := map[string]struct {
		in      string
		opts    Options
		want    string
		wantErr string
	}{
		"goTemplate reads nested parameters": {
			in: "{{ .path.basename }}-{{ index .path.segments 1 }}", opts: Options{GoTemplate: true}, want: "apps-b",
		},
		"goTemplate has sprig's functions": {
			in: `{{ .name | lower | replace " " "-" }}`, opts: Options{GoTemplate: true}, want: "guest-book",
		},
		"goTemplate has Argo CD's normalize and slugify": {
			in: `{{ normalize .name }} {{ slugify .name }}`, opts: Options{GoTemplate: true}, want: "guest-book guest-book",
		},
		"a missing key renders as <no value> by default": {
			in: "{{ .nope }}", opts: Options{GoTemplate: true}, want: "<no value>",
		},
		"a missing key is an error with missingkey=error": {
			in: "{{ .nope }}", opts: Options{GoTemplate: true, GoTemplateOptions: []string{"missingkey=error"}},
			wantErr: `map has no entry for key "nope"`,
		},
		"an unknown template option is an error, not a panic": {
			in: "{{ .name }}", opts: Options{GoTemplate: true, GoTemplateOptions: []string{"strict"}},
			wantErr: `unknown option "strict"`,
		},
		"sprig's env function is not there": {
			in: `{{ env "HOME" }}`, opts: Options{GoTemplate: true}, wantErr: `function "env" not defined`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := renderString(tc.in, p, tc.opts)
			if failed(t, err, tc.wantErr) {
				return
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// appYAML renders app as YAML without the fields every test has alike.
func appYAML(t *testing.T, app *v1alpha1.Application) string {
	t.Helper()
	out, err := yaml.Marshal(map[string]any{"metadata": map[string]any{
		"name": app.Name, "namespace": app.Namespace, "labels": app.Labels,
		"annotations": app.Annotations, "finalizers": app.Finalizers,
	}, "spec": app.Spec})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// canonical re-marshals YAML text so that layouts compare equal.
func canonical(t *testing.T, text string) string {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestApplications(t *testing.T) {
	tests := map[string]struct {
		spec    string
		want    string // the Applications, as a YAML list of {metadata, spec}
		wantErr string
	}{
		"the default template substitutes {{param}} in values and keys and adds the resources finalizer": {
			spec: `
generators:
- list:
    elements: [{cluster: engineering-dev, url: https://1.2.3.4}]
template:
  metadata:
    name: '{{cluster}}-guestbook'
    labels: {env: '{{cluster}}'}
    annotations: {'notify.{{cluster}}': 'yes', untouched: '{{unknown}}'}
  spec:
    project: default
    source: {repoURL: https://example.com/apps.git, targetRevision: HEAD, path: 'guestbook/{{cluster}}'}
    destination: {server: '{{url}}', namespace: guestbook}`,
			want: `
- metadata:
    name: engineering-dev-guestbook
    namespace: ""
    labels: {env: engineering-dev}
    annotations: {notify.engineering-dev: "yes", untouched: '{{unknown}}'}
    finalizers: [resources-finalizer.argocd.argoproj.io]
  spec:
    project: default
    source: {repoURL: https://example.com/apps.git, targetRevision: HEAD, path: guestbook/engineering-dev}
    destination: {server: https://1.2.3.4, namespace: guestbook}`,
		},
		"preserveResourcesOnDeletion leaves out the resources finalizer; a template's finalizers are kept": {
			spec: `
syncPolicy: {preserveResourcesOnDeletion: true}
generators:
- list: {elements: [{id: a}]}
- list:
    elements: [{id: b}]
    template: {metadata: {finalizers: [resources-finalizer.argocd.argoproj.io/background]}, spec: {project: '', destination: {}}}
template:
  metadata: {name: 'app-{{id}}'}
  spec: {project: default, source: {repoURL: r}, destination: {name: in-cluster}}`,
			want: `
- metadata: {name: app-a, namespace: "", labels: null, annotations: null, finalizers: null}
  spec: {project: default, source: {repoURL: r}, destination: {name: in-cluster}}
- metadata: {name: app-b, namespace: "", labels: null, annotations: null, finalizers: [resources-finalizer.argocd.argoproj.io/background]}
  spec: {project: default, source: {repoURL: r}, destination: {name: in-cluster}}`,
		},
		"a generator's template overrides the spec's where it sets fields; labels merge": {
			spec: `
generators:
- list:
    elements: [{id: a}]
    template:
      metadata: {labels: {from: list}}
      spec:
        project: special
        destination: {}
        source: {repoURL: '', path: 'override/{{id}}'}
template:
  metadata: {name: 'app-{{id}}', namespace: argocd, labels: {team: x}}
  spec: {project: default, source: {repoURL: r, path: 'base/{{id}}'}, destination: {server: https://kubernetes.default.svc, namespace: '{{id}}'}}`,
			want: `
- metadata: {name: app-a, namespace: argocd, labels: {team: x, from: list}, annotations: null, finalizers: [resources-finalizer.argocd.argoproj.io]}
  spec: {project: special, source: {repoURL: r, path: override/a}, destination: {server: https://kubernetes.default.svc, namespace: a}}`,
		},
		"goTemplate renders nested parameters and templatePatch adds what the typed template cannot hold": {
			spec: `
goTemplate: true
goTemplateOptions: [missingkey=error]
generators:
- list:
    elements:
    - {cluster: dev, autoSync: true, prune: true}
    - {cluster: prod, autoSync: false}
template:
  metadata: {name: '{{.cluster}}-app'}
  spec:
    project: default
    source: {repoURL: r, targetRevision: HEAD, path: 'apps/{{.cluster}}'}
    destination: {server: https://kubernetes.default.svc, namespace: '{{.cluster}}'}
templatePatch: |
  {{- if .autoSync }}
  spec:
    syncPolicy:
      automated:
        prune: {{ .prune }}
  {{- end }}`,
			want: `
- metadata: {name: dev-app, namespace: "", labels: null, annotations: null, finalizers: [resources-finalizer.argocd.argoproj.io]}
  spec:
    project: default
    source: {repoURL: r, targetRevision: HEAD, path: apps/dev}
    destination: {server: https://kubernetes.default.svc, namespace: dev}
    syncPolicy: {automated: {prune: true}}
- metadata: {name: prod-app, namespace: "", labels: null, annotations: null, finalizers: [resources-finalizer.argocd.argoproj.io]}
  spec:
    project: default
    source: {repoURL: r, targetRevision: HEAD, path: apps/prod}
    destination: {server: https://kubernetes.default.svc, namespace: prod}`,
		},
		"a templatePatch can replace a list and remove a field": {
			spec: `
generators:
- list: {elements: [{id: a}]}
template:
  metadata: {name: 'app-{{id}}', annotations: {drop: me}}
  spec: {project: default, sources: [{repoURL: r1}, {repoURL: r2}], destination: {name: in-cluster}}
templatePatch: |
  metadata: {annotations: {drop: null}}
  spec: {sources: [{repoURL: 'r-{{id}}'}]}`,
			want: `
- metadata: {name: app-a, namespace: "", labels: null, annotations: {}, finalizers: [resources-finalizer.argocd.argoproj.io]}
  spec: {project: default, sources: [{repoURL: r-a}], destination: {name: in-cluster}}`,
		},
		"a templatePatch that gives a field the wrong type is an error naming the app": {
			spec: `
generators:
- list: {elements: [{id: a}]}
template: {metadata: {name: 'app-{{id}}'}, spec: {project: default, source: {repoURL: r}, destination: {name: in-cluster}}}
templatePatch: |
  spec: {revisionHistoryLimit: many}`,
			wantErr: `application "app-a": templatePatch:`,
		},
		"a templatePatch that is not YAML is an error naming the app": {
			spec: `
generators:
- list: {elements: [{id: a}]}
template: {metadata: {name: 'app-{{id}}'}, spec: {project: default, source: {repoURL: r}, destination: {name: in-cluster}}}
templatePatch: "spec: [unclosed"`,
			wantErr: `application "app-a": templatePatch: reading the rendered patch`,
		},
		"a template that fails for one set is an error naming the app": {
			spec: `
goTemplate: true
goTemplateOptions: [missingkey=error]
generators:
- list: {elements: [{id: a, path: x}, {id: b}]}
template: {metadata: {name: 'app-{{.id}}'}, spec: {project: default, source: {repoURL: r, path: '{{.path}}'}, destination: {name: in-cluster}}}`,
			wantErr: `application "app-b": executing template "{{.path}}"`,
		},
		"two Applications with one name are an error naming it": {
			spec: `
generators:
- list: {elements: [{id: a, m: one}, {id: a, m: two}]}
template: {metadata: {name: 'app-{{id}}'}, spec: {project: default, source: {repoURL: r}, destination: {name: in-cluster}}}`,
			wantErr: `generator 1 gives two Applications named "app-a"`,
		},
		"a name with characters Kubernetes refuses is an error naming the app": {
			spec: `
generators:
- list: {elements: [{id: Bad_Name}]}
template: {metadata: {name: 'app-{{id}}'}, spec: {project: default, source: {repoURL: r}, destination: {name: in-cluster}}}`,
			wantErr: `"app-Bad_Name"`,
		},
		"an unknown {{param}} stays in the Application as written": {
			spec: `
generators:
- list: {elements: [{id: a}]}
template: {metadata: {name: 'app-{{id}}'}, spec: {project: default, source: {repoURL: r}, destination: {server: '{{missing}}x', namespace: x}}}`,
			want: `
- metadata: {name: app-a, namespace: "", labels: null, annotations: null, finalizers: [resources-finalizer.argocd.argoproj.io]}
  spec: {project: default, source: {repoURL: r}, destination: {server: '{{missing}}x', namespace: x}}`,
		},
		"an Application whose destination renders empty is an error naming it": {
			spec: `
goTemplate: true
generators:
- list: {elements: [{id: a}]}
template: {metadata: {name: 'app-{{.id}}'}, spec: {project: default, source: {repoURL: r}, destination: {server: '{{ .server | default "" }}'}}}`,
			wantErr: `application "app-a": spec.destination needs a server or a name`,
		},
		"a label value that is not a valid label is an error naming the app": {
			spec: `
generators:
- list: {elements: [{id: a, url: 'https://x/y'}]}
template: {metadata: {name: 'app-{{id}}', labels: {url: '{{url}}'}}, spec: {project: default, source: {repoURL: r}, destination: {name: in-cluster}}}`,
			wantErr: `application "app-a": label url="https://x/y"`,
		},
		"an Application without a name is an error": {
			spec: `
generators:
- list: {elements: [{id: a}]}
template: {metadata: {}, spec: {project: default, source: {repoURL: r}, destination: {name: in-cluster}}}`,
			wantErr: "has no metadata.name",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			apps, _, err := Applications(specOf(t, tc.spec), testInputs)
			if failed(t, err, tc.wantErr) {
				return
			}
			var got strings.Builder
			for i := range apps {
				if apps[i].Kind != "Application" || apps[i].APIVersion != "argoproj.io/v1alpha1" {
					t.Errorf("app %d is a %s %s", i, apps[i].APIVersion, apps[i].Kind)
				}
				got.WriteString("- " + strings.ReplaceAll(strings.TrimSpace(appYAML(t, &apps[i])), "\n", "\n  ") + "\n")
			}
			if diff := cmp.Diff(canonical(t, tc.want), canonical(t, got.String())); diff != "" {
				t.Errorf("applications differ (-want +got):\n%s", diff)
			}
		})
	}
}
