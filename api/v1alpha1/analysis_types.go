package v1alpha1

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// AnalysisTemplate describes how to measure a version: metrics, their
// providers and the conditions that pass or fail them.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=analysistemplates,shortName=at
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AnalysisTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AnalysisTemplateSpec `json:"spec"`
}

// AnalysisTemplateList is a list of AnalysisTemplates.
//
// +kubebuilder:object:root=true
type AnalysisTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []AnalysisTemplate `json:"items"`
}

// ClusterAnalysisTemplate is an AnalysisTemplate usable from every namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusteranalysistemplates,shortName=cat,scope=Cluster
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterAnalysisTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AnalysisTemplateSpec `json:"spec"`
}

// ClusterAnalysisTemplateList is a list of ClusterAnalysisTemplates.
//
// +kubebuilder:object:root=true
type ClusterAnalysisTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []ClusterAnalysisTemplate `json:"items"`
}

// AnalysisTemplateSpec is the body of an AnalysisTemplate.
//
// +kubebuilder:pruning:PreserveUnknownFields
type AnalysisTemplateSpec struct {
	Metrics []Metric `json:"metrics"`
	// Args are the template's parameters, referenced as {{args.name}}.
	// +optional
	Args []Argument `json:"args,omitempty"`
	// +optional
	DryRun []DryRun `json:"dryRun,omitempty"`
	// +optional
	MeasurementRetention []MeasurementRetention `json:"measurementRetention,omitempty"`
}

// AnalysisRun is one execution of one or more AnalysisTemplates.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=analysisruns,shortName=ar
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`,description="AnalysisRun status"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`,description="Time since resource was created"
type AnalysisRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AnalysisRunSpec `json:"spec"`
	// +optional
	Status AnalysisRunStatus `json:"status,omitempty"`
}

// AnalysisRunList is a list of AnalysisRuns.
//
// +kubebuilder:object:root=true
type AnalysisRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []AnalysisRun `json:"items"`
}

// AnalysisRunSpec is what an AnalysisRun measures.
//
// +kubebuilder:pruning:PreserveUnknownFields
type AnalysisRunSpec struct {
	Metrics []Metric `json:"metrics"`
	// +optional
	Args []Argument `json:"args,omitempty"`
	// Terminate stops the run; its phase becomes that of its metrics so far.
	// +optional
	Terminate bool `json:"terminate,omitempty"`
	// +optional
	DryRun []DryRun `json:"dryRun,omitempty"`
	// +optional
	MeasurementRetention []MeasurementRetention `json:"measurementRetention,omitempty"`
	// TTLStrategy deletes the run some time after it finished.
	// +optional
	TTLStrategy *TTLStrategy `json:"ttlStrategy,omitempty"`
}

// TTLStrategy bounds how long a finished AnalysisRun is kept.
//
// +kubebuilder:pruning:PreserveUnknownFields
type TTLStrategy struct {
	// +optional
	SecondsAfterCompletion *int32 `json:"secondsAfterCompletion,omitempty"`
	// +optional
	SecondsAfterFailure *int32 `json:"secondsAfterFailure,omitempty"`
	// +optional
	SecondsAfterSuccess *int32 `json:"secondsAfterSuccess,omitempty"`
}

// Argument is a template parameter and, in a run, its value.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Argument struct {
	Name string `json:"name"`
	// Value is the argument's value; users often write numbers bare.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Value *AnyString `json:"value,omitempty"`
	// +optional
	ValueFrom *ValueFrom `json:"valueFrom,omitempty"`
}

// ValueFrom takes an argument from a Secret or from the owning object.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ValueFrom struct {
	// SecretKeyRef reads a key of a Secret in the run's namespace; the value is never shown.
	// +optional
	SecretKeyRef *SecretKeyRef `json:"secretKeyRef,omitempty"`
	// +optional
	FieldRef *FieldRef `json:"fieldRef,omitempty"`
}

// SecretKeyRef names one key of a Secret.
//
// +kubebuilder:pruning:PreserveUnknownFields
type SecretKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// DurationString is a Go duration such as "30s" or "5m".
type DurationString string

// Metric is one measurement repeated on an interval and judged by conditions.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Metric struct {
	Name string `json:"name"`
	// Interval between measurements; without it the metric is measured once.
	// +optional
	Interval DurationString `json:"interval,omitempty"`
	// InitialDelay before the first measurement.
	// +optional
	InitialDelay DurationString `json:"initialDelay,omitempty"`
	// Count is how many measurements to take.
	// +optional
	Count *intstr.IntOrString `json:"count,omitempty"`
	// SuccessCondition is an expression over `result` that passes a measurement.
	// +optional
	SuccessCondition string `json:"successCondition,omitempty"`
	// FailureCondition is an expression over `result` that fails a measurement.
	// +optional
	FailureCondition string `json:"failureCondition,omitempty"`
	// FailureLimit is how many failed measurements fail the metric; default 0, -1 never.
	// +optional
	FailureLimit *intstr.IntOrString `json:"failureLimit,omitempty"`
	// InconclusiveLimit is how many inconclusive measurements make the metric inconclusive.
	// +optional
	InconclusiveLimit *intstr.IntOrString `json:"inconclusiveLimit,omitempty"`
	// ConsecutiveErrorLimit is how many errors in a row make the metric Error; default 4.
	// +optional
	ConsecutiveErrorLimit *intstr.IntOrString `json:"consecutiveErrorLimit,omitempty"`
	// ConsecutiveSuccessLimit is how many successes in a row end the metric successfully.
	// +optional
	ConsecutiveSuccessLimit *intstr.IntOrString `json:"consecutiveSuccessLimit,omitempty"`
	// Provider takes the measurement.
	Provider MetricProvider `json:"provider"`
}

// MetricProvider holds exactly one provider. Skiff implements prometheus,
// web and job; the other Argo Rollouts providers are kept and reported as
// unsupported.
//
// +kubebuilder:pruning:PreserveUnknownFields
type MetricProvider struct {
	// +optional
	Prometheus *PrometheusMetric `json:"prometheus,omitempty"`
	// +optional
	Web *WebMetric `json:"web,omitempty"`
	// +optional
	Job *JobMetric `json:"job,omitempty"`
	// Plugin is accepted and kept but not implemented.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Plugin map[string]runtime.RawExtension `json:"plugin,omitempty"`
}

// PrometheusMetric runs a PromQL query through the HTTP query API.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PrometheusMetric struct {
	// Address is the base URL of the Prometheus server.
	// +optional
	Address string `json:"address,omitempty"`
	// Query is the PromQL query; {{args.x}} is substituted.
	// +optional
	Query string `json:"query,omitempty"`
	// Timeout of the query, in seconds.
	// +optional
	Timeout *int64 `json:"timeout,omitempty"`
	// Insecure skips TLS verification.
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// +optional
	Headers []WebMetricHeader `json:"headers,omitempty"`
}

// WebMetric calls an HTTP endpoint and reads a value from its JSON body.
//
// +kubebuilder:pruning:PreserveUnknownFields
type WebMetric struct {
	// Method defaults to GET.
	// +optional
	Method string `json:"method,omitempty"`
	URL    string `json:"url"`
	// +optional
	Headers []WebMetricHeader `json:"headers,omitempty"`
	// +optional
	Body string `json:"body,omitempty"`
	// JSONBody is a JSON request body given as YAML.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	JSONBody *runtime.RawExtension `json:"jsonBody,omitempty"`
	// TimeoutSeconds defaults to 10.
	// +optional
	TimeoutSeconds int64 `json:"timeoutSeconds,omitempty"`
	// JSONPath selects the value, e.g. {$.data.ok}.
	// +optional
	JSONPath string `json:"jsonPath,omitempty"`
	// Insecure skips TLS verification.
	// +optional
	Insecure bool `json:"insecure,omitempty"`
}

// WebMetricHeader is one HTTP header.
//
// +kubebuilder:pruning:PreserveUnknownFields
type WebMetricHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// JobMetric runs a Kubernetes Job; the measurement succeeds when it does.
//
// +kubebuilder:pruning:PreserveUnknownFields
type JobMetric struct {
	// +optional
	Metadata AnalysisRunMetadata `json:"metadata,omitempty"`
	// Spec is a batch/v1 JobSpec. Its schema is left open: the Job's own
	// validation applies when the Job is created, and newer JobSpec fields
	// carry immutability rules that a CRD cannot use inside a list.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Spec batchv1.JobSpec `json:"spec"`
}

// AnalysisPhase is the state of a measurement, a metric or a run.
type AnalysisPhase string

// Analysis phases, as Argo Rollouts reports them.
const (
	AnalysisPhasePending      AnalysisPhase = "Pending"
	AnalysisPhaseRunning      AnalysisPhase = "Running"
	AnalysisPhaseSuccessful   AnalysisPhase = "Successful"
	AnalysisPhaseFailed       AnalysisPhase = "Failed"
	AnalysisPhaseError        AnalysisPhase = "Error"
	AnalysisPhaseInconclusive AnalysisPhase = "Inconclusive"
)

// Completed reports whether the phase is final.
func (p AnalysisPhase) Completed() bool {
	switch p {
	case AnalysisPhaseSuccessful, AnalysisPhaseFailed, AnalysisPhaseError, AnalysisPhaseInconclusive:
		return true
	}
	return false
}

// AnalysisRunStatus is the observed state of an AnalysisRun.
//
// +kubebuilder:pruning:PreserveUnknownFields
type AnalysisRunStatus struct {
	// +optional
	Phase AnalysisPhase `json:"phase,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	MetricResults []MetricResult `json:"metricResults,omitempty"`
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	RunSummary RunSummary `json:"runSummary,omitempty"`
	// DryRunSummary counts the results of dry-run metrics.
	// +optional
	DryRunSummary *RunSummary `json:"dryRunSummary,omitempty"`
	// CompletedAt is when the run finished.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
}

// RunSummary counts metrics by phase.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RunSummary struct {
	// +optional
	Count int32 `json:"count,omitempty"`
	// +optional
	Successful int32 `json:"successful,omitempty"`
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// +optional
	Inconclusive int32 `json:"inconclusive,omitempty"`
	// +optional
	Error int32 `json:"error,omitempty"`
}

// MetricResult is the state of one metric of a run.
//
// +kubebuilder:pruning:PreserveUnknownFields
type MetricResult struct {
	Name  string        `json:"name"`
	Phase AnalysisPhase `json:"phase"`
	// +optional
	Measurements []Measurement `json:"measurements,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	Count int32 `json:"count,omitempty"`
	// +optional
	Successful int32 `json:"successful,omitempty"`
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// +optional
	Inconclusive int32 `json:"inconclusive,omitempty"`
	// +optional
	Error int32 `json:"error,omitempty"`
	// +optional
	ConsecutiveError int32 `json:"consecutiveError,omitempty"`
	// +optional
	ConsecutiveSuccess int32 `json:"consecutiveSuccess,omitempty"`
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Measurement is one measurement of a metric.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Measurement struct {
	Phase AnalysisPhase `json:"phase"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// Value is the measured value as text.
	// +optional
	Value string `json:"value,omitempty"`
	// Metadata holds provider facts, such as the Job name.
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
	// ResumeAt is when the next measurement is due.
	// +optional
	ResumeAt *metav1.Time `json:"resumeAt,omitempty"`
}

func init() {
	register(
		&AnalysisTemplate{}, &AnalysisTemplateList{},
		&ClusterAnalysisTemplate{}, &ClusterAnalysisTemplateList{},
		&AnalysisRun{}, &AnalysisRunList{},
	)
}
