// Package v1alpha1 holds the argoproj.io/v1alpha1 API types that Skiff serves:
// Application, AppProject and ApplicationSet (Argo CD), Rollout, AnalysisTemplate,
// ClusterAnalysisTemplate and AnalysisRun (Argo Rollouts). Kinds, field names,
// JSON tags, short names and printer columns follow those projects so that
// users' existing manifests work unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=argoproj.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "argoproj.io", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// knownTypes is filled by the init functions of the *_types.go files.
var knownTypes []runtime.Object

func register(objects ...runtime.Object) {
	knownTypes = append(knownTypes, objects...)
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, knownTypes...)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
