// Package digest hashes lists of strings into fixed-size keys for caches
// that must tell their inputs apart without holding them.
package digest

import (
	"crypto/sha256"
	"encoding/binary"
)

// Strings returns the SHA-256 of fields, each written after its length, so
// that ("a/b", "c") and ("a", "b/c") differ.
func Strings(fields ...string) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for _, f := range fields {
		binary.LittleEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
