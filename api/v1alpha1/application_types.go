package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Application is a group of Kubernetes resources defined by manifests in a
// source (git or Helm repository) and deployed to a destination cluster and
// namespace. Like Argo CD, the status is part of the main resource (no status
// subresource), so tools that read or write it whole keep working.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=applications,shortName=app;apps
// +kubebuilder:printcolumn:name="Sync Status",type=string,JSONPath=`.status.sync.status`
// +kubebuilder:printcolumn:name="Health Status",type=string,JSONPath=`.status.health.status`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.sync.revision`,priority=10
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.project`,priority=10
type Application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec ApplicationSpec `json:"spec"`
	// Status is written by the controller only, so the CRD declares it an
	// object without a schema: validating, pruning and tracking the fields
	// of a typed status was half of the API server's work on every status
	// write. Its decoding tolerates fields of the wrong type (see
	// ApplicationStatus.UnmarshalJSON).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Status ApplicationStatus `json:"status,omitempty"`
	// Operation is a requested action, such as a sync; the controller runs it,
	// records the result in status.operationState and clears this field.
	// +optional
	Operation *Operation `json:"operation,omitempty"`
}

// ApplicationList is a list of Applications.
//
// +kubebuilder:object:root=true
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []Application `json:"items"`
}

// ApplicationSpec is what the user wants: where manifests come from, where
// they go and how they are kept in sync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSpec struct {
	// Source is the single source of manifests; mutually exclusive with Sources.
	// +optional
	Source *ApplicationSource `json:"source,omitempty"`
	// Destination is the target cluster and namespace.
	Destination ApplicationDestination `json:"destination"`
	// Project is the AppProject this Application belongs to; empty means "default".
	Project string `json:"project"`
	// +optional
	SyncPolicy *SyncPolicy `json:"syncPolicy,omitempty"`
	// IgnoreDifferences lists fields to leave out of the comparison.
	// +optional
	IgnoreDifferences []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
	// Info holds free-form facts shown in the UI.
	// +optional
	Info []Info `json:"info,omitempty"`
	// RevisionHistoryLimit bounds status.history; default 10.
	// +optional
	RevisionHistoryLimit *int64 `json:"revisionHistoryLimit,omitempty"`
	// Sources lists several sources whose manifests are deployed together.
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// SourceHydrator is accepted and kept but not implemented.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	SourceHydrator *runtime.RawExtension `json:"sourceHydrator,omitempty"`
}

// GetSources returns spec.sources, or spec.source alone, as Argo CD's
// ApplicationSpec.GetSources does.
func (s *ApplicationSpec) GetSources() []ApplicationSource {
	if len(s.Sources) > 0 {
		return s.Sources
	}
	if s.Source != nil {
		return []ApplicationSource{*s.Source}
	}
	return nil
}

// ApplicationSource says where manifests come from and how to render them.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSource struct {
	// RepoURL is a git repository URL, or a Helm repository URL when Chart is set.
	RepoURL string `json:"repoURL"`
	// Path is a directory inside the git repository.
	// +optional
	Path string `json:"path,omitempty"`
	// TargetRevision is a branch, tag, commit SHA or HEAD (git), or a chart version or range (Helm).
	// +optional
	TargetRevision string `json:"targetRevision,omitempty"`
	// +optional
	Helm *ApplicationSourceHelm `json:"helm,omitempty"`
	// +optional
	Kustomize *ApplicationSourceKustomize `json:"kustomize,omitempty"`
	// +optional
	Directory *ApplicationSourceDirectory `json:"directory,omitempty"`
	// +optional
	Plugin *ApplicationSourcePlugin `json:"plugin,omitempty"`
	// Chart is a Helm chart name, for Helm repository sources.
	// +optional
	Chart string `json:"chart,omitempty"`
	// Ref names this source so that other sources can read value files from it.
	// +optional
	Ref string `json:"ref,omitempty"`
	// Name is a human-readable name for this source.
	// +optional
	Name string `json:"name,omitempty"`
}

// ApplicationSourceHelm holds the Helm options of a source.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourceHelm struct {
	// +optional
	ValueFiles []string `json:"valueFiles,omitempty"`
	// +optional
	Parameters []HelmParameter `json:"parameters,omitempty"`
	// +optional
	ReleaseName string `json:"releaseName,omitempty"`
	// Values is a YAML block of values.
	// +optional
	Values string `json:"values,omitempty"`
	// +optional
	FileParameters []HelmFileParameter `json:"fileParameters,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	PassCredentials bool `json:"passCredentials,omitempty"`
	// +optional
	IgnoreMissingValueFiles bool `json:"ignoreMissingValueFiles,omitempty"`
	// +optional
	SkipCrds bool `json:"skipCrds,omitempty"`
	// ValuesObject is values as a structured object; it wins over Values.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	ValuesObject *runtime.RawExtension `json:"valuesObject,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	KubeVersion string `json:"kubeVersion,omitempty"`
	// +optional
	APIVersions []string `json:"apiVersions,omitempty"`
	// +optional
	SkipTests bool `json:"skipTests,omitempty"`
	// +optional
	SkipSchemaValidation bool `json:"skipSchemaValidation,omitempty"`
}

// HelmParameter is a value passed like `helm --set`.
//
// +kubebuilder:pruning:PreserveUnknownFields
type HelmParameter struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Value string `json:"value,omitempty"`
	// ForceString passes the value as a string, like `helm --set-string`.
	// +optional
	ForceString bool `json:"forceString,omitempty"`
}

// HelmFileParameter is a value read from a file, like `helm --set-file`.
//
// +kubebuilder:pruning:PreserveUnknownFields
type HelmFileParameter struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Path string `json:"path,omitempty"`
}

// ApplicationSourceKustomize holds the Kustomize overrides of a source.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourceKustomize struct {
	// +optional
	NamePrefix string `json:"namePrefix,omitempty"`
	// +optional
	NameSuffix string `json:"nameSuffix,omitempty"`
	// Images overrides images, as `kustomize edit set image` takes them.
	// +optional
	Images []string `json:"images,omitempty"`
	// +optional
	CommonLabels map[string]string `json:"commonLabels,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	CommonAnnotations map[string]string `json:"commonAnnotations,omitempty"`
	// +optional
	ForceCommonLabels bool `json:"forceCommonLabels,omitempty"`
	// +optional
	ForceCommonAnnotations bool `json:"forceCommonAnnotations,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	CommonAnnotationsEnvsubst bool `json:"commonAnnotationsEnvsubst,omitempty"`
	// +optional
	Replicas []KustomizeReplica `json:"replicas,omitempty"`
	// +optional
	Patches []KustomizePatch `json:"patches,omitempty"`
	// +optional
	Components []string `json:"components,omitempty"`
	// +optional
	IgnoreMissingComponents bool `json:"ignoreMissingComponents,omitempty"`
	// +optional
	LabelWithoutSelector bool `json:"labelWithoutSelector,omitempty"`
	// +optional
	LabelIncludeTemplates bool `json:"labelIncludeTemplates,omitempty"`
	// +optional
	KubeVersion string `json:"kubeVersion,omitempty"`
	// +optional
	APIVersions []string `json:"apiVersions,omitempty"`
}

// KustomizeReplica overrides the replica count of a named workload.
//
// +kubebuilder:pruning:PreserveUnknownFields
type KustomizeReplica struct {
	Name  string             `json:"name"`
	Count intstr.IntOrString `json:"count"`
}

// KustomizePatch is a strategic-merge or JSON patch applied by Kustomize.
//
// +kubebuilder:pruning:PreserveUnknownFields
type KustomizePatch struct {
	// +optional
	Path string `json:"path,omitempty"`
	// +optional
	Patch string `json:"patch,omitempty"`
	// +optional
	Target *KustomizeSelector `json:"target,omitempty"`
	// +optional
	Options map[string]bool `json:"options,omitempty"`
}

// KustomizeSelector picks the resources a patch applies to.
//
// +kubebuilder:pruning:PreserveUnknownFields
type KustomizeSelector struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	AnnotationSelector string `json:"annotationSelector,omitempty"`
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// ApplicationSourceDirectory holds the options of a plain directory source.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourceDirectory struct {
	// +optional
	Recurse bool `json:"recurse,omitempty"`
	// +optional
	Jsonnet ApplicationSourceJsonnet `json:"jsonnet,omitempty"`
	// Exclude is a glob (or {a,b} list) of files to leave out.
	// +optional
	Exclude string `json:"exclude,omitempty"`
	// Include is a glob (or {a,b} list) of files to read.
	// +optional
	Include string `json:"include,omitempty"`
}

// ApplicationSourceJsonnet holds the Jsonnet options of a directory source.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourceJsonnet struct {
	// +optional
	ExtVars []JsonnetVar `json:"extVars,omitempty"`
	// +optional
	TLAs []JsonnetVar `json:"tlas,omitempty"`
	// +optional
	Libs []string `json:"libs,omitempty"`
}

// JsonnetVar is an external variable or top-level argument.
//
// +kubebuilder:pruning:PreserveUnknownFields
type JsonnetVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Code evaluates Value as Jsonnet code instead of a string.
	// +optional
	Code bool `json:"code,omitempty"`
}

// ApplicationSourcePlugin names a config management plugin; accepted and
// kept, reported as not implemented.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourcePlugin struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Env []EnvEntry `json:"env,omitempty"`
	// +optional
	Parameters []ApplicationSourcePluginParameter `json:"parameters,omitempty"`
}

// ApplicationSourcePluginParameter is one parameter of a config management
// plugin: a string, an array or a map.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourcePluginParameter struct {
	Name string `json:"name,omitempty"`
	// +optional
	String *string `json:"string,omitempty"`
	// +optional
	Map map[string]string `json:"map,omitempty"`
	// +optional
	Array []string `json:"array,omitempty"`
}

// EnvEntry is a name and value pair.
//
// +kubebuilder:pruning:PreserveUnknownFields
type EnvEntry struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ApplicationDestination is a cluster (by server URL or name) and a namespace.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationDestination struct {
	// +optional
	Server string `json:"server,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
}

// SyncPolicy controls when and how a sync is performed.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncPolicy struct {
	// +optional
	Automated *SyncPolicyAutomated `json:"automated,omitempty"`
	// SyncOptions are Argo CD's `Name=value` sync options, e.g. `CreateNamespace=true`.
	// +optional
	SyncOptions []string `json:"syncOptions,omitempty"`
	// +optional
	Retry *RetryStrategy `json:"retry,omitempty"`
	// +optional
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// SyncPolicyAutomated turns on automatic sync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncPolicyAutomated struct {
	// +optional
	Prune bool `json:"prune,omitempty"`
	// +optional
	SelfHeal bool `json:"selfHeal,omitempty"`
	// +optional
	AllowEmpty bool `json:"allowEmpty,omitempty"`
	// Enabled turns automated sync off when false; absent means on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// RetryStrategy says how failed syncs are retried.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RetryStrategy struct {
	// Limit is the number of retries; negative means without limit.
	// +optional
	Limit int64 `json:"limit,omitempty"`
	// +optional
	Backoff *Backoff `json:"backoff,omitempty"`
	// Refresh retries with the latest revision.
	// +optional
	Refresh bool `json:"refresh,omitempty"`
}

// Backoff is an exponential back-off between retries.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Backoff struct {
	// Duration is the first wait, in seconds or as a Go duration ("5s", "2m").
	// +optional
	Duration string `json:"duration,omitempty"`
	// +optional
	Factor *int64 `json:"factor,omitempty"`
	// +optional
	MaxDuration string `json:"maxDuration,omitempty"`
}

// ManagedNamespaceMetadata is put on a namespace created with CreateNamespace=true.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ManagedNamespaceMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ResourceIgnoreDifferences leaves fields of matching resources out of the comparison.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ResourceIgnoreDifferences struct {
	// +optional
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// +optional
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
	// ManagedFieldsManagers ignores fields owned by these field managers.
	// +optional
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// Info is a free-form name and value shown with the Application.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Info struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Operation is an action requested on an Application.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Operation struct {
	// +optional
	Sync *SyncOperation `json:"sync,omitempty"`
	// +optional
	InitiatedBy OperationInitiator `json:"initiatedBy,omitempty"`
	// +optional
	Info []Info `json:"info,omitempty"`
	// +optional
	Retry RetryStrategy `json:"retry,omitempty"`
}

// OperationInitiator says who started an operation.
//
// +kubebuilder:pruning:PreserveUnknownFields
type OperationInitiator struct {
	// +optional
	Username string `json:"username,omitempty"`
	// Automated is true when the controller started the operation itself.
	// +optional
	Automated bool `json:"automated,omitempty"`
}

// SyncOperation is a requested sync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncOperation struct {
	// Revision to sync to; empty means spec.source.targetRevision.
	// +optional
	Revision string `json:"revision,omitempty"`
	// +optional
	Prune bool `json:"prune,omitempty"`
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// +optional
	SyncStrategy *SyncStrategy `json:"syncStrategy,omitempty"`
	// Resources limits the sync to these resources.
	// +optional
	Resources []SyncOperationResource `json:"resources,omitempty"`
	// +optional
	Source *ApplicationSource `json:"source,omitempty"`
	// Manifests, when set, are synced instead of rendering the source.
	// +optional
	Manifests []string `json:"manifests,omitempty"`
	// +optional
	SyncOptions []string `json:"syncOptions,omitempty"`
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// +optional
	Revisions []string `json:"revisions,omitempty"`
	// +optional
	AutoHealAttemptsCount int64 `json:"autoHealAttemptsCount,omitempty"`
}

// SyncStrategy chooses between a plain apply and a sync with hooks.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncStrategy struct {
	// +optional
	Apply *SyncStrategyApply `json:"apply,omitempty"`
	// +optional
	Hook *SyncStrategyHook `json:"hook,omitempty"`
}

// SyncStrategyApply applies manifests without running hooks.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncStrategyApply struct {
	// Force deletes and re-creates resources that cannot be patched.
	// +optional
	Force bool `json:"force,omitempty"`
}

// SyncStrategyHook applies manifests and runs hooks.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncStrategyHook struct {
	SyncStrategyApply `json:",inline"`
}

// SyncOperationResource names one resource of a partial sync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncOperationResource struct {
	// +optional
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ApplicationStatus is what the controller observed.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationStatus struct {
	// +optional
	Resources []ResourceStatus `json:"resources,omitempty"`
	// +optional
	Sync SyncStatus `json:"sync,omitempty"`
	// +optional
	Health HealthStatus `json:"health,omitempty"`
	// +optional
	History []RevisionHistory `json:"history,omitempty"`
	// +optional
	Conditions []ApplicationCondition `json:"conditions,omitempty"`
	// ReconciledAt is when the application state was last compared with git.
	// +optional
	ReconciledAt *metav1.Time `json:"reconciledAt,omitempty"`
	// +optional
	OperationState *OperationState `json:"operationState,omitempty"`
	// ObservedAt is kept for compatibility; use ReconciledAt.
	// +optional
	ObservedAt *metav1.Time `json:"observedAt,omitempty"`
	// +optional
	SourceType ApplicationSourceType `json:"sourceType,omitempty"`
	// +optional
	Summary ApplicationSummary `json:"summary,omitempty"`
	// +optional
	ResourceHealthSource string `json:"resourceHealthSource,omitempty"`
	// +optional
	SourceTypes []ApplicationSourceType `json:"sourceTypes,omitempty"`
	// +optional
	ControllerNamespace string `json:"controllerNamespace,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	SourceHydrator *runtime.RawExtension `json:"sourceHydrator,omitempty"`

	// unreadable names the fields that UnmarshalJSON left out, and why.
	unreadable       []string
	unreadableReason string
}

// ApplicationSourceType is the kind of renderer a source used.
type ApplicationSourceType string

// Source types, as Argo CD names them.
const (
	ApplicationSourceTypeHelm      ApplicationSourceType = "Helm"
	ApplicationSourceTypeKustomize ApplicationSourceType = "Kustomize"
	ApplicationSourceTypeDirectory ApplicationSourceType = "Directory"
	ApplicationSourceTypePlugin    ApplicationSourceType = "Plugin"
)

// ApplicationSummary holds facts gathered from the live resources.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSummary struct {
	// +optional
	ExternalURLs []string `json:"externalURLs,omitempty"`
	// +optional
	Images []string `json:"images,omitempty"`
}

// SyncStatusCode is the result of comparing desired and live state.
type SyncStatusCode string

// Sync statuses.
const (
	SyncStatusCodeUnknown   SyncStatusCode = "Unknown"
	SyncStatusCodeSynced    SyncStatusCode = "Synced"
	SyncStatusCodeOutOfSync SyncStatusCode = "OutOfSync"
)

// HealthStatusCode is the health of a resource or an Application.
type HealthStatusCode string

// Health statuses.
const (
	HealthStatusUnknown     HealthStatusCode = "Unknown"
	HealthStatusProgressing HealthStatusCode = "Progressing"
	HealthStatusHealthy     HealthStatusCode = "Healthy"
	HealthStatusSuspended   HealthStatusCode = "Suspended"
	HealthStatusDegraded    HealthStatusCode = "Degraded"
	HealthStatusMissing     HealthStatusCode = "Missing"
)

// SyncStatus is the comparison result of an Application.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncStatus struct {
	Status SyncStatusCode `json:"status"`
	// ComparedTo is the spec the status was computed from.
	// +optional
	ComparedTo ComparedTo `json:"comparedTo,omitempty"`
	// Revision is the resolved commit SHA (or chart version) compared.
	// +optional
	Revision string `json:"revision,omitempty"`
	// +optional
	Revisions []string `json:"revisions,omitempty"`
}

// ComparedTo records the source and destination a comparison used.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ComparedTo struct {
	// +optional
	Source      ApplicationSource      `json:"source,omitempty"`
	Destination ApplicationDestination `json:"destination"`
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// +optional
	IgnoreDifferences []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
}

// HealthStatus is a health status with a human-readable reason.
//
// +kubebuilder:pruning:PreserveUnknownFields
type HealthStatus struct {
	// +optional
	Status HealthStatusCode `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ResourceStatus is the sync and health status of one managed resource.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ResourceStatus struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Status SyncStatusCode `json:"status,omitempty"`
	// +optional
	Health *HealthStatus `json:"health,omitempty"`
	// +optional
	Hook bool `json:"hook,omitempty"`
	// +optional
	RequiresPruning bool `json:"requiresPruning,omitempty"`
	// +optional
	SyncWave int64 `json:"syncWave,omitempty"`
	// +optional
	RequiresDeletionConfirmation bool `json:"requiresDeletionConfirmation,omitempty"`
}

// RevisionHistory records one deployment of an Application.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RevisionHistory struct {
	// +optional
	Revision   string      `json:"revision,omitempty"`
	DeployedAt metav1.Time `json:"deployedAt"`
	ID         int64       `json:"id"`
	// +optional
	Source ApplicationSource `json:"source,omitempty"`
	// +optional
	DeployStartedAt *metav1.Time `json:"deployStartedAt,omitempty"`
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// +optional
	Revisions []string `json:"revisions,omitempty"`
	// +optional
	InitiatedBy OperationInitiator `json:"initiatedBy,omitempty"`
}

// ApplicationConditionType names a condition of an Application.
type ApplicationConditionType string

// Application condition types. UnsupportedField reports a field Skiff accepts
// and keeps but does not act on yet.
const (
	ApplicationConditionComparisonError         ApplicationConditionType = "ComparisonError"
	ApplicationConditionInvalidSpecError        ApplicationConditionType = "InvalidSpecError"
	ApplicationConditionSyncError               ApplicationConditionType = "SyncError"
	ApplicationConditionOrphanedResourceWarning ApplicationConditionType = "OrphanedResourceWarning"
	ApplicationConditionSharedResourceWarning   ApplicationConditionType = "SharedResourceWarning"
	ApplicationConditionRepeatedResourceWarning ApplicationConditionType = "RepeatedResourceWarning"
	ApplicationConditionExcludedResourceWarning ApplicationConditionType = "ExcludedResourceWarning"
	ApplicationConditionUnsupportedField        ApplicationConditionType = "UnsupportedField"
	// ApplicationConditionDeletionError says why a deleted app stays: a
	// deletion waiting for its confirmation, a PostDelete hook that failed.
	ApplicationConditionDeletionError ApplicationConditionType = "DeletionError"
)

// ApplicationCondition is a problem or warning about an Application.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationCondition struct {
	Type    ApplicationConditionType `json:"type"`
	Message string                   `json:"message"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// OperationPhase is the state of an operation.
type OperationPhase string

// Operation phases.
const (
	OperationRunning     OperationPhase = "Running"
	OperationTerminating OperationPhase = "Terminating"
	OperationFailed      OperationPhase = "Failed"
	OperationError       OperationPhase = "Error"
	OperationSucceeded   OperationPhase = "Succeeded"
)

// OperationState is the progress and result of the current or last operation.
//
// +kubebuilder:pruning:PreserveUnknownFields
type OperationState struct {
	Operation Operation      `json:"operation"`
	Phase     OperationPhase `json:"phase"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	SyncResult *SyncOperationResult `json:"syncResult,omitempty"`
	StartedAt  metav1.Time          `json:"startedAt"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// +optional
	RetryCount int64 `json:"retryCount,omitempty"`
}

// SyncOperationResult is the outcome of a sync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncOperationResult struct {
	// +optional
	Resources []ResourceResult `json:"resources,omitempty"`
	Revision  string           `json:"revision"`
	// +optional
	Source ApplicationSource `json:"source,omitempty"`
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// +optional
	Revisions []string `json:"revisions,omitempty"`
	// +optional
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// ResultCode is the outcome of syncing one resource.
type ResultCode string

// Resource sync results.
const (
	ResultCodeSynced       ResultCode = "Synced"
	ResultCodeSyncFailed   ResultCode = "SyncFailed"
	ResultCodePruned       ResultCode = "Pruned"
	ResultCodePruneSkipped ResultCode = "PruneSkipped"
)

// ResourceResult is the outcome of syncing one resource or hook.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ResourceResult struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// +optional
	Status ResultCode `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// HookType is PreSync, Sync, PostSync, SyncFail, PostDelete or Skip for hooks.
	// +optional
	HookType string `json:"hookType,omitempty"`
	// +optional
	HookPhase OperationPhase `json:"hookPhase,omitempty"`
	// SyncPhase is PreSync, Sync or PostSync.
	// +optional
	SyncPhase string `json:"syncPhase,omitempty"`
	// +optional
	Images []string `json:"images,omitempty"`
}

func init() {
	register(&Application{}, &ApplicationList{})
}
