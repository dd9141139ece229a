package project

import (
	"testing"
)

func TestExampleProject(t *testing.T) {
	p := load(t, "example-project.yaml")
	tests := map[string]struct {
		check   func() error
		wantErr string
	}{
		"its repository is permitted": {
			check: func() error { return CheckSource(p, "https://github.com/argoproj/argocd-example-apps") },
		},
		"another repository is not permitted": {
			check:   func() error { return CheckSource(p, "https://github.com/argoproj/argo-cd.git") },
			wantErr: "application repo https://github.com/argoproj/argo-cd.git is not permitted in project 'my-project'",
		},
		"its namespace of the local cluster is permitted by name": {
			check: func() error { return CheckDestination(p, "", "in-cluster", "guestbook") },
		},
		"another namespace is not permitted": {
			check:   func() error { return CheckDestination(p, "https://kubernetes.default.svc", "", "default") },
			wantErr: "application destination server 'https://kubernetes.default.svc' and namespace 'default' do not match any of the allowed destinations in project 'my-project'",
		},
		"namespaces may be created": {
			check: func() error { return CheckResource(p, "", "Namespace", false) },
		},
		"cluster roles may not be created": {
			check:   func() error { return CheckResource(p, "rbac.authorization.k8s.io", "ClusterRole", false) },
			wantErr: "resource rbac.authorization.k8s.io:ClusterRole is not permitted in project my-project",
		},
		"deployments may be created": {
			check: func() error { return CheckResource(p, "apps", "Deployment", true) },
		},
		"config maps are outside the namespace whitelist": {
			check:   func() error { return CheckResource(p, "", "ConfigMap", true) },
			wantErr: "resource :ConfigMap is not permitted in project my-project",
		},
		"resource quotas are blacklisted": {
			check:   func() error { return CheckResource(p, "", "ResourceQuota", true) },
			wantErr: "resource :ResourceQuota is not permitted in project my-project",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkErr(t, tc.check(), tc.wantErr)
		})
	}
}

func TestWindowsProject(t *testing.T) {
	p := load(t, "windows-project.yaml")
	tests := map[string]struct {
		now                     string
		app, namespace, cluster string
		manual                  bool
		want                    bool
	}{
		"a production app syncs on a weekday morning in Berlin": {
			now: "2026-03-03T09:00:00Z", app: "web-prod", namespace: "shop-web", cluster: "https://prod.example.com", want: true,
		},
		"a production app waits in the afternoon": {
			now: "2026-03-03T14:00:00Z", app: "web-prod", namespace: "shop-web", cluster: "https://prod.example.com", want: false,
		},
		"a production app waits on Saturday morning": {
			now: "2026-03-07T09:00:00Z", app: "web-prod", namespace: "shop-web", cluster: "https://prod.example.com", want: false,
		},
		"a staging app syncs in the afternoon": {
			now: "2026-03-03T14:00:00Z", app: "web-staging", namespace: "shop-web", cluster: "https://prod.example.com", want: true,
		},
		"a staging app is frozen at night": {
			now: "2026-03-03T23:00:00Z", app: "web-staging", namespace: "shop-web", cluster: "https://prod.example.com", want: false,
		},
		"a manual sync of the local tooling passes the night freeze": {
			now: "2026-03-03T23:00:00Z", app: "tools", namespace: "tools", cluster: "https://kubernetes.default.svc", manual: true, want: true,
		},
		"an automated sync of the local tooling waits for the morning": {
			now: "2026-03-04T05:59:00Z", app: "tools", namespace: "tools", cluster: "in-cluster", want: false,
		},
		"the local tooling syncs after the freeze": {
			now: "2026-03-04T06:00:00Z", app: "tools", namespace: "tools", cluster: "in-cluster", want: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, reason := CanSync(p, at(tc.now), tc.app, tc.namespace, tc.cluster, tc.manual)
			if got != tc.want {
				t.Errorf("got %v (%s), want %v", got, reason, tc.want)
			}
		})
	}
	sources := map[string]string{
		"https://github.com/example/shop":    "",
		"https://github.com/example/secrets": "application repo https://github.com/example/secrets is not permitted in project 'shop'",
	}
	for repo, want := range sources {
		checkErr(t, CheckSource(p, repo), want)
	}
	dests := map[string]string{
		"shop-web":    "",
		"kube-system": "",
		"shop-admin":  "application destination server 'https://x' and namespace 'shop-admin' do not match any of the allowed destinations in project 'shop'",
	}
	for ns, want := range dests {
		checkErr(t, CheckDestination(p, "https://x", "", ns), want)
	}
}
