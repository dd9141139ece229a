package argocdcm

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// keyHelmValuesFileSchemes lists the URL schemes a Helm value file may be
// fetched from.
const keyHelmValuesFileSchemes = "helm.valuesFileSchemes"

// DefaultValuesFileSchemes is Argo CD's helm.valuesFileSchemes when the key
// is absent: value files only over https.
var DefaultValuesFileSchemes = []string{"https"}

// HelmSettings are argocd-cm's helm.* keys.
type HelmSettings struct {
	// ValuesFileSchemes are the URL schemes (lower case) value files given
	// by URL may use; the others are refused.
	ValuesFileSchemes []string
}

// schemeSyntax is RFC 3986's scheme.
var schemeSyntax = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)

// parseHelm reads helm.valuesFileSchemes, a comma-separated list: an
// invalid scheme is one error and the others apply; an empty list keeps
// the default.
func parseHelm(data map[string]string, errs []error) (HelmSettings, []error) {
	s := HelmSettings{ValuesFileSchemes: DefaultValuesFileSchemes}
	v, ok := data[keyHelmValuesFileSchemes]
	if !ok || strings.TrimSpace(v) == "" {
		return s, errs
	}
	var schemes []string
	for _, f := range strings.Split(v, ",") {
		scheme := strings.ToLower(strings.TrimSpace(f))
		switch {
		case scheme == "":
		case !schemeSyntax.MatchString(scheme):
			errs = append(errs, fmt.Errorf("%s: %q is not a URL scheme", keyHelmValuesFileSchemes, strings.TrimSpace(f)))
		case !slices.Contains(schemes, scheme):
			schemes = append(schemes, scheme)
		}
	}
	if len(schemes) > 0 {
		s.ValuesFileSchemes = schemes
	}
	return s, errs
}
