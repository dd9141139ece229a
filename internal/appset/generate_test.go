package appset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clusters"
)

// specOf reads an ApplicationSet spec written as YAML.
func specOf(t *testing.T, text string) *v1alpha1.ApplicationSetSpec {
	t.Helper()
	var spec v1alpha1.ApplicationSetSpec
	if err := yaml.UnmarshalStrict([]byte(text), &spec); err != nil {
		t.Fatalf("reading spec: %v", err)
	}
	return &spec
}

// testClusters are the implicit in-cluster cluster and two cluster Secrets.
var testClusters = []clusters.Cluster{
	clusters.InCluster(),
	{
		Name: "staging", Server: "https://staging.example.com", SecretName: "cluster-staging",
		Labels:      map[string]string{clusters.SecretTypeLabel: "cluster", "env": "staging"},
		Annotations: map[string]string{"team": "payments"},
	},
	{
		Name: "Prod_EU", Server: "https://prod-eu.example.com", SecretName: "cluster-prod-eu", Project: "prod",
		Labels: map[string]string{clusters.SecretTypeLabel: "cluster", "env": "prod"},
	},
}

var testInputs = Inputs{Clusters: testClusters, Git: DirTree("testdata/repo", "0123abcd"), ClusterDecisions: testDecisions}

// testDecisions answers as Open Cluster Management's PlacementDecisions
// would for the ConfigMap "ocm-placement"; "no-match-key" lacks matchKey,
// "default-list-key" statusListKey.
func testDecisions(gen *v1alpha1.DuckTypeGenerator) (DecisionResources, error) {
	cm := map[string]string{
		"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "placementdecisions",
		"statusListKey": "decisions", "matchKey": "clusterName",
	}
	switch gen.ConfigMapRef {
	case "no-match-key":
		delete(cm, "matchKey")
	case "default-list-key":
		delete(cm, "statusListKey")
		return DecisionResources{ConfigMap: cm, Resources: []map[string]any{
			{"status": map[string]any{
				"decisions": []any{map[string]any{"clusterName": "staging"}},
				"clusters":  []any{map[string]any{"clusterName": "Prod_EU"}},
			}},
		}}, nil
	case "ocm-placement":
	default:
		return DecisionResources{}, fmt.Errorf("configmaps %q not found", gen.ConfigMapRef)
	}
	return DecisionResources{ConfigMap: cm, Resources: []map[string]any{
		{"status": map[string]any{"decisions": []any{
			map[string]any{"clusterName": "staging", "reason": ""},
			map[string]any{"clusterName": "not-registered"},
		}}},
		{"status": map[string]any{"decisions": []any{
			map[string]any{"clusterName": "Prod_EU", "reason": "picked", "weight": float64(2)},
		}}},
		{"metadata": map[string]any{"name": "no-status-yet"}},
	}}, nil
}

// failed checks err against wantErr (a part of the message; "" for no
// error) and says whether the test case ends there.
func failed(t *testing.T, err error, wantErr string) bool {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Fatal(err)
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Fatalf("error %v, want one containing %q", err, wantErr)
	}
	return wantErr != ""
}

// params is every parameter set Generate gives, across generators.
func params(res Result) []Params {
	var out []Params
	for _, s := range res.Sets {
		out = append(out, s.Params...)
	}
	return out
}

func TestGenerate(t *testing.T) {
	tests := map[string]struct {
		spec    string
		want    []Params
		wantErr string
	}{
		"a list gives its elements, values under values.<key>": {
			spec: `
generators:
- list:
    elements:
    - {cluster: engineering-dev, url: https://1.2.3.4, values: {tier: gold}}
    - {cluster: engineering-prod, url: https://2.4.6.8}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{"cluster": "engineering-dev", "url": "https://1.2.3.4", "values.tier": "gold"},
				{"cluster": "engineering-prod", "url": "https://2.4.6.8"},
			},
		},
		"elementsYaml's sets follow the elements, nested with goTemplate": {
			spec: `
goTemplate: true
generators:
- list:
    elements:
    - {cluster: a, replicas: 2}
    elementsYaml: |
      - cluster: b
        nested: {x: 1}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{"cluster": "a", "replicas": float64(2)},
				{"cluster": "b", "nested": map[string]any{"x": float64(1)}},
			},
		},
		"a list value that is not a string is an error without goTemplate": {
			spec: `
generators:
- list:
    elements:
    - {cluster: a, replicas: 2}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			wantErr: "replicas is 2, not a string",
		},
		"clusters with an empty selector give every cluster, the in-cluster one included": {
			spec: `
generators:
- clusters: {}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{"name": "in-cluster", "nameNormalized": "in-cluster", "server": "https://kubernetes.default.svc", "project": ""},
				{
					"name": "staging", "nameNormalized": "staging", "server": "https://staging.example.com", "project": "",
					"metadata.labels.argocd.argoproj.io/secret-type": "cluster", "metadata.labels.env": "staging",
					"metadata.annotations.team": "payments",
				},
				{
					"name": "Prod_EU", "nameNormalized": "prod-eu", "server": "https://prod-eu.example.com", "project": "prod",
					"metadata.labels.argocd.argoproj.io/secret-type": "cluster", "metadata.labels.env": "prod",
				},
			},
		},
		"a cluster selector matches the Secrets' labels and leaves out the in-cluster cluster without a Secret": {
			spec: `
generators:
- clusters:
    selector:
      matchExpressions: [{key: env, operator: NotIn, values: [staging]}]
    values: {revision: 'release-{{name}}', unknown: '{{nope}}'}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{{
				"name": "Prod_EU", "nameNormalized": "prod-eu", "server": "https://prod-eu.example.com", "project": "prod",
				"metadata.labels.argocd.argoproj.io/secret-type": "cluster", "metadata.labels.env": "prod",
				"values.revision": "release-Prod_EU", "values.unknown": "{{nope}}",
			}},
		},
		"goTemplate cluster parameters nest labels, annotations and values": {
			spec: `
goTemplate: true
generators:
- clusters:
    selector: {matchLabels: {env: staging}}
    values: {revision: '{{ .metadata.labels.env }}-branch'}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{{
				"name": "staging", "nameNormalized": "staging", "server": "https://staging.example.com", "project": "",
				"metadata": map[string]any{
					"labels":      map[string]any{clusters.SecretTypeLabel: "cluster", "env": "staging"},
					"annotations": map[string]any{"team": "payments"},
				},
				"values": map[string]any{"revision": "staging-branch"},
			}},
		},
		"flatList gives one set holding every cluster": {
			spec: `
goTemplate: true
generators:
- clusters: {flatList: true, selector: {matchLabels: {env: prod}}}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{{"clusters": []any{map[string]any{
				"name": "Prod_EU", "nameNormalized": "prod-eu", "server": "https://prod-eu.example.com", "project": "prod",
				"metadata": map[string]any{"labels": map[string]any{clusters.SecretTypeLabel: "cluster", "env": "prod"}},
			}}}},
		},
		"git directories: a glob includes, exclude wins, hidden directories are skipped": {
			spec: `
generators:
- git:
    repoURL: https://example.com/addons.git
    revision: HEAD
    directories:
    - path: cluster-addons/*
    - path: cluster-addons/Helm_*
      exclude: true
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{
					"commitSHA": "0123abcd", "path": "cluster-addons/argo-workflows", "path.basename": "argo-workflows", "path.basenameNormalized": "argo-workflows",
					"path[0]": "cluster-addons", "path[1]": "argo-workflows",
				},
				{
					"commitSHA": "0123abcd", "path": "cluster-addons/prometheus-operator", "path.basename": "prometheus-operator", "path.basenameNormalized": "prometheus-operator",
					"path[0]": "cluster-addons", "path[1]": "prometheus-operator",
				},
			},
		},
		"a directory glob's * stays within one segment": {
			spec: `
generators:
- git: {repoURL: r, revision: HEAD, directories: [{path: 'cluster-config/*'}]}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{"commitSHA": "0123abcd", "path": "cluster-config/engineering", "path.basename": "engineering", "path.basenameNormalized": "engineering", "path[0]": "cluster-config", "path[1]": "engineering"},
				{"commitSHA": "0123abcd", "path": "cluster-config/sales", "path.basename": "sales", "path.basenameNormalized": "sales", "path[0]": "cluster-config", "path[1]": "sales"},
			},
		},
		"pathParamPrefix prefixes the path parameters; goTemplate nests them with segments": {
			spec: `
goTemplate: true
generators:
- git:
    repoURL: r
    revision: HEAD
    pathParamPrefix: addon
    directories: [{path: cluster-addons/Helm_Guestbook}]
    values: {ns: '{{ .addon.path.basenameNormalized }}'}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{{
				"addon": map[string]any{"path": map[string]any{
					"path": "cluster-addons/Helm_Guestbook", "basename": "Helm_Guestbook", "basenameNormalized": "helm-guestbook",
					"segments": []string{"cluster-addons", "Helm_Guestbook"},
				}, "commitSHA": "0123abcd"},
				"values": map[string]any{"ns": "helm-guestbook"},
			}},
		},
		"git files are flattened into dotted keys, with the file's path parameters": {
			spec: `
generators:
- git:
    repoURL: r
    revision: HEAD
    files: [{path: 'cluster-config/engineering/*'}]
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{
					"aws_account": "123456", "asset_id": "11223344", "cluster.owner": "cluster-admin@company.com",
					"cluster.name": "engineering-dev", "cluster.address": "https://1.2.3.4", "cluster.replicas": "2",
					"commitSHA": "0123abcd", "path": "cluster-config/engineering/dev", "path.basename": "dev", "path.basenameNormalized": "dev",
					"path.filename": "config.json", "path.filenameNormalized": "config.json",
					"path[0]": "cluster-config", "path[1]": "engineering", "path[2]": "dev",
				},
				{
					"aws_account": "123456", "asset_id": "11223344", "cluster.owner": "cluster-admin@company.com",
					"cluster.name": "engineering-prod", "cluster.address": "https://2.4.6.8", "cluster.replicas": "3",
					"commitSHA": "0123abcd", "path": "cluster-config/engineering/prod", "path.basename": "prod", "path.basenameNormalized": "prod",
					"path.filename": "config.yaml", "path.filenameNormalized": "config.yaml",
					"path[0]": "cluster-config", "path[1]": "engineering", "path[2]": "prod",
				},
			},
		},
		"a git file holding a list gives one set per item, nested with goTemplate; excluded files are left out": {
			spec: `
goTemplate: true
generators:
- git:
    repoURL: r
    revision: HEAD
    files: [{path: 'cluster-config/**/config.*'}, {path: 'cluster-config/engineering/**', exclude: true}]
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{
					"cluster":   map[string]any{"name": "sales-eu", "address": "https://eu.example.com"},
					"commitSHA": "0123abcd",
					"path": map[string]any{
						"path": "cluster-config/sales", "basename": "sales", "basenameNormalized": "sales",
						"filename": "config.yaml", "filenameNormalized": "config.yaml", "segments": []string{"cluster-config", "sales"},
					},
				},
				{
					"cluster":   map[string]any{"name": "sales-us", "address": "https://us.example.com"},
					"commitSHA": "0123abcd",
					"path": map[string]any{
						"path": "cluster-config/sales", "basename": "sales", "basenameNormalized": "sales",
						"filename": "config.yaml", "filenameNormalized": "config.yaml", "segments": []string{"cluster-config", "sales"},
					},
				},
			},
		},
		"a matrix gives the product, and its second generator reads the first's parameters": {
			spec: `
generators:
- matrix:
    generators:
    - clusters: {selector: {matchLabels: {env: prod}}}
    - git:
        repoURL: r
        revision: HEAD
        files: [{path: 'cluster-config/{{metadata.labels.argocd.argoproj.io/secret-type}}-none/*'}, {path: 'cluster-config/sales/*'}]
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{
					"name": "Prod_EU", "nameNormalized": "prod-eu", "server": "https://prod-eu.example.com", "project": "prod",
					"metadata.labels.argocd.argoproj.io/secret-type": "cluster", "metadata.labels.env": "prod",
					"cluster.name": "sales-eu", "cluster.address": "https://eu.example.com",
					"commitSHA": "0123abcd", "path": "cluster-config/sales", "path.basename": "sales", "path.basenameNormalized": "sales",
					"path.filename": "config.yaml", "path.filenameNormalized": "config.yaml", "path[0]": "cluster-config", "path[1]": "sales",
				},
				{
					"name": "Prod_EU", "nameNormalized": "prod-eu", "server": "https://prod-eu.example.com", "project": "prod",
					"metadata.labels.argocd.argoproj.io/secret-type": "cluster", "metadata.labels.env": "prod",
					"cluster.name": "sales-us", "cluster.address": "https://us.example.com",
					"commitSHA": "0123abcd", "path": "cluster-config/sales", "path.basename": "sales", "path.basenameNormalized": "sales",
					"path.filename": "config.yaml", "path.filenameNormalized": "config.yaml", "path[0]": "cluster-config", "path[1]": "sales",
				},
			},
		},
		"a matrix's second generator uses the first's parameters in its fields (goTemplate)": {
			spec: `
goTemplate: true
generators:
- matrix:
    generators:
    - list: {elements: [{dir: cluster-addons}]}
    - git:
        repoURL: r
        revision: HEAD
        directories: [{path: '{{ .dir }}/argo-*'}]
        values: {from: '{{ .dir }}:{{ .path.basename }}'}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{{
				"dir": "cluster-addons", "commitSHA": "0123abcd",
				"path": map[string]any{
					"path": "cluster-addons/argo-workflows", "basename": "argo-workflows", "basenameNormalized": "argo-workflows",
					"segments": []string{"cluster-addons", "argo-workflows"},
				},
				"values": map[string]any{"from": "cluster-addons:argo-workflows"},
			}},
		},
		"with goTemplate, a matrix's first generator wins a name both give, and maps merge": {
			spec: `
goTemplate: true
generators:
- matrix:
    generators:
    - list: {elements: [{env: dev, meta: {owner: a}}]}
    - list: {elements: [{env: prod, meta: {zone: z}, app: web}]}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{{"env": "dev", "meta": map[string]any{"owner": "a", "zone": "z"}, "app": "web"}},
		},
		"a matrix whose generators give one name different values is an error": {
			spec: `
generators:
- matrix:
    generators:
    - list: {elements: [{name: a}]}
    - list: {elements: [{name: b}]}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			wantErr: `both generators give parameter "name", with different values a and b`,
		},
		"a matrix takes exactly two generators": {
			spec: `
generators:
- matrix:
    generators:
    - list: {elements: [{a: x}]}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			wantErr: "a matrix takes exactly two generators, not 1",
		},
		"a merge overrides the first generator's sets by mergeKeys and drops unmatched ones": {
			spec: `
generators:
- merge:
    mergeKeys: [server]
    generators:
    - clusters: {values: {kafka: 'true', redis: 'false'}}
    - clusters:
        selector: {matchLabels: {env: staging}}
        values: {redis: 'true'}
    - list:
        elements:
        - {server: https://kubernetes.default.svc, values.redis: 'true', values.kafka: 'false'}
        - {server: https://elsewhere.example.com, values.kafka: 'maybe'}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{"name": "in-cluster", "nameNormalized": "in-cluster", "server": "https://kubernetes.default.svc", "project": "", "values.kafka": "false", "values.redis": "true"},
				{
					"name": "staging", "nameNormalized": "staging", "server": "https://staging.example.com", "project": "",
					"metadata.labels.argocd.argoproj.io/secret-type": "cluster", "metadata.labels.env": "staging",
					"metadata.annotations.team": "payments", "values.kafka": "true", "values.redis": "true",
				},
				{
					"name": "Prod_EU", "nameNormalized": "prod-eu", "server": "https://prod-eu.example.com", "project": "prod",
					"metadata.labels.argocd.argoproj.io/secret-type": "cluster", "metadata.labels.env": "prod",
					"values.kafka": "true", "values.redis": "false",
				},
			},
		},
		"a goTemplate merge key may name a nested value": {
			spec: `
goTemplate: true
generators:
- merge:
    mergeKeys: [cluster.name]
    generators:
    - list: {elements: [{cluster: {name: a}, size: s}, {cluster: {name: b}, size: s}]}
    - list: {elements: [{cluster: {name: b, zone: z}, size: xl}]}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{"cluster": map[string]any{"name": "a"}, "size": "s"},
				{"cluster": map[string]any{"name": "b", "zone": "z"}, "size": "xl"},
			},
		},
		"a merge whose generator repeats a key value is an error": {
			spec: `
generators:
- merge:
    mergeKeys: [k]
    generators:
    - list: {elements: [{k: a}, {k: a}]}
    - list: {elements: [{k: a}]}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			wantErr: `gives two sets with merge key {"k":"a"}`,
		},
		"a merge nested in a matrix is read (two levels)": {
			spec: `
generators:
- matrix:
    generators:
    - merge:
        mergeKeys: [env]
        generators:
        - list: {elements: [{env: dev, size: s}, {env: prod, size: s}]}
        - list: {elements: [{env: prod, size: xl}]}
    - list: {elements: [{app: web}]}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{"env": "dev", "size": "s", "app": "web"},
				{"env": "prod", "size": "xl", "app": "web"},
			},
		},
		"a matrix three levels deep is an error": {
			spec: `
generators:
- matrix:
    generators:
    - matrix:
        generators:
        - matrix: {generators: [{list: {elements: [{a: x}]}}, {list: {elements: [{b: y}]}}]}
        - list: {elements: [{c: z}]}
    - list: {elements: [{d: w}]}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			wantErr: "nests more than two levels deep",
		},
		"a selector on any generator keeps the sets whose values match": {
			spec: `
generators:
- list:
    elements: [{env: dev, name: a}, {env: prod, name: b}, {env: prod, name: c}]
  selector:
    matchLabels: {env: prod}
    matchExpressions: [{key: name, operator: NotIn, values: [c]}]
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{{"env": "prod", "name": "b"}},
		},
		"a selector may match values that are not label values, such as a server URL": {
			spec: `
generators:
- clusters: {}
  selector:
    matchLabels: {server: https://kubernetes.default.svc}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{{"name": "in-cluster", "nameNormalized": "in-cluster", "server": "https://kubernetes.default.svc", "project": ""}},
		},
		"a selector with an unknown operator is an error": {
			spec: `
generators:
- list: {elements: [{env: dev}]}
  selector:
    matchExpressions: [{key: env, operator: Equals, values: [dev]}]
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			wantErr: `unknown operator "Equals"`,
		},
		"a file pattern naming a directory matches the files under it, as a git pathspec does": {
			spec: `
generators:
- git: {repoURL: r, revision: HEAD, files: [{path: cluster-config/sales}]}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{
					"commitSHA": "0123abcd", "cluster.name": "sales-eu", "cluster.address": "https://eu.example.com",
					"path": "cluster-config/sales", "path.basename": "sales", "path.basenameNormalized": "sales",
					"path.filename": "config.yaml", "path.filenameNormalized": "config.yaml", "path[0]": "cluster-config", "path[1]": "sales",
				},
				{
					"commitSHA": "0123abcd", "cluster.name": "sales-us", "cluster.address": "https://us.example.com",
					"path": "cluster-config/sales", "path.basename": "sales", "path.basenameNormalized": "sales",
					"path.filename": "config.yaml", "path.filenameNormalized": "config.yaml", "path[0]": "cluster-config", "path[1]": "sales",
				},
			},
		},
		"a git generator with directories ignores its files, as Argo CD does": {
			spec: `
generators:
- git: {repoURL: r, revision: HEAD, directories: [{path: cluster-config/sales}], files: [{path: 'cluster-config/**'}]}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{{"commitSHA": "0123abcd", "path": "cluster-config/sales", "path.basename": "sales", "path.basenameNormalized": "sales", "path[0]": "cluster-config", "path[1]": "sales"}},
		},
		"a cluster decision resource gives its decisions that name known clusters, with their keys and values": {
			spec: `
generators:
- clusterDecisionResource:
    configMapRef: ocm-placement
    labelSelector: {matchLabels: {cluster.open-cluster-management.io/placement: guestbook}}
    values: {tier: '{{reason}}-tier'}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{"name": "staging", "server": "https://staging.example.com", "clusterName": "staging", "reason": "", "values.tier": "-tier"},
				{"name": "Prod_EU", "server": "https://prod-eu.example.com", "clusterName": "Prod_EU", "reason": "picked", "weight": "2", "values.tier": "picked-tier"},
			},
		},
		"a cluster decision resource generator keeps the entries' values as they are with goTemplate": {
			spec: `
goTemplate: true
generators:
- clusterDecisionResource: {configMapRef: ocm-placement, name: guestbook}
  selector: {matchLabels: {reason: picked}}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{
				{"name": "Prod_EU", "server": "https://prod-eu.example.com", "clusterName": "Prod_EU", "reason": "picked", "weight": float64(2)},
			},
		},
		"a cluster decision ConfigMap without statusListKey reads status.clusters": {
			spec: `
generators:
- clusterDecisionResource: {configMapRef: default-list-key, name: a}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{{"name": "Prod_EU", "server": "https://prod-eu.example.com", "clusterName": "Prod_EU"}},
		},
		"a cluster decision resource generator needs name or labelSelector, not both": {
			spec: `
generators:
- clusterDecisionResource: {configMapRef: ocm-placement, name: a, labelSelector: {matchLabels: {a: b}}}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			wantErr: "needs either name or labelSelector",
		},
		"a cluster decision ConfigMap without matchKey is an error": {
			spec: `
generators:
- clusterDecisionResource: {configMapRef: no-match-key, name: a}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			wantErr: "ConfigMap no-match-key has no matchKey",
		},
		"a cluster decision ConfigMap that cannot be read is an error naming it": {
			spec: `
generators:
- clusterDecisionResource: {configMapRef: missing, name: a}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			wantErr: `configmaps "missing" not found`,
		},
		"a selector inside a matrix applies to its generator": {
			spec: `
generators:
- matrix:
    generators:
    - list: {elements: [{env: dev}, {env: prod}]}
      selector: {matchLabels: {env: dev}}
    - list: {elements: [{app: web}]}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			want: []Params{{"env": "dev", "app": "web"}},
		},
		"a generator entry that sets two kinds is an error": {
			spec: `
generators:
- list: {elements: [{a: b}]}
  clusters: {}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			wantErr: "generator 1 (list+clusters): one generator entry sets several kinds",
		},
		"a generator with nothing set is an error": {
			spec: `
generators:
- selector: {matchLabels: {a: b}}
template: {metadata: {}, spec: {project: default, destination: {}}}`,
			wantErr: "no generator is set",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res, err := Generate(specOf(t, tc.spec), testInputs)
			if failed(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.want, params(res)); diff != "" {
				t.Errorf("parameters differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequeueAfter(t *testing.T) {
	tests := map[string]struct {
		spec string
		want time.Duration
	}{
		"a list asks for no requeue": {
			spec: `{generators: [{list: {elements: [{a: b}]}}]}`,
			want: 0,
		},
		"a git generator requeues after 3 minutes by default": {
			spec: `{generators: [{git: {repoURL: r, directories: [{path: '*'}]}}]}`,
			want: 3 * time.Minute,
		},
		"a cluster decision resource generator requeues after 3 minutes by default": {
			spec: `{generators: [{clusterDecisionResource: {configMapRef: ocm-placement, name: a}}]}`,
			want: 3 * time.Minute,
		},
		"an unsupported generator still asks for its default": {
			spec: `{generators: [{list: {elements: [{a: b}]}}, {pullRequest: {github: {owner: o, repo: r}}}]}`,
			want: 30 * time.Minute,
		},
		"the least requeueAfterSeconds of nested generators wins": {
			spec: `{generators: [{matrix: {generators: [
			  {git: {repoURL: r, directories: [{path: '*'}], requeueAfterSeconds: 45}},
			  {merge: {mergeKeys: [a], generators: [
			    {list: {elements: [{a: b}]}},
			    {git: {repoURL: r, files: [{path: x}], requeueAfterSeconds: 20}}]}}]}}]}`,
			want: 20 * time.Second,
		},
		"requeueAfterSeconds 0 asks for none": {
			spec: `{generators: [{git: {repoURL: r, directories: [{path: '*'}], requeueAfterSeconds: 0}}]}`,
			want: 0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := RequeueAfter(specOf(t, tc.spec)); got != tc.want {
				t.Errorf("requeue after %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUnsupportedGenerators(t *testing.T) {
	tests := map[string]string{
		"a Bitbucket pull request generator is reported unsupported": `{generators: [{pullRequest: {bitbucket: {owner: o, repo: r}}}]}`,
		"an AWS CodeCommit SCM provider is reported unsupported":     `{generators: [{scmProvider: {awsCodeCommit: {}}}]}`,
		"a plugin generator is reported unsupported":                 `{generators: [{plugin: {configMapRef: {name: p}}}]}`,
		"an unsupported generator inside a matrix is reported unsupported": `{generators: [{matrix: {generators: [
		  {list: {elements: [{a: b}]}}, {plugin: {configMapRef: {name: p}}}]}}]}`,
	}
	for name, spec := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Generate(specOf(t, spec), testInputs); !errors.Is(err, ErrUnsupported) {
				t.Errorf("error %v, want ErrUnsupported", err)
			}
		})
	}
}

func TestGitRepos(t *testing.T) {
	tests := map[string]struct {
		spec string
		want []string
	}{
		"no git generator reads no repository": {
			spec: `{generators: [{list: {elements: [{a: b}]}}, {clusters: {}}]}`,
		},
		"git generators at every nesting level are listed once each, sorted": {
			spec: `{generators: [
			  {git: {repoURL: https://b.example.com/r.git, directories: [{path: '*'}]}},
			  {matrix: {generators: [
			    {git: {repoURL: https://a.example.com/r.git, files: [{path: x.json}]}},
			    {merge: {mergeKeys: [k], generators: [
			      {git: {repoURL: https://c.example.com/r.git, files: [{path: y.json}]}},
			      {git: {repoURL: https://b.example.com/r.git, files: [{path: z.json}]}}]}}]}}]}`,
			want: []string{"https://a.example.com/r.git", "https://b.example.com/r.git", "https://c.example.com/r.git"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GitRepos(specOf(t, tc.spec))); diff != "" {
				t.Errorf("repositories differ (-want +got):\n%s", diff)
			}
		})
	}
}

// A matrix runs its second generator once per set of the first; the
// repository is read once.
func TestGitTreeReadOncePerGenerate(t *testing.T) {
	calls := 0
	in := testInputs
	in.Git = func(repoURL, revision string) (fs.FS, string, error) {
		calls++
		return os.DirFS("testdata/repo"), "0123abcd", nil
	}
	spec := specOf(t, `
generators:
- matrix:
    generators:
    - list: {elements: [{a: '1'}, {a: '2'}, {a: '3'}]}
    - git: {repoURL: r, revision: HEAD, directories: [{path: 'cluster-addons/*'}]}
template: {metadata: {}, spec: {project: default, destination: {}}}`)
	res, err := Generate(spec, in)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(params(res)); n != 9 {
		t.Errorf("%d parameter sets, want 3 × 3", n)
	}
	if calls != 1 {
		t.Errorf("the repository was read %d times, want once", calls)
	}
}
