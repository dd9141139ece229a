package syncengine

import (
	"fmt"
	"strings"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Options are Argo CD's sync options (`Name=value`), from the Application's
// syncPolicy.syncOptions or operation, overridden per object by the
// `argocd.argoproj.io/sync-options` annotation.
type Options struct {
	CreateNamespace    bool
	Replace            bool
	ApplyOutOfSyncOnly bool
	Validate           bool // default true
	PruneLast          bool
	PruneDisabled      bool // Prune=false
	DeleteDisabled     bool // Delete=false
	// PruneConfirm (Prune=confirm) holds a prune of the object until the
	// app carries a deletion approval newer than the operation's start;
	// DeleteConfirm (Delete=confirm) holds the app's cascading deletion
	// until one newer than the deletion.
	PruneConfirm, DeleteConfirm bool
	PropagationPolicy           string // foreground (default), background, orphan
	// SkipDryRunOnMissingResource skips validation of objects whose kind the
	// API server does not know yet.
	SkipDryRunOnMissingResource bool
	// RespectIgnoreDifferences applies the fields the app's
	// ignoreDifferences name as they are live (diff.RespectIgnores), so a
	// sync leaves an HPA's replicas alone.
	RespectIgnoreDifferences bool
	// FailOnSharedResource fails the sync, before anything is applied, when
	// an object it would apply is managed by another Application.
	FailOnSharedResource bool
	// Unsupported lists the options turned on that Skiff accepts but does
	// not implement.
	Unsupported []string
}

// DefaultOptions are the options when none are given.
func DefaultOptions() Options {
	return Options{Validate: true, PropagationPolicy: "foreground"}
}

// ParseOptions parses an Application's sync options over the defaults.
func ParseOptions(list []string) (Options, error) {
	return DefaultOptions().Merge(strings.Join(list, ","))
}

// Merge returns o with the comma-separated options in s applied.
func (o Options) Merge(s string) (Options, error) {
	o.Unsupported = append([]string(nil), o.Unsupported...)
	for _, item := range v1alpha1.SplitAnnotation(s) {
		name, value, ok := strings.Cut(item, "=")
		if !ok {
			return o, fmt.Errorf("sync option %q: want Name=value", item)
		}
		on := strings.EqualFold(value, "true")
		switch name {
		case "CreateNamespace":
			o.CreateNamespace = on
		case "Replace":
			o.Replace = on
		case "ApplyOutOfSyncOnly":
			o.ApplyOutOfSyncOnly = on
		case "Validate":
			o.Validate = on
		case "PruneLast":
			o.PruneLast = on
		case "Prune":
			o.PruneDisabled = strings.EqualFold(value, "false")
			o.PruneConfirm = strings.EqualFold(value, "confirm")
		case "Delete":
			o.DeleteDisabled = strings.EqualFold(value, "false")
			o.DeleteConfirm = strings.EqualFold(value, "confirm")
		case "ServerSideApply":
			// Skiff always applies server-side; accepted for compatibility.
		case "PrunePropagationPolicy":
			switch strings.ToLower(value) {
			case "foreground", "background", "orphan":
				o.PropagationPolicy = strings.ToLower(value)
			default:
				return o, fmt.Errorf("sync option PrunePropagationPolicy=%s: want foreground, background or orphan", value)
			}
		case "SkipDryRunOnMissingResource":
			o.SkipDryRunOnMissingResource = on
		case "RespectIgnoreDifferences":
			o.RespectIgnoreDifferences = on
		case "FailOnSharedResource":
			o.FailOnSharedResource = on
		case "ClientSideApplyMigration",
			// Argo CD's Force=true deletes and re-creates what cannot be
			// patched; conflicts over the fields git sets are forced always.
			"Force":
			if on {
				o.Unsupported = append(o.Unsupported, item)
			}
		default:
			return o, fmt.Errorf("unknown sync option %q", item)
		}
	}
	return o, nil
}
