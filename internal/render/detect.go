package render

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// kustomizationNames are the file names Kustomize looks for, in its order.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// errPlugin is returned for sources that ask for a config management plugin.
var errPlugin = errors.New("config management plugins are not supported")

// Detect chooses the renderer for req as Argo CD does. An explicit helm,
// kustomize, directory or plugin block wins (more than one is an error, and a
// plugin is refused); so does a Helm repository chart. Otherwise the files in
// the application directory decide: Chart.yaml means Helm, a kustomization
// file means Kustomize, anything else is a plain directory.
func Detect(req Request) (Kind, error) {
	src := req.Source
	var explicit []Kind
	if src.Helm != nil {
		explicit = append(explicit, KindHelm)
	}
	if src.Kustomize != nil {
		explicit = append(explicit, KindKustomize)
	}
	if src.Directory != nil {
		explicit = append(explicit, KindDirectory)
	}
	if src.Plugin != nil {
		explicit = append(explicit, KindPlugin)
	}
	if len(explicit) > 1 {
		names := make([]string, len(explicit))
		for i, k := range explicit {
			names[i] = string(k)
		}
		return "", fmt.Errorf("multiple application sources defined: %s", strings.Join(names, ", "))
	}
	if len(explicit) == 1 {
		if explicit[0] == KindPlugin {
			return "", errPlugin
		}
		return explicit[0], nil
	}
	if src.Chart != "" {
		return KindHelm, nil
	}

	dir, err := SecureJoin(req.Root, req.Path)
	if err != nil {
		return "", fmt.Errorf("application path: %w", err)
	}
	if isFile(filepath.Join(dir, "Chart.yaml")) {
		return KindHelm, nil
	}
	for _, name := range kustomizationNames {
		if isFile(filepath.Join(dir, name)) {
			return KindKustomize, nil
		}
	}
	return KindDirectory, nil
}

func isFile(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular()
}
