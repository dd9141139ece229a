package argocdcm

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/health"
	"github.com/skiffcd/skiff/internal/knowntypes"
	"github.com/skiffcd/skiff/internal/lua"
)

// The resource.* keys of argocd-cm.
const (
	keyCustomizations               = "resource.customizations"
	keyExclusions                   = "resource.exclusions"
	keyInclusions                   = "resource.inclusions"
	keyCompareOptions               = "resource.compareoptions"
	keyRespectRBAC                  = "resource.respectRBAC"
	keyIgnoreResourceUpdatesEnabled = "resource.ignoreResourceUpdatesEnabled"
)

// ResourceSettings are argocd-cm's resource.* keys.
type ResourceSettings struct {
	// Overrides holds the resource customizations by Argo CD's key:
	// "group/Kind", "Kind" for the core group, and globs such as
	// "*.crossplane.io/*" or "*/*" (the per-key form's "all").
	Overrides map[string]Override
	// Exclusions are the kinds not to watch: Argo CD's core exclusions,
	// then resource.exclusions, or Argo CD's shipped list when the key is
	// absent.
	Exclusions []FilteredResource
	// Inclusions, when any names a cluster, are the only kinds watched there.
	Inclusions     []FilteredResource
	CompareOptions CompareOptions
	// RespectRBAC is "" (off: every listable kind is watched),
	// clustercache.RespectRBACNormal or RespectRBACStrict: whether the
	// watch caches skip the kinds their credentials may not list.
	RespectRBAC string
	// IgnoreResourceUpdatesEnabled (default true, as in Argo CD 3) lets a
	// watch event that changes only ignored fields of a tracked object,
	// and not its health, leave its app uncompared (see UpdateRules).
	IgnoreResourceUpdatesEnabled bool

	// globKeys are the Overrides keys with globs, compiled, in key order.
	globKeys []globKey
	// ignoreRules are IgnoreRules' answer, made once.
	ignoreRules []v1alpha1.ResourceIgnoreDifferences
	// updateRules are the rules of every kind's ignoreResourceUpdates.
	updateRules []v1alpha1.ResourceIgnoreDifferences
	// knownTypes are KnownTypeFields' answer, made once.
	knownTypes []knowntypes.Field
}

// globKey is an override key with globs in its group or kind.
type globKey struct {
	key         string
	group, kind glob.Glob
}

// Override is one kind's customization, the fields of Argo CD's
// ResourceOverride.
type Override struct {
	HealthLua             string
	UseOpenLibs           bool
	Actions               *Actions
	IgnoreDifferences     IgnoreDiff
	IgnoreResourceUpdates IgnoreDiff
	KnownTypeFields       []KnownTypeField
}

// Actions are a kind's custom resource actions.
type Actions struct {
	DiscoveryLua        string             `json:"discovery.lua,omitempty"`
	Definitions         []ActionDefinition `json:"definitions,omitempty"`
	MergeBuiltinActions bool               `json:"mergeBuiltinActions,omitempty"`
}

// ActionDefinition is one custom action's script.
type ActionDefinition struct {
	Name      string `json:"name"`
	ActionLua string `json:"action.lua"`
}

// IgnoreDiff names the fields of a kind a diff leaves out.
type IgnoreDiff struct {
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// rule is d as the rule of an app's spec.ignoreDifferences for the kinds
// of override key ("group/Kind", "Kind", globs).
func (d IgnoreDiff) rule(key string) v1alpha1.ResourceIgnoreDifferences {
	group, kind, ok := strings.Cut(key, "/")
	if !ok {
		group, kind = "", key
	}
	return v1alpha1.ResourceIgnoreDifferences{Group: group, Kind: kind,
		JSONPointers: d.JSONPointers, JQPathExpressions: d.JQPathExpressions, ManagedFieldsManagers: d.ManagedFieldsManagers}
}

func (d IgnoreDiff) empty() bool {
	return len(d.JSONPointers) == 0 && len(d.JQPathExpressions) == 0 && len(d.ManagedFieldsManagers) == 0
}

// KnownTypeField maps a field of a custom resource to a Kubernetes type,
// for the diff (see KnownTypeFields).
type KnownTypeField struct {
	Field string `json:"field"`
	Type  string `json:"type"`
}

// FilteredResource is one entry of resource.exclusions or inclusions. An
// empty list matches everything; entries are globs.
type FilteredResource struct {
	APIGroups []string `json:"apiGroups,omitempty"`
	Kinds     []string `json:"kinds,omitempty"`
	Clusters  []string `json:"clusters,omitempty"`
}

// CompareOptions is resource.compareoptions.
type CompareOptions struct {
	IgnoreAggregatedRoles bool
	// IgnoreResourceStatusField is StatusCRD (the default), StatusAll or
	// StatusNone.
	IgnoreResourceStatusField          string
	IgnoreDifferencesOnResourceUpdates bool
}

// The values of CompareOptions.IgnoreResourceStatusField.
const (
	StatusCRD  = "crd"
	StatusAll  = "all"
	StatusNone = "off"
)

// coreExclusions are excluded whatever resource.exclusions says, as in
// Argo CD.
var coreExclusions = []FilteredResource{
	{APIGroups: []string{"events.k8s.io", "metrics.k8s.io"}},
	{APIGroups: []string{""}, Kinds: []string{"Event"}},
	{APIGroups: []string{"coordination.k8s.io"}, Kinds: []string{"Lease"}},
}

// shippedExclusions is the resource.exclusions of Argo CD's install
// manifests, in force when argocd-cm has no resource.exclusions.
var shippedExclusions = []FilteredResource{
	{APIGroups: []string{"", "discovery.k8s.io"}, Kinds: []string{"Endpoints", "EndpointSlice"}},
	{APIGroups: []string{"coordination.k8s.io"}, Kinds: []string{"Lease"}},
	{APIGroups: []string{"authentication.k8s.io", "authorization.k8s.io"}, Kinds: []string{
		"SelfSubjectReview", "TokenReview", "LocalSubjectAccessReview",
		"SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview",
	}},
	{APIGroups: []string{"certificates.k8s.io"}, Kinds: []string{"CertificateSigningRequest"}},
	{APIGroups: []string{"cert-manager.io"}, Kinds: []string{"CertificateRequest"}},
	{APIGroups: []string{"cilium.io"}, Kinds: []string{"CiliumIdentity", "CiliumEndpoint", "CiliumEndpointSlice"}},
	{APIGroups: []string{"kyverno.io", "reports.kyverno.io", "wgpolicyk8s.io"}, Kinds: []string{
		"PolicyReport", "ClusterPolicyReport", "EphemeralReport", "ClusterEphemeralReport",
		"AdmissionReport", "ClusterAdmissionReport", "BackgroundScanReport",
		"ClusterBackgroundScanReport", "UpdateRequest",
	}},
}

// parseResource reads the resource.* keys of data, appending one error per
// invalid entry to errs.
func parseResource(data map[string]string, errs []error) (ResourceSettings, []error) {
	var s ResourceSettings
	s.Overrides, errs = parseCustomizations(data, errs)
	s.globKeys = compileGlobKeys(s.Overrides)
	s.knownTypes, errs = knownTypeFields(s.Overrides, errs)

	s.Exclusions = slices.Clone(coreExclusions)
	if v, ok := data[keyExclusions]; ok {
		list, err := parseFiltered(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", keyExclusions, err))
		}
		s.Exclusions = append(s.Exclusions, list...)
	} else {
		s.Exclusions = append(s.Exclusions, shippedExclusions...)
	}
	if v, ok := data[keyInclusions]; ok {
		list, err := parseFiltered(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", keyInclusions, err))
		}
		s.Inclusions = list
	}

	var err error
	s.CompareOptions, err = parseCompareOptions(data[keyCompareOptions])
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", keyCompareOptions, err))
	}
	s.ignoreRules = ignoreRules(s.Overrides, s.CompareOptions)
	s.updateRules = updateRules(data, s.Overrides, s.CompareOptions, s.ignoreRules)

	switch v := strings.TrimSpace(data[keyRespectRBAC]); v {
	case "":
	case "normal", "strict": // clustercache.RespectRBACNormal, RespectRBACStrict
		s.RespectRBAC = v
	default:
		errs = append(errs, fmt.Errorf("%s: %q is neither normal nor strict; off applies", keyRespectRBAC, v))
	}

	s.IgnoreResourceUpdatesEnabled = true
	if v, ok := data[keyIgnoreResourceUpdatesEnabled]; ok && strings.TrimSpace(v) != "" {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a boolean; true applies", keyIgnoreResourceUpdatesEnabled, v))
		} else {
			s.IgnoreResourceUpdatesEnabled = b
		}
	}
	return s, errs
}

// rawOverride is an entry of resource.customizations' whole form, whose
// ignoreDifferences and ignoreResourceUpdates are YAML in a string.
type rawOverride struct {
	HealthLua             string           `json:"health.lua,omitempty"`
	UseOpenLibs           bool             `json:"health.lua.useOpenLibs,omitempty"`
	Actions               string           `json:"actions,omitempty"`
	IgnoreDifferences     string           `json:"ignoreDifferences,omitempty"`
	IgnoreResourceUpdates string           `json:"ignoreResourceUpdates,omitempty"`
	KnownTypeFields       []KnownTypeField `json:"knownTypeFields,omitempty"`
}

// parseCustomizations reads resource.customizations' whole form and then
// the per-key forms resource.customizations.<type>.<group_kind>, which win
// over the whole form's for the same kind, as in Argo CD.
func parseCustomizations(data map[string]string, errs []error) (map[string]Override, []error) {
	overrides := map[string]Override{}
	if v := data[keyCustomizations]; strings.TrimSpace(v) != "" {
		var entries map[string]json.RawMessage
		if err := yaml.Unmarshal([]byte(v), &entries); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", keyCustomizations, err))
		}
		for _, key := range sortedKeys(entries) {
			o, err := parseWholeEntry(entries[key])
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", keyCustomizations, key, err))
				continue
			}
			overrides[key] = o
		}
	}
	for _, k := range sortedKeys(data) {
		rest, ok := strings.CutPrefix(k, keyCustomizations+".")
		if !ok {
			continue
		}
		if err := applySplitKey(overrides, rest, data[k]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
		}
	}
	return overrides, errs
}

func parseWholeEntry(raw json.RawMessage) (Override, error) {
	var r rawOverride
	if err := json.Unmarshal(raw, &r); err != nil {
		return Override{}, err
	}
	o := Override{HealthLua: r.HealthLua, UseOpenLibs: r.UseOpenLibs, KnownTypeFields: r.KnownTypeFields}
	var err error
	if o.Actions, err = parseActions(r.Actions); err != nil {
		return Override{}, fmt.Errorf("actions: %w", err)
	}
	if err := yaml.Unmarshal([]byte(r.IgnoreDifferences), &o.IgnoreDifferences); err != nil {
		return Override{}, fmt.Errorf("ignoreDifferences: %w", err)
	}
	if err := yaml.Unmarshal([]byte(r.IgnoreResourceUpdates), &o.IgnoreResourceUpdates); err != nil {
		return Override{}, fmt.Errorf("ignoreResourceUpdates: %w", err)
	}
	if err := checkHealth(o.HealthLua); err != nil {
		return o, err
	}
	return o, nil
}

// applySplitKey applies one per-key form, rest being "<type>.<group_kind>".
func applySplitKey(overrides map[string]Override, rest, v string) error {
	typ, groupKind, ok := strings.Cut(rest, ".")
	if !ok || groupKind == "" {
		return errors.New("want resource.customizations.<type>.<group_kind>")
	}
	key, err := overrideKey(groupKind)
	if err != nil {
		return err
	}
	o := overrides[key]
	switch typ {
	case "health":
		o.HealthLua = v
		if err := checkHealth(v); err != nil {
			// Kept: the kind's health shows the error, as in Argo CD.
			overrides[key] = o
			return err
		}
	case "useOpenLibs":
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%q is not a boolean", v)
		}
		o.UseOpenLibs = b
	case "actions":
		a, err := parseActions(v)
		if err != nil {
			return err
		}
		o.Actions = a
	case "ignoreDifferences", "ignoreResourceUpdates":
		var d IgnoreDiff
		if err := yaml.UnmarshalStrict([]byte(v), &d); err != nil {
			return err
		}
		if typ == "ignoreDifferences" {
			o.IgnoreDifferences = d
		} else {
			o.IgnoreResourceUpdates = d
		}
	case "knownTypeFields":
		var f []KnownTypeField
		if err := yaml.UnmarshalStrict([]byte(v), &f); err != nil {
			return err
		}
		o.KnownTypeFields = f
	default:
		return fmt.Errorf("unknown customization type %q: want health, useOpenLibs, actions, ignoreDifferences, ignoreResourceUpdates or knownTypeFields", typ)
	}
	overrides[key] = o
	return nil
}

// overrideKey turns a key's <group_kind> into Argo CD's override key:
// "apps_Deployment" is "apps/Deployment", "Pod" the core group's Pod,
// "all" every kind.
func overrideKey(groupKind string) (string, error) {
	if groupKind == "all" {
		return "*/*", nil
	}
	parts := strings.Split(groupKind, "_")
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return parts[0] + "/" + parts[1], nil
	case len(parts) == 1 && groupKind != "":
		return groupKind, nil
	}
	return "", fmt.Errorf("%q is not <group>_<kind> nor <kind>", groupKind)
}

func parseActions(v string) (*Actions, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var a Actions
	if err := yaml.UnmarshalStrict([]byte(v), &a); err != nil {
		return nil, err
	}
	for i, d := range a.Definitions {
		if d.Name == "" {
			return nil, fmt.Errorf("definition %d has no name", i+1)
		}
	}
	return &a, nil
}

// checkHealth compiles a health script, so that a syntax error is told
// when argocd-cm changes and not only on the kind's objects.
func checkHealth(code string) error {
	if code == "" {
		return nil
	}
	return lua.Default.Check(code)
}

func parseFiltered(v string) ([]FilteredResource, error) {
	var list []FilteredResource
	if err := yaml.UnmarshalStrict([]byte(v), &list); err != nil {
		return nil, err
	}
	return list, nil
}

// parseCompareOptions reads resource.compareoptions. Its
// ignoreResourceStatusField may be YAML's false for "off".
func parseCompareOptions(v string) (CompareOptions, error) {
	opts := CompareOptions{IgnoreResourceStatusField: StatusCRD, IgnoreDifferencesOnResourceUpdates: true}
	if strings.TrimSpace(v) == "" {
		return opts, nil
	}
	var raw struct {
		IgnoreAggregatedRoles              bool  `json:"ignoreAggregatedRoles"`
		IgnoreResourceStatusField          any   `json:"ignoreResourceStatusField"`
		IgnoreDifferencesOnResourceUpdates *bool `json:"ignoreDifferencesOnResourceUpdates"`
	}
	if err := yaml.UnmarshalStrict([]byte(v), &raw); err != nil {
		return opts, err
	}
	opts.IgnoreAggregatedRoles = raw.IgnoreAggregatedRoles
	if raw.IgnoreDifferencesOnResourceUpdates != nil {
		opts.IgnoreDifferencesOnResourceUpdates = *raw.IgnoreDifferencesOnResourceUpdates
	}
	switch f := raw.IgnoreResourceStatusField; f {
	case nil, "", "crd":
	case "all":
		opts.IgnoreResourceStatusField = StatusAll
	case "off", "false", false:
		opts.IgnoreResourceStatusField = StatusNone
	default:
		return opts, fmt.Errorf("ignoreResourceStatusField %v: want crd, all or off; crd applies", f)
	}
	return opts, nil
}

// HealthScript returns the health script argocd-cm sets for gk: the exact
// key's, else the first glob key (in key order) that matches and has one,
// as Argo CD.
func (s ResourceSettings) HealthScript(gk schema.GroupKind) (lua.Script, bool) {
	if o := s.Overrides[keyOf(gk)]; o.HealthLua != "" {
		return lua.Script{Code: o.HealthLua, OpenLibs: o.UseOpenLibs}, true
	}
	for _, g := range s.globKeys {
		if o := s.Overrides[g.key]; o.HealthLua != "" && g.group.Match(gk.Group) && g.kind.Match(gk.Kind) {
			return lua.Script{Code: o.HealthLua, OpenLibs: o.UseOpenLibs}, true
		}
	}
	return lua.Script{}, false
}

// Judge judges health by these settings' health scripts, then by the
// built-in rules.
func (s ResourceSettings) Judge() health.Judge {
	return health.Judge{Custom: s.CustomHealth, Scripted: func(gk schema.GroupKind) bool {
		_, ok := s.HealthScript(gk)
		return ok
	}}
}

// CustomHealth judges obj by its kind's health script in argocd-cm, when
// there is one. A script that fails makes obj Unknown with the error.
func (s ResourceSettings) CustomHealth(obj *unstructured.Unstructured) (health.Result, bool) {
	script, ok := s.HealthScript(obj.GroupVersionKind().GroupKind())
	if !ok {
		return health.Result{}, false
	}
	status, message, err := lua.Health(script, obj)
	if err != nil {
		return health.Result{Status: health.Unknown, Message: err.Error()}, true
	}
	return health.Result{Status: v1alpha1.HealthStatusCode(status), Message: message}, true
}

// HealthJudge judges health by the health scripts of the argocd-cm in
// force at each call, then by the built-in rules. A nil Source has none.
func (s *Source) HealthJudge() health.Judge {
	if s == nil {
		return health.Judge{}
	}
	return health.Judge{Custom: func(obj *unstructured.Unstructured) (health.Result, bool) {
		return s.Current().Resource.CustomHealth(obj)
	}, Scripted: func(gk schema.GroupKind) bool {
		_, ok := s.Current().Resource.HealthScript(gk)
		return ok
	}}
}

// HealthScriptChanged returns whether a kind is judged by another health
// script (or none) in next than in prev: the kinds whose cached health a
// change of argocd-cm makes stale.
func HealthScriptChanged(prev, next ResourceSettings) func(schema.GroupKind) bool {
	return func(gk schema.GroupKind) bool {
		a, _ := prev.HealthScript(gk)
		b, _ := next.HealthScript(gk)
		return a != b
	}
}

// CustomActions returns the custom actions argocd-cm sets for gk (exact
// key only, as Argo CD).
func (s ResourceSettings) CustomActions(gk schema.GroupKind) (*Actions, bool) {
	o, ok := s.Overrides[keyOf(gk)]
	if !ok || o.Actions == nil {
		return nil, false
	}
	return o.Actions, true
}

// UseOpenLibs reports whether gk's scripts may use every Lua library.
func (s ResourceSettings) UseOpenLibs(gk schema.GroupKind) bool {
	return s.Overrides[keyOf(gk)].UseOpenLibs
}

// IgnoreDifferences returns the rules of IgnoreRules that apply to gk.
func (s ResourceSettings) IgnoreDifferences(gk schema.GroupKind) []v1alpha1.ResourceIgnoreDifferences {
	var out []v1alpha1.ResourceIgnoreDifferences
	for _, r := range s.ignoreRules {
		if globMatch(r.Group, gk.Group) && globMatch(r.Kind, gk.Kind) {
			out = append(out, r)
		}
	}
	return out
}

// IgnoreRules returns argocd-cm's ignoreDifferences as rules of an app's
// spec.ignoreDifferences (group and kind may be globs), to be added to
// every app's: each key's, then what resource.compareoptions ignores.
func (s ResourceSettings) IgnoreRules() []v1alpha1.ResourceIgnoreDifferences {
	return s.ignoreRules
}

// UpdateRules returns the fields of gk whose changes alone are not worth
// a comparison of the owning app (resource.customizations'
// ignoreResourceUpdates, and the ignoreDifferences of IgnoreRules unless
// resource.compareoptions' ignoreDifferencesOnResourceUpdates is false), or
// nil when resource.ignoreResourceUpdatesEnabled is false.
func (s ResourceSettings) UpdateRules(gk schema.GroupKind) []v1alpha1.ResourceIgnoreDifferences {
	if !s.IgnoreResourceUpdatesEnabled {
		return nil
	}
	var out []v1alpha1.ResourceIgnoreDifferences
	for _, r := range s.updateRules {
		if globMatch(r.Group, gk.Group) && globMatch(r.Kind, gk.Kind) {
			out = append(out, r)
		}
	}
	return out
}

// shippedIgnoreResourceUpdates are the ignoreResourceUpdates of Argo CD 3's
// install manifests, in force when argocd-cm sets none (as
// shippedExclusions): the fields controllers update all the time.
var shippedIgnoreResourceUpdates = map[string]IgnoreDiff{
	"*/*": {JSONPointers: []string{"/status"}},
	"ConfigMap": {JQPathExpressions: []string{
		`.metadata.annotations."cluster-autoscaler.kubernetes.io/last-updated"`,
		`.metadata.annotations."control-plane.alpha.kubernetes.io/leader"`,
	}},
	"Endpoints":                      {JSONPointers: []string{"/metadata", "/subsets"}},
	"discovery.k8s.io/EndpointSlice": {JSONPointers: []string{"/metadata", "/endpoints", "/ports"}},
	"apps/ReplicaSet": {JQPathExpressions: []string{
		`.metadata.annotations."deployment.kubernetes.io/desired-replicas"`,
		`.metadata.annotations."deployment.kubernetes.io/max-replicas"`,
		`.metadata.annotations."rollout.argoproj.io/desired-replicas"`,
	}},
	"argoproj.io/Application": {JQPathExpressions: []string{
		`.metadata.annotations."notified.notifications.argoproj.io"`,
		`.metadata.annotations."argocd.argoproj.io/refresh"`,
		`.metadata.annotations."argocd.argoproj.io/hydrate"`,
		`.operation`,
	}},
	"argoproj.io/Rollout": {JQPathExpressions: []string{`.metadata.annotations."notified.notifications.argoproj.io"`}},
	"autoscaling/HorizontalPodAutoscaler": {JQPathExpressions: []string{
		`.metadata.annotations."autoscaling.alpha.kubernetes.io/behavior"`,
		`.metadata.annotations."autoscaling.alpha.kubernetes.io/conditions"`,
		`.metadata.annotations."autoscaling.alpha.kubernetes.io/metrics"`,
		`.metadata.annotations."autoscaling.alpha.kubernetes.io/current-metrics"`,
	}},
}

// updateRules lists the ignoreResourceUpdates of every key (the shipped
// ones when data sets none, in any form), then, with the compare option,
// the ignoreDifferences rules of every app.
func updateRules(data map[string]string, overrides map[string]Override, opts CompareOptions, ignores []v1alpha1.ResourceIgnoreDifferences) []v1alpha1.ResourceIgnoreDifferences {
	byKey := map[string]IgnoreDiff{}
	for key, o := range overrides {
		if !o.IgnoreResourceUpdates.empty() {
			byKey[key] = o.IgnoreResourceUpdates
		}
	}
	if len(byKey) == 0 && !setsIgnoreResourceUpdates(data) {
		byKey = shippedIgnoreResourceUpdates
	}
	var out []v1alpha1.ResourceIgnoreDifferences
	for _, key := range sortedKeys(byKey) {
		out = append(out, byKey[key].rule(key))
	}
	if opts.IgnoreDifferencesOnResourceUpdates {
		out = append(out, ignores...)
	}
	return out
}

// setsIgnoreResourceUpdates reports whether a per-key form of
// ignoreResourceUpdates is in data, even empty: the user's list then
// replaces the shipped one.
func setsIgnoreResourceUpdates(data map[string]string) bool {
	for k := range data {
		if strings.HasPrefix(k, keyCustomizations+".ignoreResourceUpdates.") {
			return true
		}
	}
	return false
}

// KnownTypeFields returns the fields of custom resources argocd-cm says
// hold known Kubernetes types, for the diff.
func (s ResourceSettings) KnownTypeFields() []knowntypes.Field {
	return s.knownTypes
}

// knownTypeFields gathers the valid knownTypeFields of overrides, by
// kind; an entry of an unknown type, without a field, or of a glob key
// (they name one kind's fields, as in Argo CD) is one error.
func knownTypeFields(overrides map[string]Override, errs []error) ([]knowntypes.Field, []error) {
	var out []knowntypes.Field
	for _, key := range sortedKeys(overrides) {
		for _, f := range overrides[key].KnownTypeFields {
			switch {
			case strings.ContainsAny(key, "*?[{"):
				errs = append(errs, fmt.Errorf("%s: knownTypeFields of %s: a glob key names no kind's fields", keyCustomizations, key))
				continue
			case strings.TrimSpace(f.Field) == "":
				errs = append(errs, fmt.Errorf("%s: knownTypeFields of %s: an entry of type %q has no field", keyCustomizations, key, f.Type))
				continue
			case !knowntypes.Known(f.Type):
				errs = append(errs, fmt.Errorf("%s: knownTypeFields of %s: field %s: %q is not a known Kubernetes type (e.g. core/v1/PodSpec)", keyCustomizations, key, f.Field, f.Type))
				continue
			}
			group, kind, ok := strings.Cut(key, "/")
			if !ok {
				group, kind = "", key
			}
			out = append(out, knowntypes.Field{Group: group, Kind: kind, Field: strings.TrimSpace(f.Field), Type: f.Type})
		}
	}
	return out, errs
}

// aggregatedRules leaves out the rules of a ClusterRole with an
// aggregationRule, which the API server fills in (ignoreAggregatedRoles).
const aggregatedRules = `select(.aggregationRule != null) | .rules`

func ignoreRules(overrides map[string]Override, opts CompareOptions) []v1alpha1.ResourceIgnoreDifferences {
	var out []v1alpha1.ResourceIgnoreDifferences
	for _, key := range sortedKeys(overrides) {
		d := overrides[key].IgnoreDifferences
		if d.empty() {
			continue
		}
		out = append(out, d.rule(key))
	}
	switch opts.IgnoreResourceStatusField {
	case StatusAll:
		out = append(out, v1alpha1.ResourceIgnoreDifferences{Group: "*", Kind: "*", JSONPointers: []string{"/status"}})
	case StatusCRD, "":
		out = append(out, v1alpha1.ResourceIgnoreDifferences{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition",
			JSONPointers: []string{"/status", "/spec/preserveUnknownFields"}})
	}
	if opts.IgnoreAggregatedRoles {
		out = append(out, v1alpha1.ResourceIgnoreDifferences{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole",
			JQPathExpressions: []string{aggregatedRules}})
	}
	return out
}

// Excluded reports whether the kind is left out of the cluster cache of
// cluster (its API server URL), by Argo CD's rules: an exclusion wins, an
// inclusion admits, and a cluster some inclusion names admits nothing else.
func (s ResourceSettings) Excluded(group, kind, cluster string) bool {
	for _, f := range s.Exclusions {
		if f.Match(group, kind, cluster) {
			return true
		}
	}
	for _, f := range s.Inclusions {
		if f.Match(group, kind, cluster) {
			return false
		}
	}
	for _, f := range s.Inclusions {
		if f.matchCluster(cluster) {
			return true
		}
	}
	return false
}

// FiltersChanged reports whether next excludes or includes other kinds
// than prev: the watch caches must then be told (Reexclude).
func FiltersChanged(prev, next ResourceSettings) bool {
	return !reflect.DeepEqual(prev.Exclusions, next.Exclusions) || !reflect.DeepEqual(prev.Inclusions, next.Inclusions)
}

// ExcludedIn returns whether argocd-cm in force at each call excludes a
// kind on server (a cluster's API server URL), for a watch cache's
// Options.Excluded. A nil Source excludes nothing more.
func (s *Source) ExcludedIn(server string) func(schema.GroupKind) bool {
	if s == nil {
		return nil
	}
	return func(gk schema.GroupKind) bool {
		return s.Current().Resource.Excluded(gk.Group, gk.Kind, server)
	}
}

// RespectRBAC returns resource.respectRBAC in force at each call, for a
// watch cache's Options.RespectRBAC. A nil Source is off.
func (s *Source) RespectRBAC() func() string {
	if s == nil {
		return nil
	}
	return func() string { return s.Current().Resource.RespectRBAC }
}

// Match reports whether the entry covers the kind in cluster.
func (f FilteredResource) Match(group, kind, cluster string) bool {
	return anyGlob(f.APIGroups, group) && anyGlob(f.Kinds, kind) && f.matchCluster(cluster)
}

func (f FilteredResource) matchCluster(cluster string) bool {
	return anyGlob(f.Clusters, cluster)
}

// anyGlob: an empty list matches everything.
func anyGlob(patterns []string, s string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if globMatch(p, s) {
			return true
		}
	}
	return false
}

// compileGlobKeys compiles the override keys with globs; a key whose glob
// does not compile matches nothing but its exact kind.
func compileGlobKeys(overrides map[string]Override) []globKey {
	var out []globKey
	for _, key := range sortedKeys(overrides) {
		if !strings.ContainsAny(key, "*?[{") {
			continue
		}
		group, kind, ok := strings.Cut(key, "/")
		if !ok {
			group, kind = "", key
		}
		g, err := glob.Compile(group)
		if err != nil {
			continue
		}
		k, err := glob.Compile(kind)
		if err != nil {
			continue
		}
		out = append(out, globKey{key: key, group: g, kind: k})
	}
	return out
}

// keyOf is Argo CD's override key of gk.
func keyOf(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Group + "/" + gk.Kind
}

func globMatch(pattern, s string) bool {
	if pattern == s {
		return true
	}
	if !strings.ContainsAny(pattern, "*?[{") {
		return false
	}
	g, err := glob.Compile(pattern)
	return err == nil && g.Match(s)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
