package kubeclient

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	restclientwatch "k8s.io/client-go/rest/watch"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func testScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return scheme
}

// An Application as the API server answered a status write in the
// benchmark (bench/apps), managedFields, history and operation state
// included.
func answeredApplication(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../api/v1alpha1/testdata/decode/api-server-answer.json")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

func TestApplicationsDecodeAsTheAPIMachineryDecodesThem(t *testing.T) {
	app := answeredApplication(t)
	tests := map[string]struct {
		doc string
		// into returns the object to decode into; nil for none.
		into func() runtime.Object
		// wantType is the type of the decoded object.
		wantType string
		wantErr  bool
	}{
		"an Application into an Application": {
			doc: app, into: func() runtime.Object { return &v1alpha1.Application{} }, wantType: "*v1alpha1.Application",
		},
		"an Application into nothing": {
			doc: app, wantType: "*v1alpha1.Application",
		},
		"an Application into one holding another": {
			doc: app, into: func() runtime.Object {
				return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "old", Labels: map[string]string{"stale": "yes"}}}
			}, wantType: "*v1alpha1.Application",
		},
		"an Application whose kind is not its second name": {
			doc:  `{"metadata":{"name":"a","namespace":"argocd"},"spec":{"project":"default"},"kind":"Application","apiVersion":"argoproj.io/v1alpha1"}`,
			into: func() runtime.Object { return &v1alpha1.Application{} }, wantType: "*v1alpha1.Application",
		},
		"a list of Applications into nothing": {
			doc:      `{"apiVersion":"argoproj.io/v1alpha1","kind":"ApplicationList","metadata":{"resourceVersion":"42"},"items":[` + app + `,` + app + `]}`,
			wantType: "*v1alpha1.ApplicationList",
		},
		"a list of Applications into a list": {
			doc:  `{"apiVersion":"argoproj.io/v1alpha1","kind":"ApplicationList","metadata":{"resourceVersion":"42","continue":"x"},"items":[]}`,
			into: func() runtime.Object { return &v1alpha1.ApplicationList{} }, wantType: "*v1alpha1.ApplicationList",
		},
		"a watch event's envelope": {
			doc:  `{"type":"MODIFIED","object":` + app + `}`,
			into: func() runtime.Object { return &metav1.WatchEvent{} }, wantType: "*v1.WatchEvent",
		},
		"a bookmark": {
			doc:      `{"kind":"Application","apiVersion":"argoproj.io/v1alpha1","metadata":{"resourceVersion":"12746","annotations":{"k8s.io/initial-events-end":"true"}}}`,
			wantType: "*v1alpha1.Application",
		},
		"a Status answer into nothing": {
			doc:      `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version","reason":"Expired","code":410}`,
			wantType: "*v1.Status",
		},
		"a Status answer into a Status": {
			doc:  `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"Conflict","code":409}`,
			into: func() runtime.Object { return &metav1.Status{} }, wantType: "*v1.Status",
		},
		"a Status answer into an Application": {
			doc:  `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"Conflict","code":409}`,
			into: func() runtime.Object { return &v1alpha1.Application{} }, wantType: "*v1.Status",
		},
		"an Application with a spec field of the wrong type": {
			doc:  `{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"a"},"spec":{"project":5}}`,
			into: func() runtime.Object { return &v1alpha1.Application{} }, wantErr: true,
		},
		"a document cut short": {
			doc:  app[:len(app)/2],
			into: func() runtime.Object { return &v1alpha1.Application{} }, wantErr: true,
		},
	}
	scheme := testScheme(t)
	codecs, err := newApplicationCodecs(scheme)
	if err != nil {
		t.Fatal(err)
	}
	ours := codecs.DecoderToVersion(codecs.info.Serializer, v1alpha1.GroupVersion)
	// The reference: what controller-runtime's typed clients decode with.
	standard := serializer.NewCodecFactory(scheme).WithoutConversion()
	json, _ := runtime.SerializerInfoForMediaType(standard.SupportedMediaTypes(), runtime.ContentTypeJSON)
	reference := standard.DecoderToVersion(json.Serializer, v1alpha1.GroupVersion)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var into, referenceInto runtime.Object
			if tc.into != nil {
				into, referenceInto = tc.into(), tc.into()
				zero(referenceInto) // as controller-runtime's typed clients do
			}
			got, _, gotErr := ours.Decode([]byte(tc.doc), nil, into)
			want, _, wantErr := reference.Decode([]byte(tc.doc), nil, referenceInto)
			if (gotErr != nil) != tc.wantErr || (wantErr != nil) != tc.wantErr {
				t.Fatalf("errors %v and, from the API machinery, %v; want an error: %v", gotErr, wantErr, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if typ := reflect.TypeOf(got).String(); typ != tc.wantType {
				t.Errorf("decoded a %s, want a %s", typ, tc.wantType)
			}
			if into != nil && tc.wantType == reflect.TypeOf(into).String() && got != into {
				t.Errorf("decoded into a new object instead of the one given")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded\n%+v\nthe API machinery decoded\n%+v", got, want)
			}
		})
	}
}

func zero(obj runtime.Object) {
	v := reflect.ValueOf(obj).Elem()
	v.SetZero()
}

func TestKindOfReadsTheKindANameGives(t *testing.T) {
	tests := map[string]struct {
		doc, want string
	}{
		"kind second":                        {doc: `{"apiVersion":"v1","kind":"Status","code":1}`, want: "Status"},
		"kind after a large object":          {doc: `{"metadata":{"a":{"b":[1,2,{"kind":"Inner"}]}},"kind":"Application"}`, want: "Application"},
		"no kind":                            {doc: `{"apiVersion":"v1"}`},
		"a kind that is not a string":        {doc: `{"kind":5}`},
		"not an object":                      {doc: `["kind","Application"]`},
		"cut short before the kind":          {doc: `{"apiVersion":"v1",`},
		"a kind inside another name's value": {doc: `{"spec":{"kind":"Application"}}`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := kindOf([]byte(tc.doc)); got != tc.want {
				t.Errorf("kindOf = %q, want %q", got, tc.want)
			}
		})
	}
}

// BenchmarkApplicationWatchEvents decodes one watch event of an Application
// as the informer does, with the API machinery's codecs (the baseline) and
// with Skiff's.
func BenchmarkApplicationWatchEvents(b *testing.B) {
	data, err := os.ReadFile("../../api/v1alpha1/testdata/decode/api-server-answer.json")
	if err != nil {
		b.Fatal(err)
	}
	event := []byte(`{"type":"MODIFIED","object":` + strings.TrimSpace(string(data)) + "}\n")
	scheme := testScheme(b)
	ours, err := newApplicationCodecs(scheme)
	if err != nil {
		b.Fatal(err)
	}
	for name, codecs := range map[string]runtime.NegotiatedSerializer{
		"api-machinery": serializer.NewCodecFactory(scheme).WithoutConversion(),
		"skiff":         ours,
	} {
		b.Run(name, func(b *testing.B) {
			info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
			objects := codecs.DecoderToVersion(info.Serializer, v1alpha1.GroupVersion)
			b.ReportAllocs()
			for b.Loop() {
				frames := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(event)))
				events := restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), objects)
				typ, obj, err := events.Decode()
				if err != nil || typ != "MODIFIED" {
					b.Fatalf("decoded %s, %v", typ, err)
				}
				if _, ok := obj.(*v1alpha1.Application); !ok {
					b.Fatalf("decoded a %T", obj)
				}
			}
		})
	}
}
