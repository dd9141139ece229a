package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// AnyString is a string field that users often write as a bare YAML number or
// boolean (`value: 9090` in an AnalysisTemplate argument). It accepts any JSON
// scalar, keeps its text, and always writes a string. Fields of this type
// carry the markers `+kubebuilder:validation:Schemaless` and
// `+kubebuilder:pruning:PreserveUnknownFields` so the API server accepts any
// scalar.
//
// It is a struct, not a named string, so that the unstructured converter
// (informers, dynamic clients) goes through UnmarshalJSON too.
type AnyString struct {
	text string
}

// NewAnyString returns an AnyString holding s.
func NewAnyString(s string) *AnyString { return &AnyString{text: s} }

// String returns the text of the value; a nil AnyString is empty.
func (s *AnyString) String() string {
	if s == nil {
		return ""
	}
	return s.text
}

// MarshalJSON writes the value as a JSON string.
func (s AnyString) MarshalJSON() ([]byte, error) { return json.Marshal(s.text) }

// UnmarshalJSON accepts a JSON string, number or boolean.
func (s *AnyString) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		return json.Unmarshal(data, &s.text)
	}
	var scalar any
	if err := json.Unmarshal(data, &scalar); err != nil {
		return err
	}
	switch scalar.(type) {
	case nil:
		s.text = ""
	case float64, bool:
		s.text = string(data)
	default:
		return fmt.Errorf("expected a string, number or boolean, got %s", data)
	}
	return nil
}
