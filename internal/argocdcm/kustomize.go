package argocdcm

import (
	"fmt"

	"github.com/skiffcd/skiff/internal/render"
)

// keyKustomizeBuildOptions holds the `kustomize build` flags of every app.
// Argo CD also reads kustomize.buildOptions.<version> for the kustomize
// binaries it can run side by side; Skiff builds with one kustomize, in
// process, so only the unversioned key applies.
const keyKustomizeBuildOptions = "kustomize.buildOptions"

// parseKustomize reads kustomize.buildOptions: the flags Skiff can honour
// apply, and each other flag is one error.
func parseKustomize(data map[string]string, errs []error) (render.KustomizeOptions, []error) {
	opts, flagErrs := render.ParseKustomizeBuildOptions(data[keyKustomizeBuildOptions])
	for _, err := range flagErrs {
		errs = append(errs, fmt.Errorf("%s: %w", keyKustomizeBuildOptions, err))
	}
	return opts, errs
}
