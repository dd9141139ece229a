// Package syncmap is sync.Map with typed keys and values: the casts from
// any live here, once, instead of at every caller.
package syncmap

import "sync"

// Map is a sync.Map whose keys are K and values V. The zero Map is empty
// and ready to use; a Map must not be copied after first use.
type Map[K comparable, V any] struct {
	m sync.Map
}

// Load returns the value stored for key, and whether there is one.
func (m *Map[K, V]) Load(key K) (V, bool) {
	v, ok := m.m.Load(key)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// Store sets the value for key.
func (m *Map[K, V]) Store(key K, value V) { m.m.Store(key, value) }

// Swap stores value for key and returns the previous value, if any.
func (m *Map[K, V]) Swap(key K, value V) (V, bool) {
	prev, ok := m.m.Swap(key, value)
	if !ok {
		var zero V
		return zero, false
	}
	return prev.(V), true
}

// Delete drops key.
func (m *Map[K, V]) Delete(key K) { m.m.Delete(key) }

// LoadAndDelete drops key and returns its value, if it had one.
func (m *Map[K, V]) LoadAndDelete(key K) (V, bool) {
	v, ok := m.m.LoadAndDelete(key)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// CompareAndDelete drops key if its value is still old (V must be a
// comparable type); it reports whether it did.
func (m *Map[K, V]) CompareAndDelete(key K, old V) bool { return m.m.CompareAndDelete(key, old) }
