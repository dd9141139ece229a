package argocdcm

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The application.* keys of argocd-cm.
const (
	keyTrackingMethod   = "application.resourceTrackingMethod"
	keyInstanceLabelKey = "application.instanceLabelKey"
	keyReconciliation   = "timeout.reconciliation"
	keyHardReconcile    = "timeout.hard.reconciliation"

	defaultTrackingMethod   = "annotation"
	defaultInstanceLabelKey = "app.kubernetes.io/instance"
)

// ApplicationSettings are argocd-cm's application.* and timeout.* keys.
type ApplicationSettings struct {
	// TrackingMethod is application.resourceTrackingMethod, how objects
	// are tied to their Application: annotation (the default), label or
	// annotation+label (clustercache.TrackingMode's values).
	TrackingMethod string
	// InstanceLabelKey is application.instanceLabelKey, the instance
	// label of the label methods (default app.kubernetes.io/instance).
	InstanceLabelKey string
	// Reconciliation is timeout.reconciliation, how often each app asks
	// git for new commits (0 never); nil when unset: the controller's
	// --app-resync then applies.
	Reconciliation *time.Duration
	// HardReconciliation is timeout.hard.reconciliation, how often an
	// app's comparison renders again past the caches; 0 (the default)
	// never.
	HardReconciliation time.Duration
}

// parseApplication reads the application.* and timeout.* keys of data,
// appending one error per invalid entry to errs.
func parseApplication(data map[string]string, errs []error) (ApplicationSettings, []error) {
	s := ApplicationSettings{TrackingMethod: defaultTrackingMethod, InstanceLabelKey: defaultInstanceLabelKey}
	if v := strings.TrimSpace(data[keyTrackingMethod]); v != "" {
		switch v {
		case "annotation", "label", "annotation+label":
			s.TrackingMethod = v
		default:
			errs = append(errs, fmt.Errorf("%s: %q is not a tracking method: want annotation, label or annotation+label", keyTrackingMethod, v))
		}
	}
	if v := strings.TrimSpace(data[keyInstanceLabelKey]); v != "" {
		if problems := validation.IsQualifiedName(v); len(problems) > 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a label key: %s", keyInstanceLabelKey, v, strings.Join(problems, "; ")))
		} else {
			s.InstanceLabelKey = v
		}
	}
	if v := strings.TrimSpace(data[keyReconciliation]); v != "" {
		d, err := parseTimeout(keyReconciliation, v)
		if err != nil {
			errs = append(errs, err)
		} else {
			s.Reconciliation = &d
		}
	}
	if v := strings.TrimSpace(data[keyHardReconcile]); v != "" {
		d, err := parseTimeout(keyHardReconcile, v)
		if err != nil {
			errs = append(errs, err)
		} else {
			s.HardReconciliation = d
		}
	}
	return s, errs
}

// parseTimeout reads a timeout.* value: a duration as Go and Argo CD write
// them ("180s", "3m"), not negative.
func parseTimeout(key, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s: %q is not a duration (write it as 180s or 3m)", key, v)
	case d < 0:
		return 0, fmt.Errorf("%s: %q is negative", key, v)
	}
	return d, nil
}
