package argocdcm

// ResourceSettings are argocd-cm's resource.* keys.
type ResourceSettings struct{}

// parseResource reads the resource.* keys of data, appending one error per
// invalid entry to errs.
func parseResource(data map[string]string, errs []error) (ResourceSettings, []error) {
	return ResourceSettings{}, errs
}
