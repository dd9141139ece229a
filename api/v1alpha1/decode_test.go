package v1alpha1

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// Without their UnmarshalJSON methods, to decode them either way.
type (
	plainApplication Application
	plainStatus      ApplicationStatus
)

// fixtureDocuments returns every document of testdata/decode as JSON, by
// file and position.
func fixtureDocuments(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/decode/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	docs := map[string][]byte{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, part := range bytes.Split(data, []byte("\n---\n")) {
			doc, err := yaml.YAMLToJSON(part)
			if err != nil {
				t.Fatalf("%s, document %d: %v", file, i, err)
			}
			docs[filepath.Base(file)+"#"+string(rune('0'+i))] = doc
		}
	}
	return docs
}

func TestTheFastDecoderReadsWhatTheAPIMachineryReads(t *testing.T) {
	for name, doc := range fixtureDocuments(t) {
		t.Run(name, func(t *testing.T) {
			decodeBothWays[plainApplication](t, "the Application", doc)

			// Both read the status through ApplicationStatus.UnmarshalJSON,
			// which decodes fast too: compare the status on its own.
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(doc, &fields); err != nil {
				t.Fatal(err)
			}
			if status, ok := fields["status"]; ok {
				decodeBothWays[plainStatus](t, "the status", status)
			}
		})
	}
}

// decodeBothWays decodes doc into a T with the fast decoder and with the
// API machinery's, and fails the test unless both succeed alike.
func decodeBothWays[T any](t *testing.T, what string, doc []byte) {
	t.Helper()
	var fast, reference T
	if err := jsonv2.Unmarshal(doc, &fast, fastDecoding); err != nil {
		t.Fatalf("the fast decoder failed on %s, so this fixture tests nothing: %v", what, err)
	}
	if err := utiljson.Unmarshal(doc, &reference); err != nil {
		t.Fatalf("the API machinery's decoder failed on %s: %v", what, err)
	}
	if !reflect.DeepEqual(fast, reference) {
		t.Errorf("the decoders disagree on %s:\nfast:      %+v\nreference: %+v", what, fast, reference)
	}
}

func TestApplicationDecodingMatchesTheAPIMachineryOnOddInput(t *testing.T) {
	tests := map[string]struct {
		doc string
	}{
		"a repeated name keeps the last value": {
			doc: `{"metadata":{"name":"a","name":"b"},"spec":{"project":"x","project":"y"}}`,
		},
		"names differing in case are unknown fields": {
			doc: `{"metadata":{"Name":"a"},"Spec":{"project":"x"},"spec":{"Project":"y"}}`,
		},
		"invalid UTF-8 is kept as replacement characters": {
			doc: "{\"metadata\":{\"name\":\"a\xff\"}}",
		},
		"a field of the wrong type fails as before": {
			doc: `{"metadata":{"name":"a"},"spec":{"project":5}}`,
		},
		"an integer written with an exponent fails as before": {
			doc: `{"spec":{"revisionHistoryLimit":1e1}}`,
		},
		"a fraction for an integer fails as before": {
			doc: `{"spec":{"revisionHistoryLimit":1.5}}`,
		},
		"an integer too large fails as before": {
			doc: `{"spec":{"revisionHistoryLimit":99999999999999999999}}`,
		},
		"null leaves fields empty": {
			doc: `{"metadata":null,"spec":{"source":null,"syncPolicy":{"automated":null}},"operation":null,"status":null}`,
		},
		"a string for a time fails as before": {
			doc: `{"metadata":{"creationTimestamp":"yesterday"}}`,
		},
		"a number for a quantity-like string fails as before": {
			doc: `{"spec":{"source":{"targetRevision":1}}}`,
		},
		"a document that is not an object fails as before": {
			doc: `["a"]`,
		},
		"a truncated document fails as before": {
			doc: `{"metadata":{"name":"a"}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got Application
			gotErr := json.Unmarshal([]byte(tc.doc), &got)
			var want plainApplication
			wantErr := utiljson.Unmarshal([]byte(tc.doc), &want)
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("error %v, want %v", gotErr, wantErr)
			}
			if wantErr != nil {
				return // json.Unmarshal wraps nothing, but checks the document first
			}
			if !reflect.DeepEqual(plainApplication(got), want) {
				t.Errorf("decoded %+v, want %+v", got, want)
			}
		})
	}
}
