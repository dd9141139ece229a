package project

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// proj returns a project named "p" with spec.
func proj(spec v1alpha1.AppProjectSpec) *v1alpha1.AppProject {
	return &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: spec}
}

// load reads an AppProject from testdata, rejecting unknown fields.
func load(t *testing.T, name string) *v1alpha1.AppProject {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var p v1alpha1.AppProject
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &p
}

// checkErr fails t unless err is nil when want is empty, or a not-permitted
// error with message want otherwise.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("got error %q, want none", err)
	case want != "" && err == nil:
		t.Errorf("got no error, want %q", want)
	case want != "" && err.Error() != want:
		t.Errorf("got error %q, want %q", err, want)
	case want != "" && !errors.Is(err, ErrNotPermitted):
		t.Errorf("error %q does not match ErrNotPermitted", err)
	}
}

func TestDefault(t *testing.T) {
	p := Default("argocd")
	if p.Name != "default" || p.Namespace != "argocd" {
		t.Errorf("got %s/%s, want argocd/default", p.Namespace, p.Name)
	}
	if p.APIVersion != "argoproj.io/v1alpha1" || p.Kind != "AppProject" {
		t.Errorf("got %s %s, want argoproj.io/v1alpha1 AppProject", p.APIVersion, p.Kind)
	}
	tests := map[string]func() error{
		"any https repository is permitted": func() error { return CheckSource(p, "https://github.com/any/repo.git") },
		"any scp-like repository is permitted": func() error {
			return CheckSource(p, "git@gitlab.example.com:group/sub/repo.git")
		},
		"a Helm repository is permitted":           func() error { return CheckSource(p, "https://charts.example.com") },
		"the local cluster by server is permitted": func() error { return CheckDestination(p, InClusterServer, "", "kube-system") },
		"the local cluster by name is permitted":   func() error { return CheckDestination(p, "", InClusterName, "default") },
		"a remote cluster by server is permitted":  func() error { return CheckDestination(p, "https://10.0.0.1:6443", "", "web") },
		"a cluster-scoped destination without namespace is permitted": func() error {
			return CheckDestination(p, "https://10.0.0.1:6443", "", "")
		},
		"a cluster-scoped kind is permitted":      func() error { return CheckResource(p, "rbac.authorization.k8s.io", "ClusterRole", false) },
		"a core cluster-scoped kind is permitted": func() error { return CheckResource(p, "", "Namespace", false) },
		"a namespaced kind is permitted":          func() error { return CheckResource(p, "apps", "Deployment", true) },
	}
	for name, check := range tests {
		t.Run(name, func(t *testing.T) {
			checkErr(t, check(), "")
		})
	}
	if ok, reason := CanSync(p, fixed, "app", "ns", InClusterServer, false); !ok {
		t.Errorf("the default project blocks syncs: %s", reason)
	}
}

func TestNilProject(t *testing.T) {
	for name, err := range map[string]error{
		"CheckSource":      CheckSource(nil, "https://x"),
		"CheckDestination": CheckDestination(nil, "*", "", "*"),
		"CheckResource":    CheckResource(nil, "", "Pod", true),
	} {
		if err == nil || errors.Is(err, ErrNotPermitted) {
			t.Errorf("%s(nil) = %v, want a plain error", name, err)
		}
	}
	if ok, _ := CanSync(nil, fixed, "a", "n", "c", false); !ok {
		t.Error("CanSync(nil) blocks syncs, want no windows")
	}
}

func TestCheckSource(t *testing.T) {
	tests := map[string]struct {
		repos   []string
		repoURL string
		wantErr string
	}{
		"a star permits any repository": {
			repos: []string{"*"}, repoURL: "https://example.com/a/b/c.git",
		},
		"an exact URL is permitted": {
			repos: []string{"https://github.com/org/app.git"}, repoURL: "https://github.com/org/app.git",
		},
		"a URL differing only in case and .git suffix is permitted": {
			repos: []string{"https://github.com/org/app.git"}, repoURL: " HTTPS://GitHub.com/Org/App ",
		},
		"a trailing slash is ignored": {
			repos: []string{"https://github.com/org/app"}, repoURL: "https://github.com/org/app/",
		},
		"an scp-like address matches the equivalent ssh URL": {
			repos: []string{"ssh://git@github.com/org/app.git"}, repoURL: "git@github.com:org/app.git",
		},
		"an ssh URL matches the equivalent scp-like pattern": {
			repos: []string{"git@github.com:org/*"}, repoURL: "ssh://git@github.com/org/app",
		},
		"a glob permits a repository of the organization": {
			repos: []string{"https://github.com/org/*"}, repoURL: "https://github.com/org/app.git",
		},
		"a single star does not cross a slash": {
			repos: []string{"https://github.com/org/*"}, repoURL: "https://github.com/org/team/app.git",
			wantErr: "application repo https://github.com/org/team/app.git is not permitted in project 'p'",
		},
		"a double star crosses slashes": {
			repos: []string{"https://github.com/org/**"}, repoURL: "https://github.com/org/team/app.git",
		},
		"another organization is not permitted": {
			repos: []string{"https://github.com/org/*"}, repoURL: "https://github.com/other/app",
			wantErr: "application repo https://github.com/other/app is not permitted in project 'p'",
		},
		"no repositories permit nothing": {
			repos: nil, repoURL: "https://github.com/org/app",
			wantErr: "application repo https://github.com/org/app is not permitted in project 'p'",
		},
		"a deny pattern rejects the repository it names": {
			repos: []string{"*", "!https://github.com/org/secret"}, repoURL: "https://github.com/org/secret.git",
			wantErr: "application repo https://github.com/org/secret.git is not permitted in project 'p'",
		},
		"a deny wins even when listed before the allow": {
			repos: []string{"!https://github.com/org/secret", "https://github.com/org/*"}, repoURL: "https://github.com/org/secret",
			wantErr: "application repo https://github.com/org/secret is not permitted in project 'p'",
		},
		"a deny glob rejects what it matches": {
			repos: []string{"*", "!git@github.com:evil/*"}, repoURL: "ssh://git@github.com/evil/app.git",
			wantErr: "application repo ssh://git@github.com/evil/app.git is not permitted in project 'p'",
		},
		"an https pattern does not match the ssh URL of the same repository": {
			repos: []string{"https://github.com/org/*"}, repoURL: "git@github.com:org/app.git",
			wantErr: "application repo git@github.com:org/app.git is not permitted in project 'p'",
		},
		"a deny pattern leaves other allowed repositories permitted": {
			repos: []string{"https://github.com/org/*", "!https://github.com/org/secret"}, repoURL: "https://github.com/org/app",
		},
		"a deny pattern is normalized like the URL": {
			repos: []string{"*", "!HTTPS://GITHUB.COM/org/secret.git"}, repoURL: "https://github.com/org/secret",
			wantErr: "application repo https://github.com/org/secret is not permitted in project 'p'",
		},
		"a list of only deny patterns permits other repositories, as in Argo CD": {
			repos: []string{"!https://github.com/org/secret"}, repoURL: "https://github.com/org/app",
		},
		"a malformed glob permits nothing": {
			repos: []string{"https://github.com/org/[app"}, repoURL: "https://github.com/org/[app",
			wantErr: "application repo https://github.com/org/[app is not permitted in project 'p'",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := CheckSource(proj(v1alpha1.AppProjectSpec{SourceRepos: tc.repos}), tc.repoURL)
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestCheckDestination(t *testing.T) {
	type dst = v1alpha1.ApplicationDestination
	const remote = "https://10.0.0.1:6443"
	tests := map[string]struct {
		destinations            []dst
		server, name, namespace string
		wantErr                 string
	}{
		"stars permit any server and namespace": {
			destinations: []dst{{Server: "*", Namespace: "*"}},
			server:       remote, namespace: "web",
		},
		"an exact server and namespace are permitted": {
			destinations: []dst{{Server: remote, Namespace: "web"}},
			server:       remote, namespace: "web",
		},
		"another namespace is not permitted": {
			destinations: []dst{{Server: remote, Namespace: "web"}},
			server:       remote, namespace: "db",
			wantErr: "application destination server 'https://10.0.0.1:6443' and namespace 'db' do not match any of the allowed destinations in project 'p'",
		},
		"another server is not permitted": {
			destinations: []dst{{Server: remote, Namespace: "*"}},
			server:       "https://10.0.0.2:6443", namespace: "web",
			wantErr: "application destination server 'https://10.0.0.2:6443' and namespace 'web' do not match any of the allowed destinations in project 'p'",
		},
		"a namespace glob is permitted": {
			destinations: []dst{{Server: "*", Namespace: "team-*"}},
			server:       remote, namespace: "team-a",
		},
		"a cluster name glob is permitted": {
			destinations: []dst{{Name: "prod-*", Namespace: "*"}},
			name:         "prod-eu", namespace: "web",
		},
		"a cluster name outside the glob is reported by name": {
			destinations: []dst{{Name: "prod-*", Namespace: "*"}},
			name:         "dev-eu", namespace: "web",
			wantErr: "application destination name 'dev-eu' and namespace 'web' do not match any of the allowed destinations in project 'p'",
		},
		"an entry by name does not permit a destination by server": {
			destinations: []dst{{Name: "prod", Namespace: "*"}},
			server:       remote, namespace: "web",
			wantErr: "application destination server 'https://10.0.0.1:6443' and namespace 'web' do not match any of the allowed destinations in project 'p'",
		},
		"no destinations permit nothing": {
			server: remote, namespace: "web",
			wantErr: "application destination server 'https://10.0.0.1:6443' and namespace 'web' do not match any of the allowed destinations in project 'p'",
		},
		"the in-cluster name matches an entry for the local server": {
			destinations: []dst{{Server: InClusterServer, Namespace: "web"}},
			name:         InClusterName, namespace: "web",
		},
		"the local server matches an entry for the in-cluster name": {
			destinations: []dst{{Name: InClusterName, Namespace: "web"}},
			server:       InClusterServer, namespace: "web",
		},
		"a denied local server also denies the in-cluster name": {
			destinations: []dst{{Server: "*", Namespace: "*"}, {Server: "!" + InClusterServer, Namespace: "*"}},
			name:         InClusterName, namespace: "web",
			wantErr: "application destination name 'in-cluster' and namespace 'web' do not match any of the allowed destinations in project 'p'",
		},
		"a denied namespace is not permitted": {
			destinations: []dst{{Server: "*", Namespace: "*"}, {Server: "*", Namespace: "!kube-system"}},
			server:       remote, namespace: "kube-system",
			wantErr: "application destination server 'https://10.0.0.1:6443' and namespace 'kube-system' do not match any of the allowed destinations in project 'p'",
		},
		"a deny wins even when listed first": {
			destinations: []dst{{Server: "*", Namespace: "!kube-*"}, {Server: "*", Namespace: "*"}},
			server:       remote, namespace: "kube-public",
			wantErr: "application destination server 'https://10.0.0.1:6443' and namespace 'kube-public' do not match any of the allowed destinations in project 'p'",
		},
		"a deny leaves other namespaces permitted": {
			destinations: []dst{{Server: "*", Namespace: "*"}, {Server: "*", Namespace: "!kube-system"}},
			server:       remote, namespace: "web",
		},
		"a negated namespace alone permits every other namespace, as in Argo CD": {
			destinations: []dst{{Server: "*", Namespace: "!kube-system"}},
			server:       remote, namespace: "web",
		},
		"a denied server is not permitted": {
			destinations: []dst{{Server: "*", Namespace: "*"}, {Server: "!https://10.0.0.*", Namespace: "*"}},
			server:       remote, namespace: "web",
			wantErr: "application destination server 'https://10.0.0.1:6443' and namespace 'web' do not match any of the allowed destinations in project 'p'",
		},
		"a denied cluster name is not permitted": {
			destinations: []dst{{Name: "*", Namespace: "*"}, {Name: "!prod", Namespace: "*"}},
			name:         "prod", namespace: "web",
			wantErr: "application destination name 'prod' and namespace 'web' do not match any of the allowed destinations in project 'p'",
		},
		"an empty namespace matches a star": {
			destinations: []dst{{Server: remote, Namespace: "*"}},
			server:       remote,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := CheckDestination(proj(v1alpha1.AppProjectSpec{Destinations: tc.destinations}), tc.server, tc.name, tc.namespace)
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestCheckResource(t *testing.T) {
	type gk = metav1.GroupKind
	tests := map[string]struct {
		spec        v1alpha1.AppProjectSpec
		group, kind string
		namespaced  bool
		wantErr     string
	}{
		"an empty cluster whitelist permits no cluster-scoped kind": {
			group: "", kind: "Namespace",
			wantErr: "resource :Namespace is not permitted in project p",
		},
		"an empty but present cluster whitelist permits no cluster-scoped kind": {
			spec:  v1alpha1.AppProjectSpec{ClusterResourceWhitelist: []gk{}},
			group: "rbac.authorization.k8s.io", kind: "ClusterRole",
			wantErr: "resource rbac.authorization.k8s.io:ClusterRole is not permitted in project p",
		},
		"a whitelisted cluster-scoped kind is permitted": {
			spec:  v1alpha1.AppProjectSpec{ClusterResourceWhitelist: []gk{{Group: "", Kind: "Namespace"}}},
			group: "", kind: "Namespace",
		},
		"a cluster-scoped kind outside the whitelist is not permitted": {
			spec:  v1alpha1.AppProjectSpec{ClusterResourceWhitelist: []gk{{Group: "", Kind: "Namespace"}}},
			group: "rbac.authorization.k8s.io", kind: "ClusterRole",
			wantErr: "resource rbac.authorization.k8s.io:ClusterRole is not permitted in project p",
		},
		"a cluster whitelist glob on the group is permitted": {
			spec:  v1alpha1.AppProjectSpec{ClusterResourceWhitelist: []gk{{Group: "*.k8s.io", Kind: "*"}}},
			group: "rbac.authorization.k8s.io", kind: "ClusterRoleBinding",
		},
		"a cluster whitelist glob on the kind is permitted": {
			spec:  v1alpha1.AppProjectSpec{ClusterResourceWhitelist: []gk{{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole*"}}},
			group: "rbac.authorization.k8s.io", kind: "ClusterRoleBinding",
		},
		"a star group does not stand for a different kind": {
			spec:  v1alpha1.AppProjectSpec{ClusterResourceWhitelist: []gk{{Group: "*", Kind: "Namespace"}}},
			group: "", kind: "PersistentVolume",
			wantErr: "resource :PersistentVolume is not permitted in project p",
		},
		"a blacklisted cluster-scoped kind is not permitted even if whitelisted": {
			spec: v1alpha1.AppProjectSpec{
				ClusterResourceWhitelist: []gk{{Group: "*", Kind: "*"}},
				ClusterResourceBlacklist: []gk{{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}},
			},
			group: "apiextensions.k8s.io", kind: "CustomResourceDefinition",
			wantErr: "resource apiextensions.k8s.io:CustomResourceDefinition is not permitted in project p",
		},
		"a cluster blacklist leaves other whitelisted kinds permitted": {
			spec: v1alpha1.AppProjectSpec{
				ClusterResourceWhitelist: []gk{{Group: "*", Kind: "*"}},
				ClusterResourceBlacklist: []gk{{Group: "apiextensions.k8s.io", Kind: "*"}},
			},
			group: "", kind: "Namespace",
		},
		"the cluster whitelist does not apply to namespaced kinds": {
			spec:  v1alpha1.AppProjectSpec{ClusterResourceBlacklist: []gk{{Group: "*", Kind: "*"}}},
			group: "apps", kind: "Deployment", namespaced: true,
		},
		"no namespace lists permit every namespaced kind": {
			group: "", kind: "ConfigMap", namespaced: true,
		},
		"a blacklisted namespaced kind is not permitted": {
			spec:  v1alpha1.AppProjectSpec{NamespaceResourceBlacklist: []gk{{Group: "", Kind: "ResourceQuota"}}},
			group: "", kind: "ResourceQuota", namespaced: true,
			wantErr: "resource :ResourceQuota is not permitted in project p",
		},
		"a namespace blacklist glob rejects what it matches": {
			spec:  v1alpha1.AppProjectSpec{NamespaceResourceBlacklist: []gk{{Group: "networking.k8s.io", Kind: "*"}}},
			group: "networking.k8s.io", kind: "NetworkPolicy", namespaced: true,
			wantErr: "resource networking.k8s.io:NetworkPolicy is not permitted in project p",
		},
		"a namespaced kind in the whitelist is permitted": {
			spec:  v1alpha1.AppProjectSpec{NamespaceResourceWhitelist: []gk{{Group: "apps", Kind: "Deployment"}}},
			group: "apps", kind: "Deployment", namespaced: true,
		},
		"a namespaced kind outside a non-empty whitelist is not permitted": {
			spec:  v1alpha1.AppProjectSpec{NamespaceResourceWhitelist: []gk{{Group: "apps", Kind: "Deployment"}}},
			group: "", kind: "Secret", namespaced: true,
			wantErr: "resource :Secret is not permitted in project p",
		},
		"an empty but present namespace whitelist permits nothing, as in Argo CD": {
			spec:  v1alpha1.AppProjectSpec{NamespaceResourceWhitelist: []gk{}},
			group: "", kind: "ConfigMap", namespaced: true,
			wantErr: "resource :ConfigMap is not permitted in project p",
		},
		"the namespace blacklist wins over the namespace whitelist": {
			spec: v1alpha1.AppProjectSpec{
				NamespaceResourceWhitelist: []gk{{Group: "*", Kind: "*"}},
				NamespaceResourceBlacklist: []gk{{Group: "", Kind: "Secret"}},
			},
			group: "", kind: "Secret", namespaced: true,
			wantErr: "resource :Secret is not permitted in project p",
		},
		"the namespace lists do not apply to cluster-scoped kinds": {
			spec: v1alpha1.AppProjectSpec{
				ClusterResourceWhitelist:   []gk{{Group: "", Kind: "Namespace"}},
				NamespaceResourceBlacklist: []gk{{Group: "*", Kind: "*"}},
			},
			group: "", kind: "Namespace",
		},
		"a malformed pattern matches nothing": {
			spec:  v1alpha1.AppProjectSpec{ClusterResourceWhitelist: []gk{{Group: "[", Kind: "*"}}},
			group: "[", kind: "Thing",
			wantErr: "resource [:Thing is not permitted in project p",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := CheckResource(proj(tc.spec), tc.group, tc.kind, tc.namespaced)
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestCheckClusterDestination(t *testing.T) {
	type dst = v1alpha1.ApplicationDestination
	const east = "https://east.example:6443"
	tests := map[string]struct {
		spec                          v1alpha1.AppProjectSpec
		server, name                  string
		clusterServer, clusterProject string
		wantErr                       string
	}{
		"a named destination matches an entry for its cluster's server": {
			spec: v1alpha1.AppProjectSpec{Destinations: []dst{{Server: east, Namespace: "*"}}},
			name: "east", clusterServer: east,
		},
		"a named destination is denied by its cluster's denied server": {
			spec: v1alpha1.AppProjectSpec{Destinations: []dst{{Server: "*", Namespace: "*"}, {Server: "!" + east, Namespace: "*"}}},
			name: "east", clusterServer: east,
			wantErr: "application destination name 'east' and namespace 'web' do not match any of the allowed destinations in project 'p'",
		},
		"a cluster denied by name is refused though its server is allowed": {
			spec: v1alpha1.AppProjectSpec{Destinations: []dst{{Server: "*", Namespace: "*"}, {Name: "!east", Namespace: "*"}}},
			name: "east", clusterServer: east,
			wantErr: "application destination name 'east' and namespace 'web' do not match any of the allowed destinations in project 'p'",
		},
		"a project of its own clusters only refuses a shared cluster": {
			spec:   v1alpha1.AppProjectSpec{Destinations: []dst{{Server: "*", Namespace: "*"}}, PermitOnlyProjectScopedClusters: true},
			server: east, clusterServer: east,
			wantErr: "application destination cluster 'https://east.example:6443' is not scoped to project 'p', which permits only its own clusters",
		},
		"a project of its own clusters only permits a cluster scoped to it": {
			spec:   v1alpha1.AppProjectSpec{Destinations: []dst{{Server: "*", Namespace: "*"}}, PermitOnlyProjectScopedClusters: true},
			server: east, clusterServer: east, clusterProject: "p",
		},
		"a cluster scoped to the project still needs a matching destination": {
			spec:   v1alpha1.AppProjectSpec{Destinations: []dst{{Server: InClusterServer, Namespace: "*"}}, PermitOnlyProjectScopedClusters: true},
			server: east, clusterServer: east, clusterProject: "p",
			wantErr: "application destination server 'https://east.example:6443' and namespace 'web' do not match any of the allowed destinations in project 'p'",
		},
		"a cluster scoped to another project is usable where destinations permit it": {
			spec:   v1alpha1.AppProjectSpec{Destinations: []dst{{Server: "*", Namespace: "*"}}},
			server: east, clusterServer: east, clusterProject: "other",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := CheckClusterDestination(proj(tc.spec), tc.server, tc.name, "web", tc.clusterServer, tc.clusterProject)
			checkErr(t, err, tc.wantErr)
		})
	}
}
