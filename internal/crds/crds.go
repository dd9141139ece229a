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
// timeout for each to be Established.
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
	for _, def := range defs {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			got, err := crdClient.Get(ctx, def.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for CRD %s to be established: %w", def.Name, err)
		}
	}
	return nil
}
