package clustercache

import (
	"bytes"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// stored is how the cache, and the informers under it, hold a live object:
// the trimmed object as JSON, decoded again on each read, beside what the
// indexes and the informer read without decoding. Decoded into maps, an
// object costs three to four times its JSON, and the cache holds every
// object of every watched kind; a comparison decodes only its own app's.
type stored struct {
	key ResourceKey
	// app is the Application tracking the object, "" for none.
	app string
	// meta holds the name, namespace, UID, resourceVersion and owner
	// references: the informer's key function and the indexes read them.
	meta metav1.ObjectMeta
	raw  []byte
	// partial marks an object that came from a metadata-only watch (see
	// watchMetadata): it is indexed as untracked whatever its annotations
	// say, because no reader may take its metadata for its whole body.
	partial bool
	// health is Options.Health's judgement of a tracked object.
	health string
	// fingerprint is Options.Fingerprint's digest of a tracked object.
	fingerprint string
}

// judges are the Options that look at each tracked object as it is stored.
type judges struct {
	health, fingerprint func(*unstructured.Unstructured) string
}

func (o Options) judges() judges { return judges{health: o.Health, fingerprint: o.Fingerprint} }

// store encodes u, already trimmed, for the cache; judge's functions
// (optional) give the health and fingerprint of a tracked object.
func store(u *unstructured.Unstructured, tracking Tracking, judge judges) (*stored, error) {
	raw, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", KeyOf(u), err)
	}
	s := &stored{
		key: KeyOf(u),
		app: OwningApp(u, tracking),
		meta: metav1.ObjectMeta{
			Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
			ResourceVersion: u.GetResourceVersion(), OwnerReferences: u.GetOwnerReferences(),
		},
		// The encoder's buffer has room to spare (a third on average);
		// the cache keeps the text for as long as the object lives.
		raw: bytes.Clone(raw),
	}
	if s.app == "" {
		return s, nil
	}
	if judge.health != nil {
		s.health = judge.health(u)
	}
	if judge.fingerprint != nil {
		s.fingerprint = judge.fingerprint(u)
	}
	return s, nil
}

// storeMetadata encodes an object of kind gvk that a metadata-only watch
// delivered, without its managedFields (as trim leaves an untracked
// object), and returns the Application its metadata names as its owner.
func storeMetadata(gvk schema.GroupVersionKind, m *metav1.PartialObjectMetadata, tracking Tracking) (*stored, string, error) {
	m.ManagedFields = nil
	m.APIVersion, m.Kind = gvk.ToAPIVersionAndKind()
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, "", fmt.Errorf("encoding %s %s/%s: %w", gvk.Kind, m.Namespace, m.Name, err)
	}
	return &stored{
		key: ResourceKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: m.Namespace, Name: m.Name},
		meta: metav1.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID,
			ResourceVersion: m.ResourceVersion, OwnerReferences: m.OwnerReferences,
		},
		raw:     raw,
		partial: true,
	}, owningApp(gvk, m, tracking), nil
}

// object decodes the stored object; each call returns a new copy, which
// the caller may modify.
func (s *stored) object() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(s.raw); err != nil {
		// raw was encoded from an object with its kind set, so this does
		// not happen; the key still names what the cache holds.
		u = &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: s.key.Group, Kind: s.key.Kind})
		u.SetNamespace(s.key.Namespace)
		u.SetName(s.key.Name)
	}
	return u
}

func (s *stored) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject returns s itself: a stored object is never modified.
func (s *stored) DeepCopyObject() runtime.Object { return s }

// GetObjectMeta serves the informer's key function (meta.Accessor).
func (s *stored) GetObjectMeta() metav1.Object { return &s.meta }
