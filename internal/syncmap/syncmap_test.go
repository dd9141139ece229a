package syncmap

import "testing"

func TestMap(t *testing.T) {
	var m Map[string, int]
	if v, ok := m.Load("a"); ok || v != 0 {
		t.Errorf("Load of an empty map = %d, %v; want 0, false", v, ok)
	}
	m.Store("a", 1)
	if v, ok := m.Load("a"); !ok || v != 1 {
		t.Errorf("Load after Store = %d, %v; want 1, true", v, ok)
	}
	if prev, ok := m.Swap("a", 2); !ok || prev != 1 {
		t.Errorf("Swap = %d, %v; want the previous 1, true", prev, ok)
	}
	if prev, ok := m.Swap("b", 3); ok || prev != 0 {
		t.Errorf("Swap of a new key = %d, %v; want 0, false", prev, ok)
	}
	if m.CompareAndDelete("a", 1) {
		t.Error("CompareAndDelete dropped a value that had changed")
	}
	if !m.CompareAndDelete("a", 2) {
		t.Error("CompareAndDelete kept a value that had not changed")
	}
	if v, ok := m.LoadAndDelete("b"); !ok || v != 3 {
		t.Errorf("LoadAndDelete = %d, %v; want 3, true", v, ok)
	}
	m.Store("c", 4)
	m.Delete("c")
	for _, key := range []string{"a", "b", "c"} {
		if _, ok := m.Load(key); ok {
			t.Errorf("%s is still there", key)
		}
	}
	if v, ok := m.LoadAndDelete("c"); ok || v != 0 {
		t.Errorf("LoadAndDelete of a dropped key = %d, %v; want 0, false", v, ok)
	}
}
