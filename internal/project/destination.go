package project

import (
	"cmp"
	"fmt"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// CheckDestination returns nil when the project's destinations permit
// deploying to namespace of the cluster given by server or name (either may
// be empty).
//
// An entry matches when its server glob matches server or its name glob
// matches name, and its namespace glob matches namespace. A field starting
// with "!" negates its glob; an entry whose negated field rejects the
// destination denies it, and a deny wins over any allow (Argo CD 2.5 and
// later). The local cluster may be given as server InClusterServer or name
// InClusterName: each stands for the other.
func CheckDestination(p *v1alpha1.AppProject, server, name, namespace string) error {
	return CheckClusterDestination(p, server, name, namespace, server, "")
}

// CheckClusterDestination is CheckDestination for a destination (server
// and name as the app gives them) that names a known cluster, whose
// address is clusterServer and whose project is clusterProject ("" when
// it is not project-scoped). As Argo CD infers the server of a named
// destination, an entry's server glob matches clusterServer; its name glob
// matches the name the app gave. A project with
// permitOnlyProjectScopedClusters permits only the clusters scoped to it.
func CheckClusterDestination(p *v1alpha1.AppProject, server, name, namespace, clusterServer, clusterProject string) error {
	if p == nil {
		return errNilProject
	}
	if destinationPermitted(p.Spec.Destinations, clusterServer, name, namespace) {
		if p.Spec.PermitOnlyProjectScopedClusters && clusterProject != p.Name {
			return &notPermittedError{msg: fmt.Sprintf(
				"application destination cluster '%s' is not scoped to project '%s', which permits only its own clusters",
				cmp.Or(name, clusterServer), p.Name)}
		}
		return nil
	}
	if server == "" && name != "" {
		return &notPermittedError{msg: fmt.Sprintf(
			"application destination name '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'",
			name, namespace, p.Name)}
	}
	return &notPermittedError{msg: fmt.Sprintf(
		"application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'",
		server, namespace, p.Name)}
}

func destinationPermitted(allowed []v1alpha1.ApplicationDestination, server, name, namespace string) bool {
	switch {
	case server == "" && name == InClusterName:
		server = InClusterServer
	case name == "" && server == InClusterServer:
		name = InClusterName
	}
	anyAllowed := false
	for _, d := range allowed {
		nameMatched := name != "" && globMatch(d.Name, name, true)
		serverMatched := server != "" && globMatch(d.Server, server, true)
		namespaceMatched := globMatch(d.Namespace, namespace, true)
		switch {
		case (serverMatched || nameMatched) && namespaceMatched:
			anyAllowed = true
		case !nameMatched && isDeny(d.Name),
			!serverMatched && isDeny(d.Server),
			!namespaceMatched && isDeny(d.Namespace):
			return false
		}
	}
	return anyAllowed
}
