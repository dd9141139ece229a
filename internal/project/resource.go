package project

import (
	"fmt"
	"path"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// CheckResource returns nil when the project permits resources of group and
// kind; namespaced tells whether the kind is namespace-scoped.
//
// Cluster-scoped kinds must match clusterResourceWhitelist, so an empty or
// absent whitelist permits none (Default's whitelist permits all), and must
// not match clusterResourceBlacklist. Namespaced kinds must not match
// namespaceResourceBlacklist; when namespaceResourceWhitelist is set they
// must match it too. As in Argo CD, an absent (nil) namespace whitelist
// permits every kind while a present but empty one permits none.
//
// Entries match with shell globs ("*", "?", "[...]") on group and on kind;
// the core group is "".
func CheckResource(p *v1alpha1.AppProject, group, kind string, namespaced bool) error {
	if p == nil {
		return errNilProject
	}
	if resourcePermitted(&p.Spec, group, kind, namespaced) {
		return nil
	}
	return &notPermittedError{msg: fmt.Sprintf("resource %s:%s is not permitted in project %s", group, kind, p.Name)}
}

func resourcePermitted(spec *v1alpha1.AppProjectSpec, group, kind string, namespaced bool) bool {
	if namespaced {
		white := spec.NamespaceResourceWhitelist
		return (white == nil || inList(white, group, kind)) && !inList(spec.NamespaceResourceBlacklist, group, kind)
	}
	return inList(spec.ClusterResourceWhitelist, group, kind) && !inList(spec.ClusterResourceBlacklist, group, kind)
}

func inList(list []metav1.GroupKind, group, kind string) bool {
	for _, gk := range list {
		if shellMatch(gk.Kind, kind) && shellMatch(gk.Group, group) {
			return true
		}
	}
	return false
}

// shellMatch reports whether val matches the shell glob pattern; a malformed
// pattern matches nothing.
func shellMatch(pattern, val string) bool {
	ok, err := path.Match(pattern, val)
	return ok && err == nil
}
