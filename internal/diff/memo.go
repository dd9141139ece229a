package diff

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"math"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Memo remembers Modified's last answers for each object of each owner (an
// Application), with a fingerprint of everything an answer depends on:
// the desired object, the live object and the options. Most comparisons
// see the same pair again (a poll of an unchanged app; a sync asking which
// objects its comparison found changed), and hashing the pair costs a
// fraction of merging and comparing it with its schema. It holds the last
// two answers for each object an owner has asked about, until Forget: a
// comparison and the sync after it ask about the same live object with
// desired objects that differ (a sync's carries the tracking annotation).
type Memo struct {
	mu      sync.Mutex
	answers map[string]map[string]*[2]memoAnswer
	// compare is Modified, replaced in tests to count what is computed.
	compare func(desired, live *unstructured.Unstructured, opts Options) (bool, error)
}

type memoAnswer struct {
	inputs   [sha256.Size]byte
	modified bool
	known    bool // false in a slot not yet filled
}

// Modified answers as the package's Modified does, from the memo when the
// owner asked about the same object with the same inputs in one of its
// last two questions.
// Errors are not remembered.
func (m *Memo) Modified(owner, object string, desired, live *unstructured.Unstructured, opts Options) (bool, error) {
	compare := m.compare
	if compare == nil {
		compare = Modified
	}
	if desired == nil || live == nil {
		return compare(desired, live, opts) // no merge to save
	}
	inputs, err := fingerprint(desired, live, opts)
	if err != nil {
		return compare(desired, live, opts)
	}
	m.mu.Lock()
	if last := m.answers[owner][object]; last != nil {
		for _, a := range last {
			if a.known && a.inputs == inputs {
				m.mu.Unlock()
				return a.modified, nil
			}
		}
	}
	m.mu.Unlock()
	modified, err := compare(desired, live, opts)
	if err != nil {
		return modified, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.answers == nil {
		m.answers = map[string]map[string]*[2]memoAnswer{}
	}
	if m.answers[owner] == nil {
		m.answers[owner] = map[string]*[2]memoAnswer{}
	}
	last := m.answers[owner][object]
	if last == nil {
		last = &[2]memoAnswer{}
		m.answers[owner][object] = last
	}
	last[1], last[0] = last[0], memoAnswer{inputs: inputs, modified: modified, known: true}
	return modified, nil
}

// Forget drops the owner's answers (its Application is gone).
func (m *Memo) Forget(owner string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.answers, owner)
}

// fingerprint hashes Modified's inputs: both objects' contents in a
// canonical form (map keys sorted; every value tagged with its type and
// every string and collection with its length, so that no two different
// inputs write the same bytes) and the options.
func fingerprint(desired, live *unstructured.Unstructured, opts Options) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	w := &canonicalWriter{h: sha256.New()}
	rules, err := json.Marshal(opts.IgnoreDifferences)
	if err != nil {
		return sum, fmt.Errorf("encoding the ignore rules: %w", err)
	}
	w.string(string(rules))
	known, err := json.Marshal(opts.KnownTypeFields)
	if err != nil {
		return sum, fmt.Errorf("encoding the known type fields: %w", err)
	}
	w.string(string(known))
	w.string(opts.manager())
	if err := w.value(desired.Object); err != nil {
		return sum, err
	}
	if err := w.value(live.Object); err != nil {
		return sum, err
	}
	w.flush()
	w.h.Sum(sum[:0])
	return sum, nil
}

// canonicalWriter writes unstructured values into a hash through a small
// buffer (a Write per scalar would cost more than the hashing).
type canonicalWriter struct {
	h   hash.Hash
	buf [512]byte
	n   int
}

func (w *canonicalWriter) byte(b byte) {
	if w.n == len(w.buf) {
		w.flush()
	}
	w.buf[w.n] = b
	w.n++
}

func (w *canonicalWriter) uint64(v uint64) {
	if w.n+8 > len(w.buf) {
		w.flush()
	}
	binary.BigEndian.PutUint64(w.buf[w.n:], v)
	w.n += 8
}

func (w *canonicalWriter) string(s string) {
	w.uint64(uint64(len(s)))
	for len(s) > 0 {
		if w.n == len(w.buf) {
			w.flush()
		}
		c := copy(w.buf[w.n:], s)
		w.n += c
		s = s[c:]
	}
}

func (w *canonicalWriter) flush() {
	w.h.Write(w.buf[:w.n])
	w.n = 0
}

func (w *canonicalWriter) value(v any) error {
	switch v := v.(type) {
	case nil:
		w.byte('n')
	case bool:
		w.byte('b')
		if v {
			w.byte(1)
		} else {
			w.byte(0)
		}
	case string:
		w.byte('s')
		w.string(v)
	case int64:
		w.byte('i')
		w.uint64(uint64(v))
	case float64:
		w.byte('f')
		w.uint64(math.Float64bits(v))
	case map[string]any:
		w.byte('m')
		w.uint64(uint64(len(v)))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			w.string(k)
			if err := w.value(v[k]); err != nil {
				return err
			}
		}
	case []any:
		w.byte('l')
		w.uint64(uint64(len(v)))
		for _, e := range v {
			if err := w.value(e); err != nil {
				return err
			}
		}
	default:
		// Not what decoding JSON yields; its JSON, tagged with its type, is
		// still a faithful fingerprint.
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("fingerprinting a %T: %w", v, err)
		}
		w.byte('j')
		w.string(fmt.Sprintf("%T", v))
		w.string(string(b))
	}
	return nil
}
