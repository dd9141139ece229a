package project

import (
	"errors"

	"github.com/gobwas/glob"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

const (
	// InClusterServer is the API server address of the cluster Skiff runs in.
	InClusterServer = "https://kubernetes.default.svc"
	// InClusterName is the cluster name that means the same as InClusterServer.
	InClusterName = "in-cluster"
)

// ErrNotPermitted is matched, through errors.Is, by every error that reports
// a repository, destination or resource the project does not permit.
var ErrNotPermitted = errors.New("not permitted by project")

// notPermittedError carries the Argo CD style message alone, so that callers
// can show it as it is while still testing for ErrNotPermitted.
type notPermittedError struct{ msg string }

func (e *notPermittedError) Error() string        { return e.msg }
func (e *notPermittedError) Is(target error) bool { return target == ErrNotPermitted }

// errNilProject is returned by the checks when they are given no project.
var errNilProject = errors.New("no AppProject given")

// Default returns the project named "default" as Argo CD creates it in
// namespace: every repository, every destination and every resource kind
// is permitted.
func Default(namespace string) *v1alpha1.AppProject {
	return &v1alpha1.AppProject{
		TypeMeta: metav1.TypeMeta{
			APIVersion: v1alpha1.GroupVersion.String(),
			Kind:       "AppProject",
		},
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.DefaultProjectName, Namespace: namespace},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:              []string{"*"},
			Destinations:             []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			ClusterResourceWhitelist: []metav1.GroupKind{{Group: "*", Kind: "*"}},
		},
	}
}

// isDeny reports whether pattern is a negated ("!") pattern.
func isDeny(pattern string) bool {
	return len(pattern) > 0 && pattern[0] == '!'
}

// globMatch matches val against pattern the way Argo CD does: "*" matches
// any value, including the empty one; a pattern that does not compile
// matches nothing. With negation, "!p" matches exactly the values p does
// not match. Separators, if given, are characters "*" does not cross ("**"
// does).
func globMatch(pattern, val string, negation bool, separators ...rune) bool {
	if negation && isDeny(pattern) {
		return !globMatch(pattern[1:], val, false, separators...)
	}
	if pattern == "*" {
		return true
	}
	g, err := glob.Compile(pattern, separators...)
	if err != nil {
		return false
	}
	return g.Match(val)
}
