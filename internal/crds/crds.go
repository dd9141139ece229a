// Package crds installs Skiff's CustomResourceDefinitions (the argoproj.io
// kinds) into a cluster and waits until the API server serves them.
package crds

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/config/crd"
)

// FieldManager is the server-side apply field manager for installed CRDs.
const FieldManager = "skiff"

// Load returns the embedded CRDs.
func Load() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, name := range files {
		data, err := fs.ReadFile(crd.Bases, name)
		if err != nil {
			return nil, err
		}
		var c apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(data, &c); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", path.Base(name), err)
		}
		out = append(out, &c)
	}
	return out, nil
}

// Install applies every embedded CRD with server-side apply and waits up to
// timeout for each to be served (WaitServed).
func Install(ctx context.Context, cfg *rest.Config, timeout time.Duration) error {
	defs, err := Load()
	if err != nil {
		return err
	}
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building apiextensions client: %w", err)
	}
	crdClient := client.ApiextensionsV1().CustomResourceDefinitions()
	force := true
	for _, def := range defs {
		def.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
		body, err := yaml.Marshal(def)
		if err != nil {
			return err
		}
		if _, err := crdClient.Patch(ctx, def.Name, types.ApplyYAMLPatchType, body,
			metav1.PatchOptions{FieldManager: FieldManager, Force: &force}); err != nil {
			return fmt.Errorf("applying CRD %s: %w", def.Name, err)
		}
	}
	return WaitServed(ctx, cfg, defs, timeout)
}

// createHold is how long after a CRD becomes Established the API server
// holds each create of its kind for that long again (the apiextensions
// server's guard for HA peers that have not seen the CRD yet).
const createHold = 2 * time.Second

// WaitServed waits up to timeout for each CRD to be Established and for
// discovery to list each of its served versions: a client's REST mapper
// reads discovery, and an Established CRD can still be missing there for a
// moment, so a create right after would fail with "no matches for kind".
// It then waits out the API server's hold on creates of a just-established
// kind, so that the first Applications a user applies after Skiff is ready
// are not each held for two seconds.
func WaitServed(ctx context.Context, cfg *rest.Config, defs []*apiextensionsv1.CustomResourceDefinition, timeout time.Duration) error {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building apiextensions client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building discovery client: %w", err)
	}
	crdClient := client.ApiextensionsV1().CustomResourceDefinitions()
	var lastEstablished time.Time
	for _, def := range defs {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			got, err := crdClient.Get(ctx, def.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			at, ok := establishedAt(got)
			if !ok {
				return false, nil
			}
			if at.After(lastEstablished) {
				lastEstablished = at
			}
			for _, v := range got.Spec.Versions {
				if v.Served && !discovered(disc, got.Spec.Group+"/"+v.Name, got.Spec.Names.Plural) {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for CRD %s to be served: %w", def.Name, err)
		}
	}
	hold := createHoldLeft(lastEstablished, time.Now())
	if hold == 0 {
		return nil
	}
	select {
	case <-time.After(hold):
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the API server to take creates of the new kinds: %w", ctx.Err())
	}
}

// establishedAt returns when crd became Established, if it is.
func establishedAt(crd *apiextensionsv1.CustomResourceDefinition) (time.Time, bool) {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// createHoldLeft is how long from now the API server still holds creates
// of a kind established at the given time. The condition's time has whole
// seconds, as the API server's own copy does; a clock ahead of ours cannot
// make the wait longer than one hold.
func createHoldLeft(established, now time.Time) time.Duration {
	left := established.Add(createHold).Sub(now)
	switch {
	case left <= 0:
		return 0
	case left > createHold:
		return createHold
	}
	return left
}

// discovered reports whether discovery lists resource in groupVersion.
func discovered(disc discovery.DiscoveryInterface, groupVersion, resource string) bool {
	list, err := disc.ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true
		}
	}
	return false
}
