package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AppProject groups Applications and restricts what they may deploy, where
// from and where to, and who may act on them.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=appprojects,shortName=appproj;appprojs
type AppProject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	Spec AppProjectSpec `json:"spec"`
	// +optional
	Status AppProjectStatus `json:"status,omitempty"`
}

// AppProjectList is a list of AppProjects.
//
// +kubebuilder:object:root=true
type AppProjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []AppProject `json:"items"`
}

// AppProjectSpec lists what the project's Applications may use.
//
// +kubebuilder:pruning:PreserveUnknownFields
type AppProjectSpec struct {
	// SourceRepos are allowed repository URLs (globs; "*" allows all).
	// +optional
	SourceRepos []string `json:"sourceRepos,omitempty"`
	// Destinations are allowed clusters and namespaces (globs).
	// +optional
	Destinations []ApplicationDestination `json:"destinations,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	Roles []ProjectRole `json:"roles,omitempty"`
	// +optional
	ClusterResourceWhitelist []metav1.GroupKind `json:"clusterResourceWhitelist,omitempty"`
	// +optional
	NamespaceResourceBlacklist []metav1.GroupKind `json:"namespaceResourceBlacklist,omitempty"`
	// +optional
	OrphanedResources *OrphanedResourcesMonitorSettings `json:"orphanedResources,omitempty"`
	// +optional
	SyncWindows []SyncWindow `json:"syncWindows,omitempty"`
	// +optional
	NamespaceResourceWhitelist []metav1.GroupKind `json:"namespaceResourceWhitelist,omitempty"`
	// +optional
	SignatureKeys []SignatureKey `json:"signatureKeys,omitempty"`
	// +optional
	ClusterResourceBlacklist []metav1.GroupKind `json:"clusterResourceBlacklist,omitempty"`
	// +optional
	SourceNamespaces []string `json:"sourceNamespaces,omitempty"`
	// +optional
	PermitOnlyProjectScopedClusters bool `json:"permitOnlyProjectScopedClusters,omitempty"`
	// +optional
	DestinationServiceAccounts []ApplicationDestinationServiceAccount `json:"destinationServiceAccounts,omitempty"`
}

// ProjectRole is a named set of policies for the project's Applications.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ProjectRole struct {
	Name string `json:"name"`
	// +optional
	Description string `json:"description,omitempty"`
	// Policies are Casbin policy lines in Argo CD's format.
	// +optional
	Policies []string `json:"policies,omitempty"`
	// +optional
	JWTTokens []JWTToken `json:"jwtTokens,omitempty"`
	// Groups are SSO groups bound to this role.
	// +optional
	Groups []string `json:"groups,omitempty"`
}

// JWTToken describes a token issued for a project role.
//
// +kubebuilder:pruning:PreserveUnknownFields
type JWTToken struct {
	IssuedAt int64 `json:"iat"`
	// +optional
	ExpiresAt int64 `json:"exp,omitempty"`
	// +optional
	ID string `json:"id,omitempty"`
}

// OrphanedResourcesMonitorSettings turns on reporting of resources in the
// destination namespace that no Application manages.
//
// +kubebuilder:pruning:PreserveUnknownFields
type OrphanedResourcesMonitorSettings struct {
	// +optional
	Warn *bool `json:"warn,omitempty"`
	// +optional
	Ignore []OrphanedResourceKey `json:"ignore,omitempty"`
}

// OrphanedResourceKey matches resources to leave out of orphan reporting.
//
// +kubebuilder:pruning:PreserveUnknownFields
type OrphanedResourceKey struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
}

// SyncWindow allows or denies syncs on a cron schedule.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SyncWindow struct {
	// Kind is "allow" or "deny".
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Schedule string `json:"schedule,omitempty"`
	// +optional
	Duration string `json:"duration,omitempty"`
	// +optional
	Applications []string `json:"applications,omitempty"`
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
	// +optional
	Clusters []string `json:"clusters,omitempty"`
	// +optional
	ManualSync bool `json:"manualSync,omitempty"`
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
	// +optional
	UseAndOperator bool `json:"andOperator,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
}

// SignatureKey is the ID of a GnuPG key that commits must be signed with.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SignatureKey struct {
	KeyID string `json:"keyID"`
}

// ApplicationDestinationServiceAccount is the service account to impersonate
// when syncing to a destination.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationDestinationServiceAccount struct {
	Server string `json:"server"`
	// +optional
	Namespace             string `json:"namespace,omitempty"`
	DefaultServiceAccount string `json:"defaultServiceAccount"`
}

// AppProjectStatus holds the tokens issued per role.
//
// +kubebuilder:pruning:PreserveUnknownFields
type AppProjectStatus struct {
	// +optional
	JWTTokensByRole map[string]JWTTokens `json:"jwtTokensByRole,omitempty"`
}

// JWTTokens is the list of tokens of one role.
//
// +kubebuilder:pruning:PreserveUnknownFields
type JWTTokens struct {
	// +optional
	Items []JWTToken `json:"items,omitempty"`
}

func init() {
	register(&AppProject{}, &AppProjectList{})
}
