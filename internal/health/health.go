// Package health judges the health of live Kubernetes objects the way Argo CD
// does, so that Applications and Rollouts show the statuses users expect.
//
// Assess is pure: it reads only the object it is given and never calls the
// API server, so the same object always gets the same Result. Worst folds
// many results into one, which is how an Application's health is derived
// from the health of the resources it manages.
package health

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// The statuses Assess returns. They are the Application API's codes, so that
// controllers can store a Result without converting it.
const (
	Healthy     = v1alpha1.HealthStatusHealthy
	Progressing = v1alpha1.HealthStatusProgressing
	Degraded    = v1alpha1.HealthStatusDegraded
	Suspended   = v1alpha1.HealthStatusSuspended
	Missing     = v1alpha1.HealthStatusMissing
	Unknown     = v1alpha1.HealthStatusUnknown
)

// Result is the health of one object, with a human-readable reason that may be
// empty when the status speaks for itself.
type Result struct {
	Status  v1alpha1.HealthStatusCode
	Message string
}

// hookFinalizer is the finalizer Argo CD puts on hook resources; a hook being
// deleted keeps its own health so that its outcome can still be read.
const hookFinalizer = "argocd.argoproj.io/hook-finalizer"

// StatusText returns Assess's status of obj as text: the cluster cache's
// judgement of each tracked object (clustercache.Options.Health).
func StatusText(obj *unstructured.Unstructured) string {
	return string(Assess(obj).Status)
}

// Assess returns the health of a live object. A nil object is Missing: the
// caller expected it but found nothing in the cluster. Kinds without a rule of
// their own are judged from their standard status conditions.
func Assess(obj *unstructured.Unstructured) Result {
	return Judge{}.Assess(obj)
}

// Judge assesses health with a user's rules before the built-in ones.
type Judge struct {
	// Custom, when set, judges obj when it has a rule for it (argocd-cm's
	// Lua health scripts); it must not panic, and reports a failing rule
	// as Unknown with the error.
	Custom func(obj *unstructured.Unstructured) (Result, bool)
	// Scripted, when set, reports whether Custom has a rule for a kind:
	// a child Application is awaited by sync waves only then (Awaited).
	Scripted func(schema.GroupKind) bool
}

// Assess is Assess with j's Custom rule first. A missing object and one
// pending deletion are judged as without it, as in Argo CD.
func (j Judge) Assess(obj *unstructured.Unstructured) Result {
	if obj == nil || obj.Object == nil {
		return Result{Status: Missing}
	}
	if obj.GetDeletionTimestamp() != nil && !hasFinalizer(obj, hookFinalizer) {
		return Result{Status: Progressing, Message: "Pending deletion"}
	}
	if j.Custom != nil {
		if res, ok := j.Custom(obj); ok {
			return res
		}
	}
	gvk := obj.GroupVersionKind()
	if rule, ok := rules[gvk.GroupKind()]; ok {
		return rule(obj)
	}
	if rule := groupRule(gvk.Group); rule != nil {
		return rule(obj)
	}
	if isCrossplaneComposite(obj) {
		return crossplaneHealth(obj)
	}
	return genericHealth(obj)
}

// StatusText is StatusText with j's Custom rule first.
func (j Judge) StatusText(obj *unstructured.Unstructured) string {
	return string(j.Assess(obj).Status)
}

// rule judges one kind of object.
type rule func(*unstructured.Unstructured) Result

// gk names a kind in a group, to keep the rules table short.
func gk(group, kind string) schema.GroupKind {
	return schema.GroupKind{Group: group, Kind: kind}
}

// rules maps each kind with a rule of its own to that rule. The rules for
// custom resources follow Argo CD's built-in resource customizations, so
// that an application shows the same health in Skiff as in Argo CD.
var rules = map[schema.GroupKind]rule{
	gk("", "Pod"):                                     podHealth,
	gk("", "Service"):                                 serviceHealth,
	gk("", "PersistentVolumeClaim"):                   pvcHealth,
	gk("apps", "Deployment"):                          deploymentHealth,
	gk("apps", "StatefulSet"):                         statefulSetHealth,
	gk("apps", "DaemonSet"):                           daemonSetHealth,
	gk("apps", "ReplicaSet"):                          replicaSetHealth,
	gk("extensions", "Deployment"):                    deploymentHealth,
	gk("extensions", "StatefulSet"):                   statefulSetHealth,
	gk("extensions", "DaemonSet"):                     daemonSetHealth,
	gk("extensions", "ReplicaSet"):                    replicaSetHealth,
	gk("extensions", "Ingress"):                       ingressHealth,
	gk("networking.k8s.io", "Ingress"):                ingressHealth,
	gk("batch", "Job"):                                jobHealth,
	gk("batch", "CronJob"):                            cronJobHealth,
	gk("autoscaling", "HorizontalPodAutoscaler"):      hpaHealth,
	gk("apiregistration.k8s.io", "APIService"):        apiServiceHealth,
	gk("policy", "PodDisruptionBudget"):               pdbHealth,
	gk(v1alpha1.GroupVersion.Group, "Rollout"):        rolloutHealth,
	gk(v1alpha1.GroupVersion.Group, "AnalysisRun"):    analysisRunHealth,
	gk(v1alpha1.GroupVersion.Group, "Application"):    applicationHealth,
	gk(v1alpha1.GroupVersion.Group, "ApplicationSet"): applicationSetHealth,
	gk(v1alpha1.GroupVersion.Group, "Workflow"):       workflowHealth,
	gk(v1alpha1.GroupVersion.Group, "CronWorkflow"):   cronWorkflowHealth,
	gk(v1alpha1.GroupVersion.Group, "EventBus"):       eventBusHealth,
	gk(v1alpha1.GroupVersion.Group, "Sensor"):         sensorHealth,
	gk(v1alpha1.GroupVersion.Group, "EventSource"):    eventSourceHealth,

	gk("cert-manager.io", "Certificate"):        certificateHealth,
	gk("cert-manager.io", "CertificateRequest"): certificateRequestHealth,
	gk("cert-manager.io", "Issuer"):             readyRule("Initializing issuer"),
	gk("cert-manager.io", "ClusterIssuer"):      readyRule("Initializing ClusterIssuer"),

	gk("external-secrets.io", "ExternalSecret"):     externalSecretHealth,
	gk("external-secrets.io", "SecretStore"):        readyRule("Waiting for SecretStore"),
	gk("external-secrets.io", "ClusterSecretStore"): readyRule("Waiting for ClusterSecretStore"),
	gk("external-secrets.io", "PushSecret"):         readyRule("Waiting for PushSecret"),
	gk("kubernetes-client.io", "ExternalSecret"):    legacyExternalSecretHealth,
	gk("bitnami.com", "SealedSecret"):               sealedSecretHealth,

	gk("helm.toolkit.fluxcd.io", "HelmRelease"):        fluxHealth(fluxHelmRelease),
	gk("kustomize.toolkit.fluxcd.io", "Kustomization"): fluxHealth(fluxKustomization),
	gk("source.toolkit.fluxcd.io", "GitRepository"):    fluxHealth(fluxSource),
	gk("source.toolkit.fluxcd.io", "HelmRepository"):   helmRepositoryHealth,
	gk("source.toolkit.fluxcd.io", "OCIRepository"):    fluxHealth(fluxSource),

	gk("keda.sh", "ScaledObject"): scaledObjectHealth,
	gk("keda.sh", "ScaledJob"):    scaledJobHealth,

	gk("cluster.x-k8s.io", "Cluster"):           capiClusterHealth,
	gk("cluster.x-k8s.io", "MachineDeployment"): capiMachineDeploymentHealth,
	gk("cluster.x-k8s.io", "Machine"):           capiMachineHealth,

	gk("networking.istio.io", "VirtualService"):  istioHealth,
	gk("networking.istio.io", "DestinationRule"): istioHealth,

	gk("gateway.networking.k8s.io", "Gateway"):   gatewayHealth,
	gk("gateway.networking.k8s.io", "HTTPRoute"): routeHealth,
	gk("gateway.networking.k8s.io", "GRPCRoute"): routeHealth,

	gk("kafka.strimzi.io", "Kafka"): kafkaHealth,

	gk("monitoring.coreos.com", "Prometheus"):   prometheusOperatorHealth,
	gk("monitoring.coreos.com", "Alertmanager"): prometheusOperatorHealth,
}

// groupRule returns the rule for kinds judged by their group alone, as Argo
// CD's wildcard customizations are: Crossplane's managed resources, claims
// and composites in *.crossplane.io and the Upbound providers' *.upbound.io.
func groupRule(group string) rule {
	switch {
	case strings.HasSuffix(group, ".crossplane.io"):
		return crossplaneHealth
	case strings.HasSuffix(group, ".upbound.io"):
		return upboundHealth
	}
	return nil
}

// AnnotationIgnoreHealthCheck, "true" on a live resource, leaves its
// health out of its app's health and out of what sync waves wait for, as
// in Argo CD.
const AnnotationIgnoreHealthCheck = "argocd.argoproj.io/ignore-healthcheck"

// Ignored reports whether obj's health is left out of its app's
// (AnnotationIgnoreHealthCheck).
func Ignored(obj *unstructured.Unstructured) bool {
	return obj != nil && obj.GetAnnotations()[AnnotationIgnoreHealthCheck] == "true"
}

// ApplicationKind is the kind of child Applications (app of apps).
var ApplicationKind = schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: "Application"}

// RollsUp reports whether a resource of this group and kind, judged
// status, counts towards the health of the Application that manages it. A
// child Application's does not (app of apps): since v1.8 Argo CD has no
// health check for Applications, so that a parent does not mirror every
// child's problems; the child's own health is still shown on its
// resource. When argocd-cm restores the check (scripted: a health script
// for argoproj.io/Application, as Argo CD's upgrade notes show), the
// child's health counts unless Missing or Unknown, as in Argo CD.
func RollsUp(group, kind string, status v1alpha1.HealthStatusCode, scripted bool) bool {
	if (schema.GroupKind{Group: group, Kind: kind}) != ApplicationKind {
		return true
	}
	return scripted && status != Missing && status != Unknown
}

// Awaited reports whether a sync wave that applied obj waits for it to be
// healthy before the next wave: not when annotated ignore-healthcheck, and
// not for a child Application unless argocd-cm restores the Application
// health check (scripted), as in Argo CD since v1.8.
func Awaited(obj *unstructured.Unstructured, scripted bool) bool {
	if Ignored(obj) {
		return false
	}
	return obj.GroupVersionKind().GroupKind() != ApplicationKind || scripted
}

// Awaited is Awaited with j's Scripted answer for obj's kind.
func (j Judge) Awaited(obj *unstructured.Unstructured) bool {
	return Awaited(obj, j.Scripted != nil && j.Scripted(obj.GroupVersionKind().GroupKind()))
}

// order ranks statuses from best to worst, as Argo CD's IsWorse does. Unknown
// is worst because an unjudged resource must not let an Application claim to
// be Healthy; Missing ranks below Degraded because a resource that is merely
// not created yet is usually on its way.
var order = map[v1alpha1.HealthStatusCode]int{
	Healthy:     0,
	Suspended:   1,
	Progressing: 2,
	Missing:     3,
	Degraded:    4,
	Unknown:     5,
}

// rank places a status in order. A status this package does not know (say,
// copied from a newer child Application) ranks as Unknown rather than as
// Healthy, which is what Argo CD would do, so that it cannot hide problems.
func rank(s v1alpha1.HealthStatusCode) int {
	if r, ok := order[s]; ok {
		return r
	}
	return order[Unknown]
}

// IsWorse reports whether candidate is a worse status than current.
func IsWorse(current, candidate v1alpha1.HealthStatusCode) bool {
	return rank(candidate) > rank(current)
}

// Worst returns the worst of results: an Application is as healthy as its
// least healthy resource. Among equally bad results the first one wins, so
// callers control whose message is shown by the order they pass. No results
// at all is Healthy, as an Application with no resources is in Argo CD.
func Worst(results ...Result) Result {
	worst := Result{Status: Healthy}
	for i, r := range results {
		if i == 0 || IsWorse(worst.Status, r.Status) {
			worst = r
		}
	}
	return worst
}

// known maps a status read from an object to one of ours, and anything else
// to Unknown.
func known(s string) v1alpha1.HealthStatusCode {
	c := v1alpha1.HealthStatusCode(s)
	if _, ok := order[c]; ok {
		return c
	}
	return Unknown
}

func hasFinalizer(obj *unstructured.Unstructured, name string) bool {
	for _, f := range obj.GetFinalizers() {
		if f == name {
			return true
		}
	}
	return false
}

// field walks obj along fields and returns what it finds, or nil.
func field(obj map[string]any, fields ...string) any {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[f]
	}
	return cur
}

// str returns a string field, or "" when it is absent or not a string.
func str(obj map[string]any, fields ...string) string {
	s, _ := field(obj, fields...).(string)
	return s
}

// flag returns a boolean field, or false when it is absent or not a bool.
func flag(obj map[string]any, fields ...string) bool {
	b, _ := field(obj, fields...).(bool)
	return b
}

// num returns an integer field. JSON decoding may have produced int64 or
// float64, and hand-built objects may hold int; all are accepted. Strings that
// hold an integer are accepted too, because a Rollout's observedGeneration is
// a string.
func num(obj map[string]any, fields ...string) (int64, bool) {
	switch v := field(obj, fields...).(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case int:
		return int64(v), true
	case float64:
		return int64(v), true
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// numOr returns an integer field, or def when it is absent.
func numOr(obj map[string]any, def int64, fields ...string) int64 {
	if n, ok := num(obj, fields...); ok {
		return n
	}
	return def
}

// list returns a list field, or nil.
func list(obj map[string]any, fields ...string) []any {
	l, _ := field(obj, fields...).([]any)
	return l
}

// condition is the common shape of status conditions across kinds.
type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// text describes a condition as "Reason: message", or whichever half is set.
func (c condition) text() string {
	switch {
	case c.Reason != "" && c.Message != "":
		return fmt.Sprintf("%s: %s", c.Reason, c.Message)
	case c.Message != "":
		return c.Message
	}
	return c.Reason
}

// conditions reads status.conditions, skipping entries that are not objects.
func conditions(obj map[string]any) []condition {
	status, _ := obj["status"].(map[string]any)
	return conditionsIn(status)
}

// conditionsIn reads the conditions list of m, which may be a status or a
// part of one (a Gateway's listener, a route's parent).
func conditionsIn(m map[string]any) []condition {
	var out []condition
	for _, item := range list(m, "conditions") {
		c, ok := item.(map[string]any)
		if !ok {
			continue
		}
		out = append(out, condition{
			Type:    str(c, "type"),
			Status:  str(c, "status"),
			Reason:  str(c, "reason"),
			Message: str(c, "message"),
		})
	}
	return out
}

// findCondition returns the first condition of type t.
func findCondition(conds []condition, t string) (condition, bool) {
	for _, c := range conds {
		if c.Type == t {
			return c, true
		}
	}
	return condition{}, false
}

// generationObserved reports whether a controller has seen the latest spec,
// by the usual metadata.generation and numeric status.observedGeneration.
func generationObserved(obj *unstructured.Unstructured) bool {
	observed, _ := num(obj.Object, "status", "observedGeneration")
	return obj.GetGeneration() <= observed
}
