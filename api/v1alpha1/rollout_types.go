package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Rollout replaces a Deployment with blue-green or canary delivery, as Argo
// Rollouts defines it. The scale subresource lets an HPA or `kubectl scale`
// drive it like a Deployment.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=rollouts,shortName=ro
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.HPAReplicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`,description="Number of desired pods"
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.replicas`,description="Total number of non-terminated pods targeted by this rollout"
// +kubebuilder:printcolumn:name="Up-to-date",type=integer,JSONPath=`.status.updatedReplicas`,description="Total number of non-terminated pods targeted by this rollout that have the desired template spec"
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`,description="Total number of available pods (ready for at least minReadySeconds) targeted by this rollout"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`,description="Time since resource was created"
type Rollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RolloutSpec `json:"spec"`
	// +optional
	Status RolloutStatus `json:"status,omitempty"`
}

// RolloutList is a list of Rollouts.
//
// +kubebuilder:object:root=true
type RolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []Rollout `json:"items"`
}

// RolloutSpec is the desired state of a Rollout.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RolloutSpec struct {
	// Replicas is the number of desired pods; default 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector selects the pods of this Rollout; it must match the template's labels.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Template is the pod template; mutually exclusive with WorkloadRef.
	// +optional
	Template corev1.PodTemplateSpec `json:"template,omitzero"`
	// WorkloadRef takes the pod template from an existing Deployment.
	// +optional
	WorkloadRef *ObjectRef `json:"workloadRef,omitempty"`
	// MinReadySeconds is how long a new pod must be ready before it counts as available.
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`
	// Strategy is blueGreen or canary.
	// +optional
	Strategy RolloutStrategy `json:"strategy"`
	// RevisionHistoryLimit is how many old ReplicaSets to keep; default 10.
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
	// Paused stops the rollout where it is.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// ProgressDeadlineSeconds is how long a rollout may make no progress before
	// it is Degraded; default 600.
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
	// ProgressDeadlineAbort aborts the rollout when the deadline passes.
	// +optional
	ProgressDeadlineAbort bool `json:"progressDeadlineAbort,omitempty"`
	// RestartAt asks for all pods created before this time to be restarted.
	// +optional
	RestartAt *metav1.Time `json:"restartAt,omitempty"`
	// Analysis bounds the history of AnalysisRuns.
	// +optional
	Analysis *AnalysisRunStrategy `json:"analysis,omitempty"`
	// RollbackWindow lets a rollback to one of the last revisions skip the steps.
	// +optional
	RollbackWindow *RollbackWindowSpec `json:"rollbackWindow,omitempty"`
}

// ObjectRef points at the Deployment whose pod template a Rollout uses.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ObjectRef struct {
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// ScaleDown says what happens to the Deployment: never, onsuccess or progressively.
	// +optional
	ScaleDown string `json:"scaleDown,omitempty"`
}

// AnalysisRunStrategy bounds how many finished AnalysisRuns are kept.
//
// +kubebuilder:pruning:PreserveUnknownFields
type AnalysisRunStrategy struct {
	// SuccessfulRunHistoryLimit defaults to 5.
	// +optional
	SuccessfulRunHistoryLimit *int32 `json:"successfulRunHistoryLimit,omitempty"`
	// UnsuccessfulRunHistoryLimit defaults to 5.
	// +optional
	UnsuccessfulRunHistoryLimit *int32 `json:"unsuccessfulRunHistoryLimit,omitempty"`
}

// RollbackWindowSpec is how many recent revisions roll back without steps.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RollbackWindowSpec struct {
	// +optional
	Revisions int32 `json:"revisions,omitempty"`
}

// RolloutStrategy holds exactly one of BlueGreen or Canary.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RolloutStrategy struct {
	// +optional
	BlueGreen *BlueGreenStrategy `json:"blueGreen,omitempty"`
	// +optional
	Canary *CanaryStrategy `json:"canary,omitempty"`
}

// BlueGreenStrategy runs the new version beside the old one and switches the
// active Service to it at once.
//
// +kubebuilder:pruning:PreserveUnknownFields
type BlueGreenStrategy struct {
	// ActiveService receives production traffic; required.
	ActiveService string `json:"activeService"`
	// PreviewService reaches the new version before promotion.
	// +optional
	PreviewService string `json:"previewService,omitempty"`
	// PreviewReplicaCount is how many new pods run before promotion.
	// +optional
	PreviewReplicaCount *int32 `json:"previewReplicaCount,omitempty"`
	// AutoPromotionEnabled promotes as soon as the new version is ready; default true.
	// +optional
	AutoPromotionEnabled *bool `json:"autoPromotionEnabled,omitempty"`
	// AutoPromotionSeconds promotes this long after the new version is ready.
	// +optional
	AutoPromotionSeconds int32 `json:"autoPromotionSeconds,omitempty"`
	// MaxUnavailable bounds unavailable pods while scaling.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// ScaleDownDelaySeconds keeps the old version up after the switch; default 30.
	// +optional
	ScaleDownDelaySeconds *int32 `json:"scaleDownDelaySeconds,omitempty"`
	// ScaleDownDelayRevisionLimit bounds how many old versions wait to scale down.
	// +optional
	ScaleDownDelayRevisionLimit *int32 `json:"scaleDownDelayRevisionLimit,omitempty"`
	// PrePromotionAnalysis must pass before the active Service switches.
	// +optional
	PrePromotionAnalysis *RolloutAnalysis `json:"prePromotionAnalysis,omitempty"`
	// AntiAffinity spreads new pods away from old ones.
	// +optional
	AntiAffinity *AntiAffinity `json:"antiAffinity,omitempty"`
	// PostPromotionAnalysis runs after the switch; failure switches back.
	// +optional
	PostPromotionAnalysis *RolloutAnalysis `json:"postPromotionAnalysis,omitempty"`
	// PreviewMetadata is added to preview pods.
	// +optional
	PreviewMetadata *PodTemplateMetadata `json:"previewMetadata,omitempty"`
	// ActiveMetadata is added to active pods.
	// +optional
	ActiveMetadata *PodTemplateMetadata `json:"activeMetadata,omitempty"`
	// AbortScaleDownDelaySeconds scales the aborted version down after this delay; default 30, 0 never.
	// +optional
	AbortScaleDownDelaySeconds *int32 `json:"abortScaleDownDelaySeconds,omitempty"`
}

// CanaryStrategy shifts traffic to the new version step by step.
//
// +kubebuilder:pruning:PreserveUnknownFields
type CanaryStrategy struct {
	// CanaryService selects only canary pods.
	// +optional
	CanaryService string `json:"canaryService,omitempty"`
	// StableService selects only stable pods.
	// +optional
	StableService string `json:"stableService,omitempty"`
	// Steps run in order; without steps the update is one setWeight 100.
	// +optional
	Steps []CanaryStep `json:"steps,omitempty"`
	// TrafficRouting splits traffic by weight instead of by replica count.
	// +optional
	TrafficRouting *RolloutTrafficRouting `json:"trafficRouting,omitempty"`
	// MaxUnavailable defaults to 25%.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// MaxSurge defaults to 25%.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
	// Analysis runs in the background during the whole update.
	// +optional
	Analysis *RolloutAnalysisBackground `json:"analysis,omitempty"`
	// +optional
	AntiAffinity *AntiAffinity `json:"antiAffinity,omitempty"`
	// CanaryMetadata is added to canary pods.
	// +optional
	CanaryMetadata *PodTemplateMetadata `json:"canaryMetadata,omitempty"`
	// StableMetadata is added to stable pods.
	// +optional
	StableMetadata *PodTemplateMetadata `json:"stableMetadata,omitempty"`
	// +optional
	ScaleDownDelaySeconds *int32 `json:"scaleDownDelaySeconds,omitempty"`
	// +optional
	ScaleDownDelayRevisionLimit *int32 `json:"scaleDownDelayRevisionLimit,omitempty"`
	// +optional
	AbortScaleDownDelaySeconds *int32 `json:"abortScaleDownDelaySeconds,omitempty"`
	// DynamicStableScale scales the stable side down as traffic leaves it.
	// +optional
	DynamicStableScale bool `json:"dynamicStableScale,omitempty"`
	// PingPong alternates two Services instead of canary/stable.
	// +optional
	PingPong *PingPongSpec `json:"pingPong,omitempty"`
	// MinPodsPerReplicaSet keeps at least this many pods on each side.
	// +optional
	MinPodsPerReplicaSet *int32 `json:"minPodsPerReplicaSet,omitempty"`
}

// PingPongSpec names the two Services of a ping-pong canary.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PingPongSpec struct {
	PingService string `json:"pingService"`
	PongService string `json:"pongService"`
}

// CanaryStep is one step of a canary update; exactly one field is set.
//
// +kubebuilder:pruning:PreserveUnknownFields
type CanaryStep struct {
	// SetWeight sends this percentage of traffic to the canary.
	// +optional
	SetWeight *int32 `json:"setWeight,omitempty"`
	// Pause waits for a duration, or until promoted when it has none.
	// +optional
	Pause *RolloutPause `json:"pause,omitempty"`
	// Analysis runs an AnalysisRun and waits for its verdict.
	// +optional
	Analysis *RolloutAnalysis `json:"analysis,omitempty"`
	// SetCanaryScale sets the canary's replica count apart from its weight.
	// +optional
	SetCanaryScale *SetCanaryScale `json:"setCanaryScale,omitempty"`
	// Experiment is accepted and kept but not implemented.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Experiment *runtime.RawExtension `json:"experiment,omitempty"`
	// SetHeaderRoute is accepted and kept but not implemented.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	SetHeaderRoute *runtime.RawExtension `json:"setHeaderRoute,omitempty"`
	// SetMirrorRoute is accepted and kept but not implemented.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	SetMirrorRoute *runtime.RawExtension `json:"setMirrorRoute,omitempty"`
	// Plugin is accepted and kept but not implemented.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Plugin *runtime.RawExtension `json:"plugin,omitempty"`
}

// RolloutPause is a pause step. An empty pause (`pause: {}`) waits until the
// rollout is promoted.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RolloutPause struct {
	// Duration is seconds (10) or a Go duration ("1h").
	// +optional
	Duration *intstr.IntOrString `json:"duration,omitempty"`
}

// SetCanaryScale sets the canary's size independently of its traffic weight.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SetCanaryScale struct {
	// +optional
	Weight *int32 `json:"weight,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	MatchTrafficWeight bool `json:"matchTrafficWeight,omitempty"`
}

// RolloutTrafficRouting names the router that splits traffic. Skiff routes
// through Gateway API HTTPRoutes (the `argoproj-labs/gatewayAPI` plugin
// configuration); other routers are kept and reported as unsupported.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RolloutTrafficRouting struct {
	// Plugins maps a traffic router plugin name to its configuration.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Plugins map[string]runtime.RawExtension `json:"plugins,omitempty"`
	// ManagedRoutes lists the routes the controller may add to the router.
	// +optional
	ManagedRoutes []MangedRoutes `json:"managedRoutes,omitempty"`
}

// MangedRoutes names one managed route (the spelling is Argo Rollouts').
//
// +kubebuilder:pruning:PreserveUnknownFields
type MangedRoutes struct {
	Name string `json:"name"`
}

// RolloutAnalysis selects the templates of an AnalysisRun and its arguments.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RolloutAnalysis struct {
	// +optional
	Templates []AnalysisTemplateRef `json:"templates,omitempty"`
	// +optional
	Args []AnalysisRunArgument `json:"args,omitempty"`
	// DryRun lists metrics whose failure does not count.
	// +optional
	DryRun []DryRun `json:"dryRun,omitempty"`
	// MeasurementRetention bounds the measurements kept per metric.
	// +optional
	MeasurementRetention []MeasurementRetention `json:"measurementRetention,omitempty"`
	// AnalysisRunMetadata is added to the AnalysisRuns created.
	// +optional
	AnalysisRunMetadata AnalysisRunMetadata `json:"analysisRunMetadata,omitempty"`
}

// RolloutAnalysisBackground is an analysis that runs during a canary update.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RolloutAnalysisBackground struct {
	RolloutAnalysis `json:",inline"`
	// StartingStep is the step index at which the analysis starts.
	// +optional
	StartingStep *int32 `json:"startingStep,omitempty"`
}

// AnalysisTemplateRef names an AnalysisTemplate or ClusterAnalysisTemplate.
//
// +kubebuilder:pruning:PreserveUnknownFields
type AnalysisTemplateRef struct {
	// +optional
	TemplateName string `json:"templateName,omitempty"`
	// ClusterScope selects a ClusterAnalysisTemplate.
	// +optional
	ClusterScope bool `json:"clusterScope,omitempty"`
}

// AnalysisRunArgument is an argument value passed from a Rollout to its
// AnalysisRun.
//
// +kubebuilder:pruning:PreserveUnknownFields
type AnalysisRunArgument struct {
	Name string `json:"name"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Value *AnyString `json:"value,omitempty"`
	// +optional
	ValueFrom *ArgumentValueFrom `json:"valueFrom,omitempty"`
}

// ArgumentValueFrom takes an argument from the Rollout itself.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ArgumentValueFrom struct {
	// PodTemplateHashValue is "Stable" or "Latest".
	// +optional
	PodTemplateHashValue *string `json:"podTemplateHashValue,omitempty"`
	// +optional
	FieldRef *FieldRef `json:"fieldRef,omitempty"`
}

// FieldRef is a path into the owning object, such as metadata.labels['app'].
//
// +kubebuilder:pruning:PreserveUnknownFields
type FieldRef struct {
	FieldPath string `json:"fieldPath"`
}

// DryRun names a metric (or "*" for all) whose result does not count.
//
// +kubebuilder:pruning:PreserveUnknownFields
type DryRun struct {
	MetricName string `json:"metricName"`
}

// MeasurementRetention keeps this many measurements of a metric.
//
// +kubebuilder:pruning:PreserveUnknownFields
type MeasurementRetention struct {
	MetricName string `json:"metricName"`
	Limit      int32  `json:"limit"`
}

// AnalysisRunMetadata is extra metadata for created AnalysisRuns.
//
// +kubebuilder:pruning:PreserveUnknownFields
type AnalysisRunMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PodTemplateMetadata is extra metadata for pods of one side of a rollout.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PodTemplateMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// AntiAffinity keeps new pods off the nodes of old pods.
//
// +kubebuilder:pruning:PreserveUnknownFields
type AntiAffinity struct {
	// +optional
	PreferredDuringSchedulingIgnoredDuringExecution *PreferredDuringSchedulingIgnoredDuringExecution `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution *RequiredDuringSchedulingIgnoredDuringExecution `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// PreferredDuringSchedulingIgnoredDuringExecution is a weighted soft anti-affinity.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PreferredDuringSchedulingIgnoredDuringExecution struct {
	Weight int32 `json:"weight"`
}

// RequiredDuringSchedulingIgnoredDuringExecution is a hard anti-affinity.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RequiredDuringSchedulingIgnoredDuringExecution struct{}

// RolloutPhase is the overall state of a Rollout.
type RolloutPhase string

// Rollout phases, as Argo Rollouts reports them.
const (
	RolloutPhaseHealthy     RolloutPhase = "Healthy"
	RolloutPhaseDegraded    RolloutPhase = "Degraded"
	RolloutPhaseProgressing RolloutPhase = "Progressing"
	RolloutPhasePaused      RolloutPhase = "Paused"
)

// PauseReason says why a rollout is paused.
type PauseReason string

// Pause reasons, as Argo Rollouts reports them.
const (
	PauseReasonInconclusiveAnalysis   PauseReason = "InconclusiveAnalysisRun"
	PauseReasonCanaryPauseStep        PauseReason = "CanaryPauseStep"
	PauseReasonBlueGreenPause         PauseReason = "BlueGreenPause"
	PauseReasonInconclusiveExperiment PauseReason = "InconclusiveExperiment"
)

// RolloutConditionType is the type of a Rollout condition.
type RolloutConditionType string

// Rollout condition types, as Argo Rollouts reports them, plus
// UnsupportedField for fields Skiff accepts but does not implement.
const (
	RolloutAvailable        RolloutConditionType = "Available"
	RolloutProgressing      RolloutConditionType = "Progressing"
	RolloutReplicaFailure   RolloutConditionType = "ReplicaFailure"
	RolloutPaused           RolloutConditionType = "Paused"
	RolloutCompleted        RolloutConditionType = "Completed"
	RolloutHealthy          RolloutConditionType = "Healthy"
	InvalidSpec             RolloutConditionType = "InvalidSpec"
	RolloutUnsupportedField RolloutConditionType = "UnsupportedField"
)

// RolloutStatus is the observed state of a Rollout.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RolloutStatus struct {
	// Abort is set when the update was aborted.
	// +optional
	Abort bool `json:"abort,omitempty"`
	// +optional
	PauseConditions []PauseCondition `json:"pauseConditions,omitempty"`
	// ControllerPause is set when the controller paused the rollout.
	// +optional
	ControllerPause bool `json:"controllerPause,omitempty"`
	// +optional
	AbortedAt *metav1.Time `json:"abortedAt,omitempty"`
	// CurrentPodHash is the pod template hash of the newest ReplicaSet.
	// +optional
	CurrentPodHash string `json:"currentPodHash,omitempty"`
	// CurrentStepHash is the hash of the canary steps being run.
	// +optional
	CurrentStepHash string `json:"currentStepHash,omitempty"`
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`
	// CurrentStepIndex is the index of the canary step being run.
	// +optional
	CurrentStepIndex *int32 `json:"currentStepIndex,omitempty"`
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`
	// ObservedGeneration is a string in Argo Rollouts (a hash in old versions,
	// the generation number in new ones).
	// +optional
	ObservedGeneration string `json:"observedGeneration,omitempty"`
	// +optional
	Conditions []RolloutCondition `json:"conditions,omitempty"`
	// +optional
	Canary CanaryStatus `json:"canary,omitempty"`
	// +optional
	BlueGreen BlueGreenStatus `json:"blueGreen,omitempty"`
	// HPAReplicas is the number of pods targeted by the selector, read by the scale subresource.
	// +optional
	HPAReplicas int32 `json:"HPAReplicas,omitempty"`
	// Selector is the label selector of the pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`
	// StableRS is the pod template hash of the stable ReplicaSet.
	// +optional
	StableRS string `json:"stableRS,omitempty"`
	// +optional
	RestartedAt *metav1.Time `json:"restartedAt,omitempty"`
	// PromoteFull skips the remaining steps and analyses.
	// +optional
	PromoteFull bool `json:"promoteFull,omitempty"`
	// +optional
	Phase RolloutPhase `json:"phase,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	WorkloadObservedGeneration string `json:"workloadObservedGeneration,omitempty"`
}

// PauseCondition records why and since when a rollout is paused.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PauseCondition struct {
	Reason    PauseReason `json:"reason"`
	StartTime metav1.Time `json:"startTime"`
}

// RolloutCondition is one observed condition of a Rollout.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RolloutCondition struct {
	Type   RolloutConditionType   `json:"type"`
	Status corev1.ConditionStatus `json:"status"`
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	// +optional
	Reason string `json:"reason"`
	// +optional
	Message string `json:"message"`
}

// CanaryStatus is the state of a canary update.
//
// +kubebuilder:pruning:PreserveUnknownFields
type CanaryStatus struct {
	// +optional
	CurrentStepAnalysisRunStatus *RolloutAnalysisRunStatus `json:"currentStepAnalysisRunStatus,omitempty"`
	// +optional
	CurrentBackgroundAnalysisRunStatus *RolloutAnalysisRunStatus `json:"currentBackgroundAnalysisRunStatus,omitempty"`
	// +optional
	CurrentExperiment string `json:"currentExperiment,omitempty"`
	// Weights are the traffic weights set on the router.
	// +optional
	Weights *TrafficWeights `json:"weights,omitempty"`
	// +optional
	StablePingPong string `json:"stablePingPong,omitempty"`
}

// TrafficWeights are the weights last set on the traffic router.
//
// +kubebuilder:pruning:PreserveUnknownFields
type TrafficWeights struct {
	Canary WeightDestination `json:"canary"`
	Stable WeightDestination `json:"stable"`
	// +optional
	Additional []WeightDestination `json:"additional,omitempty"`
	// +optional
	Verified *bool `json:"verified,omitempty"`
}

// WeightDestination is the weight sent to one ReplicaSet.
//
// +kubebuilder:pruning:PreserveUnknownFields
type WeightDestination struct {
	Weight int32 `json:"weight"`
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// +optional
	PodTemplateHash string `json:"podTemplateHash,omitempty"`
}

// BlueGreenStatus is the state of a blue-green update.
//
// +kubebuilder:pruning:PreserveUnknownFields
type BlueGreenStatus struct {
	// PreviewSelector is the pod template hash the preview Service selects.
	// +optional
	PreviewSelector string `json:"previewSelector,omitempty"`
	// ActiveSelector is the pod template hash the active Service selects.
	// +optional
	ActiveSelector string `json:"activeSelector,omitempty"`
	// +optional
	ScaleUpPreviewCheckPoint bool `json:"scaleUpPreviewCheckPoint,omitempty"`
	// +optional
	PrePromotionAnalysisRunStatus *RolloutAnalysisRunStatus `json:"prePromotionAnalysisRunStatus,omitempty"`
	// +optional
	PostPromotionAnalysisRunStatus *RolloutAnalysisRunStatus `json:"postPromotionAnalysisRunStatus,omitempty"`
}

// RolloutAnalysisRunStatus is the state of an AnalysisRun a rollout waits on.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RolloutAnalysisRunStatus struct {
	Name   string        `json:"name"`
	Status AnalysisPhase `json:"status"`
	// +optional
	Message string `json:"message,omitempty"`
}

func init() {
	register(&Rollout{}, &RolloutList{})
}
