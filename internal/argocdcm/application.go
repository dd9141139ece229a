package argocdcm

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/skiffcd/skiff/internal/clustercache"
)

// The application.* keys of argocd-cm.
const (
	keyTrackingMethod   = "application.resourceTrackingMethod"
	keyInstanceLabelKey = "application.instanceLabelKey"
)

// ApplicationSettings are argocd-cm's application.* and timeout.* keys.
type ApplicationSettings struct {
	// Tracking is how objects are tied to their Application:
	// application.resourceTrackingMethod (annotation, label or
	// annotation+label; default annotation) and
	// application.instanceLabelKey (default app.kubernetes.io/instance).
	Tracking clustercache.Tracking
}

// parseApplication reads the application.* and timeout.* keys of data,
// appending one error per invalid entry to errs.
func parseApplication(data map[string]string, errs []error) (ApplicationSettings, []error) {
	s := ApplicationSettings{Tracking: clustercache.DefaultTracking()}
	if v := strings.TrimSpace(data[keyTrackingMethod]); v != "" {
		switch mode := clustercache.TrackingMode(v); mode {
		case clustercache.TrackingAnnotationMode, clustercache.TrackingLabelMode, clustercache.TrackingAnnotationAndLabelMode:
			s.Tracking.Mode = mode
		default:
			errs = append(errs, fmt.Errorf("%s: %q is not a tracking method: want annotation, label or annotation+label", keyTrackingMethod, v))
		}
	}
	if v := strings.TrimSpace(data[keyInstanceLabelKey]); v != "" {
		if problems := validation.IsQualifiedName(v); len(problems) > 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a label key: %s", keyInstanceLabelKey, v, strings.Join(problems, "; ")))
		} else {
			s.Tracking.LabelKey = v
		}
	}
	return s, errs
}
