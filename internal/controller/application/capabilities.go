package application

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/client-go/discovery"
)

// capabilities are what a render learns of its destination cluster:
// Helm's .Capabilities.KubeVersion and .Capabilities.APIVersions (and
// Kustomize's KUBE_VERSION and KUBE_API_VERSIONS), as Argo CD gives them.
type capabilities struct {
	// kubeVersion is the server's git version ("v1.35.0").
	kubeVersion string
	// apiVersions are every served group/version and group/version/Kind,
	// sorted.
	apiVersions []string
}

func (c capabilities) equal(o capabilities) bool {
	return c.kubeVersion == o.kubeVersion && slices.Equal(c.apiVersions, o.apiVersions)
}

// readCapabilities asks a cluster for its version and the API versions it
// serves. A group whose discovery fails (an aggregated API that is down)
// is left out rather than failing the read.
func readCapabilities(disc discovery.DiscoveryInterface) (capabilities, error) {
	v, err := disc.ServerVersion()
	if err != nil {
		return capabilities{}, fmt.Errorf("reading the server version: %w", err)
	}
	_, lists, err := disc.ServerGroupsAndResources()
	if err != nil && len(lists) == 0 {
		return capabilities{}, fmt.Errorf("discovering API versions: %w", err)
	}
	caps := capabilities{kubeVersion: v.GitVersion}
	seen := map[string]bool{}
	for _, l := range lists {
		if !seen[l.GroupVersion] {
			seen[l.GroupVersion] = true
			caps.apiVersions = append(caps.apiVersions, l.GroupVersion)
		}
		for _, res := range l.APIResources {
			if !strings.Contains(res.Name, "/") {
				caps.apiVersions = append(caps.apiVersions, l.GroupVersion+"/"+res.Kind)
			}
		}
	}
	sort.Strings(caps.apiVersions)
	return caps, nil
}
