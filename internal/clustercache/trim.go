package clustercache

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/internal/diff"
)

// trim drops from u, in place, what the cache's readers do not need. An
// object no Application tracks (most of them: Pods, ReplicaSets,
// EndpointSlices, the namespaces' own ConfigMaps and ServiceAccounts) is
// kept as apiVersion, kind and metadata without managedFields: its
// readers want its existence, owners, labels and annotations, and GetFull
// reads it whole from the API server for the rare comparison that needs
// its body (an app about to adopt it). A tracked object is kept whole but
// for Skiff's own managedFields entry, which the diff skips; the entries of
// other managers stay for ignoreDifferences.managedFieldsManagers. u is
// left untouched when nothing is to be dropped.
func trim(u *unstructured.Unstructured, tracking Tracking) {
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	if OwningApp(u, tracking) == "" {
		for k := range u.Object {
			if k != "apiVersion" && k != "kind" && k != "metadata" {
				delete(u.Object, k)
			}
		}
		// delete writes to the map even when the key is absent, and an
		// object already trimmed may be read concurrently.
		//lint:ignore S1033 the guard keeps a trimmed object unwritten
		if _, ok := md["managedFields"]; ok {
			delete(md, "managedFields")
		}
		return
	}
	entries, ok := md["managedFields"]
	if !ok {
		return
	}
	list, _ := entries.([]any)
	if len(list) == 0 {
		delete(md, "managedFields")
		return
	}
	kept := make([]any, 0, len(list))
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && m["manager"] == diff.FieldManager {
			continue
		}
		kept = append(kept, e)
	}
	switch {
	case len(kept) == len(list):
	case len(kept) == 0:
		delete(md, "managedFields")
	default:
		md["managedFields"] = kept
	}
}
