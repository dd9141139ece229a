package argocdcm

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/knowntypes"
	"github.com/skiffcd/skiff/internal/lua"
)

var (
	deployment  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	certificate = schema.GroupKind{Group: "cert-manager.io", Kind: "Certificate"}
	pod         = schema.GroupKind{Kind: "Pod"}
	bucket      = schema.GroupKind{Group: "s3.aws.crossplane.io", Kind: "Bucket"}
	crd         = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
)

func TestParseResourceCustomizations(t *testing.T) {
	runParseCases(t, map[string]parseCase{
		"the whole form sets health, open libs, actions, ignoreDifferences and knownTypeFields": {
			data: map[string]string{"resource.customizations": `
cert-manager.io/Certificate:
  health.lua: |
    return {status = "Degraded"}
  health.lua.useOpenLibs: true
  actions: |
    discovery.lua: return {}
    definitions:
    - name: renew
      action.lua: return obj
  ignoreDifferences: |
    jsonPointers:
    - /spec/duration
  knownTypeFields:
  - field: spec.template.spec
    type: core/v1/PodSpec
`},
			check: func(t *testing.T, s ResourceSettings) {
				script, ok := s.HealthScript(certificate)
				if !ok || script != (lua.Script{Code: "return {status = \"Degraded\"}\n", OpenLibs: true}) {
					t.Fatalf("HealthScript = %+v, %v", script, ok)
				}
				a, ok := s.CustomActions(certificate)
				if !ok || a.DiscoveryLua != "return {}" || len(a.Definitions) != 1 || a.Definitions[0].Name != "renew" {
					t.Fatalf("CustomActions = %+v, %v", a, ok)
				}
				if got := s.IgnoreDifferences(certificate); len(got) != 1 || !reflect.DeepEqual(got[0].JSONPointers, []string{"/spec/duration"}) {
					t.Fatalf("IgnoreDifferences = %+v", got)
				}
				if f := s.Overrides["cert-manager.io/Certificate"].KnownTypeFields; len(f) != 1 || f[0].Type != "core/v1/PodSpec" {
					t.Fatalf("KnownTypeFields = %+v", f)
				}
			},
		},
		"a per-key form wins over the whole form for the same kind, and leaves its other fields": {
			data: map[string]string{
				"resource.customizations": `
apps/Deployment:
  health.lua: return {status = "Degraded"}
  ignoreDifferences: |
    jsonPointers: [/spec/replicas]
`,
				"resource.customizations.health.apps_Deployment": `return {status = "Healthy"}`,
			},
			check: func(t *testing.T, s ResourceSettings) {
				if script, _ := s.HealthScript(deployment); script.Code != `return {status = "Healthy"}` {
					t.Fatalf("health = %q, want the per-key one", script.Code)
				}
				if got := s.IgnoreDifferences(deployment); len(got) != 1 || got[0].JSONPointers[0] != "/spec/replicas" {
					t.Fatalf("IgnoreDifferences = %+v, want the whole form's kept", got)
				}
			},
		},
		"the per-key forms: core kinds by kind alone, useOpenLibs, knownTypeFields, ignoreResourceUpdates": {
			data: map[string]string{
				"resource.customizations.health.Pod":                            `return {status = "Healthy"}`,
				"resource.customizations.useOpenLibs.Pod":                       "true",
				"resource.customizations.knownTypeFields.apps_Deployment":       "- field: spec.x\n  type: core/v1/PodSpec\n",
				"resource.customizations.ignoreResourceUpdates.apps_Deployment": "jsonPointers: [/status]\n",
				"resource.customizations.actions.apps_Deployment":               "discovery.lua: return {}\n",
			},
			check: func(t *testing.T, s ResourceSettings) {
				if script, ok := s.HealthScript(pod); !ok || !script.OpenLibs {
					t.Fatalf("Pod's HealthScript = %+v, %v; want one with open libs", script, ok)
				}
				o := s.Overrides["apps/Deployment"]
				if len(o.KnownTypeFields) != 1 || o.IgnoreResourceUpdates.JSONPointers[0] != "/status" || o.Actions == nil {
					t.Fatalf("apps/Deployment = %+v", o)
				}
			},
		},
		"group wildcards and all: health by glob, ignoreDifferences from every matching key": {
			data: map[string]string{
				"resource.customizations.health.*.crossplane.io_*":            `return {status = "Suspended"}`,
				"resource.customizations.ignoreDifferences.*.crossplane.io_*": "jsonPointers: [/spec/a]\n",
				"resource.customizations.ignoreDifferences.all":               "managedFieldsManagers: [kube-controller-manager]\n",
			},
			check: func(t *testing.T, s ResourceSettings) {
				if script, ok := s.HealthScript(bucket); !ok || script.Code != `return {status = "Suspended"}` {
					t.Fatalf("Bucket's HealthScript = %+v, %v", script, ok)
				}
				if _, ok := s.HealthScript(deployment); ok {
					t.Fatalf("a Deployment got the crossplane glob's health script")
				}
				if got := s.IgnoreDifferences(bucket); len(got) != 2 {
					t.Fatalf("Bucket's IgnoreDifferences = %+v, want the glob's and all's", got)
				}
				if got := s.IgnoreDifferences(pod); len(got) != 1 || got[0].ManagedFieldsManagers[0] != "kube-controller-manager" {
					t.Fatalf("Pod's IgnoreDifferences = %+v, want all's (core group included)", got)
				}
			},
		},
		"every invalid entry is one error naming its key, and the rest applies": {
			data: map[string]string{
				"resource.customizations": `
apps/Deployment:
  ignoreDifferences: "jsonPointers: {"
Pod:
  health.lua: return {status = "Healthy"}
`,
				"resource.customizations.health.a_b_c":                                  `return {}`,
				"resource.customizations.colour.apps_Deployment":                        "red",
				"resource.customizations.useOpenLibs.Pod":                               "sometimes",
				"resource.customizations.actions.batch_Job":                             "definitions: [{action.lua: return obj}]",
				"resource.customizations.health.batch_CronJob":                          "return {",
				"resource.customizations.ignoreDifferences.cert-manager.io_Certificate": "jsonPointers: [/spec/x]\n",
				"resource.customizations.health":                                        "return {}",
			},
			wantErr: []string{
				"resource.customizations: apps/Deployment: ignoreDifferences",
				"resource.customizations.actions.batch_Job: definition 1 has no name",
				"resource.customizations.colour.apps_Deployment: unknown customization type",
				"resource.customizations.health: want resource.customizations.<type>.<group_kind>",
				`resource.customizations.health.a_b_c: "a_b_c" is not <group>_<kind>`,
				"resource.customizations.health.batch_CronJob: lua: compiling script",
				`resource.customizations.useOpenLibs.Pod: "sometimes" is not a boolean`,
			},
			check: func(t *testing.T, s ResourceSettings) {
				if _, ok := s.HealthScript(pod); !ok {
					t.Fatalf("Pod's valid whole-form health script was lost")
				}
				if got := s.IgnoreDifferences(certificate); len(got) != 1 {
					t.Fatalf("Certificate's valid ignoreDifferences was lost: %+v", got)
				}
				if script, ok := s.HealthScript(schema.GroupKind{Group: "batch", Kind: "CronJob"}); !ok || script.Code != "return {" {
					t.Fatalf("a health script that does not compile is kept, so that its objects show the error")
				}
			},
		},
	})
}

func TestParseResourceFiltersAndOptions(t *testing.T) {
	runParseCases(t, map[string]parseCase{
		"no keys: Argo CD's core and shipped exclusions, status ignored on CRDs only": {
			check: func(t *testing.T, s ResourceSettings) {
				for _, gk := range []schema.GroupKind{{Kind: "Event"}, {Kind: "Endpoints"}, {Group: "coordination.k8s.io", Kind: "Lease"}, {Group: "cert-manager.io", Kind: "CertificateRequest"}} {
					if !s.Excluded(gk.Group, gk.Kind, "") {
						t.Errorf("%v is not excluded by default", gk)
					}
				}
				if s.Excluded("apps", "Deployment", "") {
					t.Errorf("Deployments are excluded by default")
				}
				if got := s.IgnoreDifferences(crd); len(got) != 1 || got[0].JSONPointers[0] != "/status" {
					t.Errorf("CRD IgnoreDifferences = %+v, want /status", got)
				}
				if got := s.IgnoreDifferences(deployment); len(got) != 0 {
					t.Errorf("Deployment IgnoreDifferences = %+v, want none", got)
				}
			},
		},
		"user exclusions replace the shipped ones, core ones stay; globs and clusters match": {
			data: map[string]string{"resource.exclusions": `
- apiGroups: ["*.example.com"]
  kinds: ["*"]
  clusters: ["https://prod.*"]
- apiGroups: [""]
  kinds: [ConfigMap]
`},
			check: func(t *testing.T, s ResourceSettings) {
				if s.Excluded("", "Endpoints", "") {
					t.Errorf("the shipped exclusion of Endpoints still applies")
				}
				if !s.Excluded("", "Event", "") {
					t.Errorf("the core exclusion of Events was dropped")
				}
				if !s.Excluded("", "ConfigMap", "https://kubernetes.default.svc") {
					t.Errorf("ConfigMaps are not excluded")
				}
				if !s.Excluded("a.example.com", "Widget", "https://prod.example") || s.Excluded("a.example.com", "Widget", "https://dev.example") {
					t.Errorf("the cluster-scoped glob exclusion does not match as it should")
				}
			},
		},
		"inclusions admit only what they name on the clusters they name": {
			data: map[string]string{"resource.inclusions": `
- apiGroups: ["apps"]
  kinds: ["*"]
  clusters: ["https://a"]
`},
			check: func(t *testing.T, s ResourceSettings) {
				if s.Excluded("apps", "Deployment", "https://a") || !s.Excluded("", "ConfigMap", "https://a") {
					t.Errorf("inclusions on cluster a are not the only kinds watched there")
				}
				if s.Excluded("", "ConfigMap", "https://b") {
					t.Errorf("a cluster no inclusion names lost its kinds")
				}
			},
		},
		"compare options: status of all kinds, aggregated roles": {
			data: map[string]string{"resource.compareoptions": "ignoreAggregatedRoles: true\nignoreResourceStatusField: all\n"},
			check: func(t *testing.T, s ResourceSettings) {
				roles := s.IgnoreDifferences(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"})
				if !s.CompareOptions.IgnoreAggregatedRoles || len(roles) != 2 || roles[1].JQPathExpressions[0] != aggregatedRules {
					t.Errorf("ignoreAggregatedRoles: ClusterRole rules = %+v, want /status and the aggregated rules", roles)
				}
				if got := s.IgnoreDifferences(deployment); len(got) != 1 || got[0].JSONPointers[0] != "/status" {
					t.Errorf("Deployment IgnoreDifferences = %+v, want /status", got)
				}
			},
		},
		"compare options: off, even as YAML's false, ignores no status": {
			data: map[string]string{"resource.compareoptions": "ignoreResourceStatusField: off\n"},
			check: func(t *testing.T, s ResourceSettings) {
				if got := s.IgnoreDifferences(crd); len(got) != 0 {
					t.Errorf("CRD IgnoreDifferences = %+v, want none", got)
				}
			},
		},
		"respectRBAC normal and strict apply, trimmed": {
			data: map[string]string{"resource.respectRBAC": " strict\n"},
			check: func(t *testing.T, s ResourceSettings) {
				if s.RespectRBAC != "strict" {
					t.Errorf("RespectRBAC = %q, want strict", s.RespectRBAC)
				}
			},
		},
		"knownTypeFields of an unknown type, without a field or of a glob key are errors; the valid ones apply": {
			data: map[string]string{
				"resource.customizations.knownTypeFields.example.com_Widget": "- field: spec.budget\n  type: core/v1/ResourceList\n" +
					"- field: spec.other\n  type: core/v1/Nothing\n- type: core/v1/PodSpec\n",
				"resource.customizations.knownTypeFields.*.example.com_*": "- field: spec.x\n  type: core/v1/PodSpec\n",
			},
			wantErr: []string{
				"knownTypeFields of *.example.com/*: a glob key names no kind's fields",
				`knownTypeFields of example.com/Widget: field spec.other: "core/v1/Nothing" is not a known Kubernetes type`,
				`knownTypeFields of example.com/Widget: an entry of type "core/v1/PodSpec" has no field`,
			},
			check: func(t *testing.T, s ResourceSettings) {
				want := []knowntypes.Field{{Group: "example.com", Kind: "Widget", Field: "spec.budget", Type: "core/v1/ResourceList"}}
				if got := s.KnownTypeFields(); !reflect.DeepEqual(got, want) {
					t.Errorf("KnownTypeFields = %+v, want %+v", got, want)
				}
			},
		},
		"invalid filters and options are errors naming their key": {
			data: map[string]string{
				"resource.exclusions":                   "- apiGroups: apps\n",
				"resource.inclusions":                   "[",
				"resource.compareoptions":               "ignoreResourceStatusField: some\n",
				"resource.respectRBAC":                  "true",
				"resource.ignoreResourceUpdatesEnabled": "yes please",
				"resource.customizations.health.Pod":    `return {status = "Healthy"}`,
			},
			wantErr: []string{"resource.exclusions:", "resource.inclusions:", "resource.compareoptions: ignoreResourceStatusField some", "resource.respectRBAC: \"true\" is neither normal nor strict", "resource.ignoreResourceUpdatesEnabled:"},
			check: func(t *testing.T, s ResourceSettings) {
				if !s.Excluded("", "Event", "") {
					t.Errorf("the core exclusions were dropped with the invalid list")
				}
				if _, ok := s.HealthScript(pod); !ok {
					t.Errorf("a valid key was lost")
				}
				if s.RespectRBAC != "" {
					t.Errorf("an invalid respectRBAC = %q, want off", s.RespectRBAC)
				}
				if s.CompareOptions.IgnoreResourceStatusField != StatusCRD {
					t.Errorf("an invalid ignoreResourceStatusField = %q, want crd", s.CompareOptions.IgnoreResourceStatusField)
				}
			},
		},
	})
}

// parseCase is Parse's input and what to check of its outcome: wantErr
// holds one substring per expected error, in order.
type parseCase struct {
	data    map[string]string
	check   func(t *testing.T, s ResourceSettings)
	wantErr []string
}

func runParseCases(t *testing.T, tests map[string]parseCase) {
	t.Helper()
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s, errs := Parse(tt.data)
			if len(errs) != len(tt.wantErr) {
				t.Fatalf("got %d errors, want %d: %v", len(errs), len(tt.wantErr), errs)
			}
			for i, want := range tt.wantErr {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d = %q, want one containing %q", i, errs[i], want)
				}
			}
			if tt.check != nil {
				tt.check(t, s.Resource)
			}
		})
	}
}

func TestParseIgnoreResourceUpdates(t *testing.T) {
	pointers := func(rules []v1alpha1.ResourceIgnoreDifferences) []string {
		var out []string
		for _, r := range rules {
			out = append(out, r.JSONPointers...)
			out = append(out, r.JQPathExpressions...)
		}
		return out
	}
	configMap := schema.GroupKind{Kind: "ConfigMap"}
	runParseCases(t, map[string]parseCase{
		"no keys: enabled, Argo CD's shipped rules, status of every kind": {
			check: func(t *testing.T, s ResourceSettings) {
				if !s.IgnoreResourceUpdatesEnabled {
					t.Errorf("ignoreResourceUpdates is disabled by default; Argo CD 3 enables it")
				}
				if got := pointers(s.UpdateRules(deployment)); !reflect.DeepEqual(got, []string{"/status"}) {
					t.Errorf("Deployment's update rules = %v, want /status", got)
				}
				if got := pointers(s.UpdateRules(configMap)); len(got) != 3 || !slices.Contains(got, "/status") || !strings.Contains(got[1], "cluster-autoscaler") {
					t.Errorf("ConfigMap's update rules = %v, want the shipped annotations and /status", got)
				}
				if got := pointers(s.UpdateRules(crd)); !slices.Contains(got, "/spec/preserveUnknownFields") {
					t.Errorf("CRD's update rules = %v, want its ignoreDifferences too (ignoreDifferencesOnResourceUpdates defaults to true)", got)
				}
			},
		},
		"a key of the user's replaces the shipped rules, and ignoreDifferences join them": {
			data: map[string]string{
				"resource.customizations.ignoreResourceUpdates.apps_Deployment": "jsonPointers: [/spec/replicas]\n",
				"resource.customizations.ignoreDifferences.apps_Deployment":     "jqPathExpressions: [.spec.paused]\n",
			},
			check: func(t *testing.T, s ResourceSettings) {
				if got := pointers(s.UpdateRules(deployment)); !reflect.DeepEqual(got, []string{"/spec/replicas", ".spec.paused"}) {
					t.Errorf("Deployment's update rules = %v, want its ignoreResourceUpdates and ignoreDifferences", got)
				}
				if got := s.UpdateRules(pod); len(got) != 0 {
					t.Errorf("Pod's update rules = %+v, want none: the shipped /status is replaced", got)
				}
			},
		},
		"an empty all key replaces the shipped rules with none": {
			data: map[string]string{"resource.customizations.ignoreResourceUpdates.all": ""},
			check: func(t *testing.T, s ResourceSettings) {
				if got := s.UpdateRules(deployment); len(got) != 0 {
					t.Errorf("Deployment's update rules = %+v, want none", got)
				}
			},
		},
		"ignoreDifferencesOnResourceUpdates false leaves ignoreDifferences out": {
			data: map[string]string{
				"resource.compareoptions":                                   "ignoreDifferencesOnResourceUpdates: false\n",
				"resource.customizations.ignoreDifferences.apps_Deployment": "jqPathExpressions: [.spec.paused]\n",
			},
			check: func(t *testing.T, s ResourceSettings) {
				if got := pointers(s.UpdateRules(deployment)); !reflect.DeepEqual(got, []string{"/status"}) {
					t.Errorf("Deployment's update rules = %v, want the shipped /status only", got)
				}
			},
		},
		"disabled: no rules at all": {
			data: map[string]string{"resource.ignoreResourceUpdatesEnabled": "false"},
			check: func(t *testing.T, s ResourceSettings) {
				if s.IgnoreResourceUpdatesEnabled || s.UpdateRules(deployment) != nil {
					t.Errorf("disabled, yet Deployment's update rules = %+v", s.UpdateRules(deployment))
				}
			},
		},
		"an invalid switch is an error and the default applies": {
			data:    map[string]string{"resource.ignoreResourceUpdatesEnabled": "sometimes"},
			wantErr: []string{`resource.ignoreResourceUpdatesEnabled: "sometimes" is not a boolean; true applies`},
			check: func(t *testing.T, s ResourceSettings) {
				if !s.IgnoreResourceUpdatesEnabled {
					t.Errorf("an invalid switch disabled ignoreResourceUpdates")
				}
			},
		},
	})
}
