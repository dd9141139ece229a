package appset

import (
	"fmt"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Applications generates the parameter sets of spec and renders one
// Application per set, in generator order. An Application that fails to
// render or check, or two with one name, make it an error naming the app:
// the controller then changes nothing. RequeueAfter is Generate's.
func Applications(spec *v1alpha1.ApplicationSetSpec, in Inputs) ([]v1alpha1.Application, time.Duration, error) {
	opts := OptionsOf(spec).withCache()
	res, err := generate(spec, in, opts)
	if err != nil {
		return nil, 0, err
	}
	var apps []v1alpha1.Application
	seen := map[string]int{} // name -> generator (1-based) that gave it
	for i, set := range res.Sets {
		for _, p := range set.Params {
			app, err := Render(set.Template, spec.TemplatePatch, p, opts)
			if err != nil {
				return nil, 0, fmt.Errorf("generator %d: %w", i+1, err)
			}
			switch first, dup := seen[app.Name]; {
			case dup && first == i+1:
				return nil, 0, fmt.Errorf("generator %d gives two Applications named %q", first, app.Name)
			case dup:
				return nil, 0, fmt.Errorf("generators %d and %d both give an Application named %q", first, i+1, app.Name)
			}
			seen[app.Name] = i + 1
			apps = append(apps, *app)
		}
	}
	return apps, res.RequeueAfter, nil
}
