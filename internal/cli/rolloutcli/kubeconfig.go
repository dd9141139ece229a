package rolloutcli

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
)

// DefaultNamespace is the namespace of the current context of kubeconfig
// (the usual search when empty), or "default", also when there is no
// kubeconfig at all (through the API server none is needed).
func DefaultNamespace(kubeconfig string) (string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).Namespace()
	if clientcmd.IsEmptyConfig(err) {
		return "default", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the namespace of the kubeconfig context: %w", err)
	}
	if ns == "" {
		ns = "default"
	}
	return ns, nil
}
