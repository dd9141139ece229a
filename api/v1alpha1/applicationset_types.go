package v1alpha1

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ApplicationSet stamps out Applications from one template and the
// parameters its generators produce (Argo CD's ApplicationSet). Unlike an
// Application, its status is a subresource, as in Argo CD.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=applicationsets,shortName=appset;appsets
// +kubebuilder:subresource:status
type ApplicationSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec ApplicationSetSpec `json:"spec"`
	// +optional
	Status ApplicationSetStatus `json:"status,omitempty"`
}

// ApplicationSetList is a list of ApplicationSets.
//
// +kubebuilder:object:root=true
type ApplicationSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []ApplicationSet `json:"items"`
}

// ApplicationSetSpec is the generators, the template and the policies.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetSpec struct {
	// GoTemplate renders with Go's text/template and sprig instead of
	// `{{param}}` substitution.
	// +optional
	GoTemplate bool `json:"goTemplate,omitempty"`
	// Generators produce the parameter sets; one Application per set.
	Generators []ApplicationSetGenerator `json:"generators"`
	// Template is the Application each parameter set is rendered into.
	Template ApplicationSetTemplate `json:"template"`
	// +optional
	SyncPolicy *ApplicationSetSyncPolicy `json:"syncPolicy,omitempty"`
	// +optional
	Strategy *ApplicationSetStrategy `json:"strategy,omitempty"`
	// PreservedFields are annotations and labels of generated Applications
	// that the controller leaves as others set them.
	// +optional
	PreservedFields *ApplicationPreservedFields `json:"preservedFields,omitempty"`
	// GoTemplateOptions are text/template options, such as "missingkey=error".
	// +optional
	GoTemplateOptions []string `json:"goTemplateOptions,omitempty"`
	// ApplyNestedSelectors is ignored, as since Argo CD 3.0: the selectors
	// of generators nested in a matrix or merge always apply.
	// +optional
	ApplyNestedSelectors bool `json:"applyNestedSelectors,omitempty"`
	// IgnoreApplicationDifferences are fields of generated Applications the
	// controller does not reset to the template's.
	// +optional
	IgnoreApplicationDifferences []ApplicationSetResourceIgnoreDifferences `json:"ignoreApplicationDifferences,omitempty"`
	// TemplatePatch is a YAML or JSON patch, itself a template, merged into
	// each rendered Application.
	// +optional
	TemplatePatch *string `json:"templatePatch,omitempty"`
}

// ApplicationPreservedFields names annotations and labels to keep.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationPreservedFields struct {
	// +optional
	Annotations []string `json:"annotations,omitempty"`
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// ApplicationSetResourceIgnoreDifferences names fields of the generated
// Applications (all, or the one named) to leave alone.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetResourceIgnoreDifferences struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// +optional
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
}

// ApplicationsSyncPolicy says what the controller may do to generated
// Applications: create-only, create-update, create-delete or sync (the
// default: create, update and delete).
type ApplicationsSyncPolicy string

// Applications sync policies, as Argo CD names them.
const (
	ApplicationsSyncPolicyCreateOnly   ApplicationsSyncPolicy = "create-only"
	ApplicationsSyncPolicyCreateUpdate ApplicationsSyncPolicy = "create-update"
	ApplicationsSyncPolicyCreateDelete ApplicationsSyncPolicy = "create-delete"
	ApplicationsSyncPolicySync         ApplicationsSyncPolicy = "sync"
)

// AllowUpdate says whether the policy lets the controller update Applications.
func (p ApplicationsSyncPolicy) AllowUpdate() bool {
	return p == ApplicationsSyncPolicyCreateUpdate || p == ApplicationsSyncPolicySync
}

// AllowDelete says whether the policy lets the controller delete Applications.
func (p ApplicationsSyncPolicy) AllowDelete() bool {
	return p == ApplicationsSyncPolicyCreateDelete || p == ApplicationsSyncPolicySync
}

// ApplicationSetSyncPolicy says how generated Applications follow the set.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetSyncPolicy struct {
	// PreserveResourcesOnDeletion keeps the Applications' resources when
	// the set or an Application of it is deleted.
	// +optional
	PreserveResourcesOnDeletion bool `json:"preserveResourcesOnDeletion,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=create-only;create-update;create-delete;sync
	ApplicationsSync *ApplicationsSyncPolicy `json:"applicationsSync,omitempty"`
}

// ApplicationSetStrategy orders the syncs of generated Applications.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetStrategy struct {
	// Type is "AllAtOnce" (the default) or "RollingSync".
	// +optional
	Type string `json:"type,omitempty"`
	// +optional
	RollingSync *ApplicationSetRolloutStrategy `json:"rollingSync,omitempty"`
	// DeletionOrder is "AllAtOnce" or "Reverse" (of the steps).
	// +optional
	DeletionOrder string `json:"deletionOrder,omitempty"`
}

// ApplicationSetRolloutStrategy is the steps of a RollingSync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetRolloutStrategy struct {
	// +optional
	Steps []ApplicationSetRolloutStep `json:"steps,omitempty"`
}

// ApplicationSetRolloutStep selects Applications by their labels; at most
// MaxUpdate of them (a number or a percentage) sync at once.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetRolloutStep struct {
	// +optional
	MatchExpressions []ApplicationMatchExpression `json:"matchExpressions,omitempty"`
	// +optional
	MaxUpdate *intstr.IntOrString `json:"maxUpdate,omitempty"`
}

// ApplicationMatchExpression is a label requirement (In, NotIn).
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationMatchExpression struct {
	// +optional
	Key string `json:"key,omitempty"`
	// +optional
	Operator string `json:"operator,omitempty"`
	// +optional
	Values []string `json:"values,omitempty"`
}

// ApplicationSetTemplate is an Application's metadata and spec. The
// per-generator overrides are schemaless in the CRD: typed, their two dozen
// copies of the Application spec made a 1 MB CRD. Rendering checks them.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetTemplate struct {
	Metadata ApplicationSetTemplateMeta `json:"metadata"`
	Spec     ApplicationSpec            `json:"spec"`
}

// ApplicationSetTemplateMeta is the part of an Application's metadata a
// template may set.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetTemplateMeta struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	Finalizers []string `json:"finalizers,omitempty"`
}

// ApplicationSetGenerator is one top-level generator: exactly one of its
// kinds is set, and Selector filters what it produces.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetGenerator struct {
	// +optional
	List *ListGenerator `json:"list,omitempty"`
	// +optional
	Clusters *ClusterGenerator `json:"clusters,omitempty"`
	// +optional
	Git *GitGenerator `json:"git,omitempty"`
	// +optional
	SCMProvider *SCMProviderGenerator `json:"scmProvider,omitempty"`
	// +optional
	ClusterDecisionResource *DuckTypeGenerator `json:"clusterDecisionResource,omitempty"`
	// +optional
	PullRequest *PullRequestGenerator `json:"pullRequest,omitempty"`
	// +optional
	Matrix *MatrixGenerator `json:"matrix,omitempty"`
	// +optional
	Merge *MergeGenerator `json:"merge,omitempty"`
	// Selector keeps the parameter sets whose (flattened) values match.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// +optional
	Plugin *PluginGenerator `json:"plugin,omitempty"`
}

// ApplicationSetNestedGenerator is a generator inside a matrix or merge. A
// matrix or merge at this level is kept as raw JSON (a CRD schema cannot
// recurse) and read with ToNestedMatrixGenerator or ToNestedMergeGenerator.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetNestedGenerator struct {
	// +optional
	List *ListGenerator `json:"list,omitempty"`
	// +optional
	Clusters *ClusterGenerator `json:"clusters,omitempty"`
	// +optional
	Git *GitGenerator `json:"git,omitempty"`
	// +optional
	SCMProvider *SCMProviderGenerator `json:"scmProvider,omitempty"`
	// +optional
	ClusterDecisionResource *DuckTypeGenerator `json:"clusterDecisionResource,omitempty"`
	// +optional
	PullRequest *PullRequestGenerator `json:"pullRequest,omitempty"`
	// +optional
	Matrix *apiextensionsv1.JSON `json:"matrix,omitempty"`
	// +optional
	Merge *apiextensionsv1.JSON `json:"merge,omitempty"`
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// +optional
	Plugin *PluginGenerator `json:"plugin,omitempty"`
}

// ApplicationSetTerminalGenerator is a generator two levels down (in a
// matrix or merge inside a matrix or merge): it cannot combine others.
type ApplicationSetTerminalGenerator struct {
	List                    *ListGenerator        `json:"list,omitempty"`
	Clusters                *ClusterGenerator     `json:"clusters,omitempty"`
	Git                     *GitGenerator         `json:"git,omitempty"`
	SCMProvider             *SCMProviderGenerator `json:"scmProvider,omitempty"`
	ClusterDecisionResource *DuckTypeGenerator    `json:"clusterDecisionResource,omitempty"`
	PullRequest             *PullRequestGenerator `json:"pullRequest,omitempty"`
	Plugin                  *PluginGenerator      `json:"plugin,omitempty"`
	Selector                *metav1.LabelSelector `json:"selector,omitempty"`
	// Matrix and Merge are only read to report that they nest too deep.
	Matrix *apiextensionsv1.JSON `json:"matrix,omitempty"`
	Merge  *apiextensionsv1.JSON `json:"merge,omitempty"`
}

// NestedMatrixGenerator is a matrix inside a matrix or merge.
//
// +kubebuilder:object:generate=false
type NestedMatrixGenerator struct {
	Generators []ApplicationSetTerminalGenerator `json:"generators"`
}

// NestedMergeGenerator is a merge inside a matrix or merge.
//
// +kubebuilder:object:generate=false
type NestedMergeGenerator struct {
	Generators []ApplicationSetTerminalGenerator `json:"generators"`
	MergeKeys  []string                          `json:"mergeKeys"`
}

// ToNestedMatrixGenerator reads a nested matrix; nil when j is nil.
func ToNestedMatrixGenerator(j *apiextensionsv1.JSON) (*NestedMatrixGenerator, error) {
	if j == nil {
		return nil, nil
	}
	var g NestedMatrixGenerator
	if err := json.Unmarshal(j.Raw, &g); err != nil {
		return nil, fmt.Errorf("reading nested matrix generator: %w", err)
	}
	return &g, nil
}

// ToNestedMergeGenerator reads a nested merge; nil when j is nil.
func ToNestedMergeGenerator(j *apiextensionsv1.JSON) (*NestedMergeGenerator, error) {
	if j == nil {
		return nil, nil
	}
	var g NestedMergeGenerator
	if err := json.Unmarshal(j.Raw, &g); err != nil {
		return nil, fmt.Errorf("reading nested merge generator: %w", err)
	}
	return &g, nil
}

// ToNested turns a terminal generator into a nested one.
func (g ApplicationSetTerminalGenerator) ToNested() ApplicationSetNestedGenerator {
	return ApplicationSetNestedGenerator{
		List: g.List, Clusters: g.Clusters, Git: g.Git, SCMProvider: g.SCMProvider,
		ClusterDecisionResource: g.ClusterDecisionResource, PullRequest: g.PullRequest,
		Plugin: g.Plugin, Selector: g.Selector, Matrix: g.Matrix, Merge: g.Merge,
	}
}

// ListGenerator gives its parameter sets literally.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ListGenerator struct {
	// +optional
	Elements []apiextensionsv1.JSON `json:"elements,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// ElementsYaml is a YAML list of parameter sets, appended to Elements.
	// +optional
	ElementsYaml string `json:"elementsYaml,omitempty"`
}

// MatrixGenerator gives the cartesian product of two generators' sets; the
// second may use the parameters of the first.
//
// +kubebuilder:pruning:PreserveUnknownFields
type MatrixGenerator struct {
	Generators []ApplicationSetNestedGenerator `json:"generators"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// MergeGenerator merges the sets of later generators into those of the
// first whose MergeKeys values are equal.
//
// +kubebuilder:pruning:PreserveUnknownFields
type MergeGenerator struct {
	Generators []ApplicationSetNestedGenerator `json:"generators"`
	MergeKeys  []string                        `json:"mergeKeys"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// ClusterGenerator gives one set per cluster whose Secret's labels match
// Selector.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ClusterGenerator struct {
	// +optional
	Selector metav1.LabelSelector `json:"selector,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// Values are added to each set as values.<key>; they may use the
	// cluster's parameters.
	// +optional
	Values map[string]string `json:"values,omitempty"`
	// FlatList gives one set with all clusters under "clusters".
	// +optional
	FlatList bool `json:"flatList,omitempty"`
}

// DuckTypeGenerator reads clusters from the status of a resource (Cluster
// Decision Resource).
//
// +kubebuilder:pruning:PreserveUnknownFields
type DuckTypeGenerator struct {
	ConfigMapRef string `json:"configMapRef"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// GitGenerator gives one set per matching directory or per entry of the
// matching files of a git repository.
//
// +kubebuilder:pruning:PreserveUnknownFields
type GitGenerator struct {
	RepoURL string `json:"repoURL"`
	// +optional
	Directories []GitDirectoryGeneratorItem `json:"directories,omitempty"`
	// +optional
	Files []GitFileGeneratorItem `json:"files,omitempty"`
	// +optional
	Revision string `json:"revision,omitempty"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// PathParamPrefix prefixes the path parameters (prefix.path...).
	// +optional
	PathParamPrefix string `json:"pathParamPrefix,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// GitDirectoryGeneratorItem is a directory glob, included or excluded.
//
// +kubebuilder:pruning:PreserveUnknownFields
type GitDirectoryGeneratorItem struct {
	Path string `json:"path"`
	// +optional
	Exclude bool `json:"exclude,omitempty"`
}

// GitFileGeneratorItem is a file glob.
//
// +kubebuilder:pruning:PreserveUnknownFields
type GitFileGeneratorItem struct {
	Path string `json:"path"`
	// +optional
	Exclude bool `json:"exclude,omitempty"`
}

// SecretRef is a key of a Secret in the ApplicationSet's namespace.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SecretRef struct {
	SecretName string `json:"secretName"`
	Key        string `json:"key"`
}

// SCMProviderGenerator gives one set per repository (or branch) an SCM
// API lists. GitHub and GitLab are modelled; the other providers are kept
// as written.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SCMProviderGenerator struct {
	// +optional
	Github *SCMProviderGeneratorGithub `json:"github,omitempty"`
	// +optional
	Gitlab *SCMProviderGeneratorGitlab `json:"gitlab,omitempty"`
	// The providers Skiff does not run, kept as written so that the error
	// can name them.
	// +optional
	Bitbucket *apiextensionsv1.JSON `json:"bitbucket,omitempty"`
	// +optional
	BitbucketServer *apiextensionsv1.JSON `json:"bitbucketServer,omitempty"`
	// +optional
	Gitea *apiextensionsv1.JSON `json:"gitea,omitempty"`
	// +optional
	AzureDevOps *apiextensionsv1.JSON `json:"azureDevOps,omitempty"`
	// +optional
	AWSCodeCommit *apiextensionsv1.JSON `json:"awsCodeCommit,omitempty"`
	// +optional
	Filters []SCMProviderGeneratorFilter `json:"filters,omitempty"`
	// +optional
	CloneProtocol string `json:"cloneProtocol,omitempty"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// SCMProviderGeneratorGithub lists the repositories of a GitHub organization.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SCMProviderGeneratorGithub struct {
	Organization string `json:"organization"`
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	AppSecretName string `json:"appSecretName,omitempty"`
	// +optional
	AllBranches bool `json:"allBranches,omitempty"`
}

// SCMProviderGeneratorGitlab lists the projects of a GitLab group.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SCMProviderGeneratorGitlab struct {
	Group string `json:"group"`
	// +optional
	IncludeSubgroups bool `json:"includeSubgroups,omitempty"`
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	AllBranches bool `json:"allBranches,omitempty"`
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// +optional
	IncludeSharedProjects *bool `json:"includeSharedProjects,omitempty"`
	// +optional
	Topic string `json:"topic,omitempty"`
}

// SCMProviderGeneratorFilter keeps repositories that pass all its tests.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SCMProviderGeneratorFilter struct {
	// +optional
	RepositoryMatch *string `json:"repositoryMatch,omitempty"`
	// +optional
	PathsExist []string `json:"pathsExist,omitempty"`
	// +optional
	PathsDoNotExist []string `json:"pathsDoNotExist,omitempty"`
	// +optional
	LabelMatch *string `json:"labelMatch,omitempty"`
	// +optional
	BranchMatch *string `json:"branchMatch,omitempty"`
}

// PullRequestGenerator gives one set per open pull request. GitHub and
// GitLab are modelled; the other providers' fields are kept as written.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PullRequestGenerator struct {
	// +optional
	Github *PullRequestGeneratorGithub `json:"github,omitempty"`
	// +optional
	GitLab *PullRequestGeneratorGitLab `json:"gitlab,omitempty"`
	// The providers Skiff does not run, kept as written so that the error
	// can name them.
	// +optional
	Bitbucket *apiextensionsv1.JSON `json:"bitbucket,omitempty"`
	// +optional
	BitbucketServer *apiextensionsv1.JSON `json:"bitbucketServer,omitempty"`
	// +optional
	Gitea *apiextensionsv1.JSON `json:"gitea,omitempty"`
	// +optional
	AzureDevOps *apiextensionsv1.JSON `json:"azuredevops,omitempty"`
	// +optional
	Filters []PullRequestGeneratorFilter `json:"filters,omitempty"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// PullRequestGeneratorGithub lists the pull requests of a GitHub repository.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PullRequestGeneratorGithub struct {
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	AppSecretName string `json:"appSecretName,omitempty"`
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// PullRequestGeneratorGitLab lists the merge requests of a GitLab project.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PullRequestGeneratorGitLab struct {
	Project string `json:"project"`
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	Labels []string `json:"labels,omitempty"`
	// +optional
	PullRequestState string `json:"pullRequestState,omitempty"`
	// +optional
	Insecure bool `json:"insecure,omitempty"`
}

// PullRequestGeneratorFilter keeps pull requests whose branches match.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PullRequestGeneratorFilter struct {
	// +optional
	BranchMatch *string `json:"branchMatch,omitempty"`
	// +optional
	TargetBranchMatch *string `json:"targetBranchMatch,omitempty"`
}

// PluginGenerator asks an HTTP plugin for the sets; accepted and kept, not
// implemented.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PluginGenerator struct {
	ConfigMapRef PluginConfigMapRef `json:"configMapRef"`
	// +optional
	Input PluginInput `json:"input,omitempty"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// PluginConfigMapRef names the plugin's ConfigMap.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PluginConfigMapRef struct {
	Name string `json:"name"`
}

// PluginInput is what is sent to the plugin.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PluginInput struct {
	// +optional
	Parameters map[string]apiextensionsv1.JSON `json:"parameters,omitempty"`
}

// ApplicationSetStatus is what the controller observed and did.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetStatus struct {
	// +optional
	Conditions []ApplicationSetCondition `json:"conditions,omitempty"`
	// ApplicationStatus is the progress of each Application under a
	// RollingSync.
	// +optional
	ApplicationStatus []ApplicationSetApplicationStatus `json:"applicationStatus,omitempty"`
	// Resources are the generated Applications, with their sync and health.
	// +optional
	Resources []ResourceStatus `json:"resources,omitempty"`
	// +optional
	ResourcesCount int64 `json:"resourcesCount,omitempty"`
}

// ApplicationSetConditionType is the kind of a condition.
type ApplicationSetConditionType string

// Condition types, as Argo CD names them.
const (
	ApplicationSetConditionErrorOccurred       ApplicationSetConditionType = "ErrorOccurred"
	ApplicationSetConditionParametersGenerated ApplicationSetConditionType = "ParametersGenerated"
	ApplicationSetConditionResourcesUpToDate   ApplicationSetConditionType = "ResourcesUpToDate"
	ApplicationSetConditionRolloutProgressing  ApplicationSetConditionType = "RolloutProgressing"
)

// ApplicationSetConditionStatus is True, False or Unknown.
type ApplicationSetConditionStatus string

// Condition statuses.
const (
	ApplicationSetConditionStatusTrue    ApplicationSetConditionStatus = "True"
	ApplicationSetConditionStatusFalse   ApplicationSetConditionStatus = "False"
	ApplicationSetConditionStatusUnknown ApplicationSetConditionStatus = "Unknown"
)

// ApplicationSetCondition is an error, warning or fact about the set.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetCondition struct {
	Type ApplicationSetConditionType `json:"type"`
	// +optional
	Message string `json:"message"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Status ApplicationSetConditionStatus `json:"status"`
	// Reason is one CamelCase word, such as ErrorOccurred.
	// +optional
	Reason string `json:"reason"`
}

// ApplicationSetApplicationStatus is the progress of one Application in a
// RollingSync.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetApplicationStatus struct {
	Application string `json:"application"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Message string `json:"message"`
	// Status is Waiting, Pending, Progressing or Healthy.
	// +optional
	Status string `json:"status"`
	// Step is the 1-based step the Application belongs to.
	// +optional
	Step string `json:"step"`
	// +optional
	TargetRevisions []string `json:"targetRevisions,omitempty"`
}

func init() {
	register(&ApplicationSet{}, &ApplicationSetList{})
}
