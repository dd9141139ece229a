package kubeclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Applications are decoded here without the API machinery's JSON
// serializer. Every status write of the controller comes back twice, as
// the write's answer and as a watch event, each a whole Application of
// about 6 KB. The serializer reads such a document five times over before
// decoding it (a validity check and a skim to find its kind, then a
// validity check and a skip to reach the type's decoder); the watch
// event's envelope is read twice more. Here the kind is read from the
// document's first names, the envelope and the Application are each read
// once (Application.UnmarshalJSON), and anything else (Status answers of
// failed requests) goes to the API machinery as before.

// applicationSerializer decodes Applications, ApplicationLists and watch
// events of Applications; it hands everything else to fallback, and
// encodes with encoder.
type applicationSerializer struct {
	fallback runtime.Decoder
	encoder  runtime.Encoder
}

var _ runtime.Serializer = applicationSerializer{}

func (s applicationSerializer) Identifier() runtime.Identifier {
	return "skiff-applications-json"
}

func (s applicationSerializer) Encode(obj runtime.Object, w io.Writer) error {
	return s.encoder.Encode(obj, w)
}

// Decode reads data into into, or into a new object of the kind data
// names when into is nil. As controller-runtime's typed clients do, it
// zeroes into first and leaves the decoded object's type meta empty. A
// document of another kind than into's goes to the fallback, which
// answers as before.
func (s applicationSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if event, ok := into.(*metav1.WatchEvent); ok {
		*event = metav1.WatchEvent{}
		if jsonv2.Unmarshal(data, event) != nil {
			return s.fallback.Decode(data, defaults, into)
		}
		return event, nil, nil
	}
	kind := kindOf(data)
	if into == nil {
		switch kind {
		case "Application":
			into = &v1alpha1.Application{}
		case "ApplicationList":
			into = &v1alpha1.ApplicationList{}
		}
	}
	var err error
	switch target := into.(type) {
	case *v1alpha1.Application:
		if kind != "Application" {
			return s.fallback.Decode(data, defaults, into)
		}
		*target = v1alpha1.Application{}
		err = target.UnmarshalJSON(data)
	case *v1alpha1.ApplicationList:
		if kind != "ApplicationList" {
			return s.fallback.Decode(data, defaults, into)
		}
		*target = v1alpha1.ApplicationList{}
		err = target.UnmarshalJSON(data)
	default:
		return s.fallback.Decode(data, defaults, into)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("decoding %s: %w", kind, err)
	}
	gvk := into.GetObjectKind().GroupVersionKind()
	into.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return into, &gvk, nil
}

// kindOf returns the kind a JSON object names, reading its names only
// until "kind" (the API server writes it second); "" when it names none.
func kindOf(data []byte) string {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return ""
		}
		if name.String() != "kind" {
			if dec.SkipValue() != nil {
				return ""
			}
			continue
		}
		value, err := dec.ReadToken()
		if err != nil || value.Kind() != '"' {
			return ""
		}
		return value.String()
	}
	return ""
}

// applicationCodecs negotiates JSON only, decoding with
// applicationSerializer and encoding as the API machinery does.
type applicationCodecs struct {
	standard runtime.NegotiatedSerializer
	info     runtime.SerializerInfo
}

func newApplicationCodecs(scheme *runtime.Scheme) (applicationCodecs, error) {
	standard := serializer.NewCodecFactory(scheme).WithoutConversion()
	json, ok := runtime.SerializerInfoForMediaType(standard.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok || json.StreamSerializer == nil {
		return applicationCodecs{}, fmt.Errorf("the scheme's codecs serve no JSON stream")
	}
	// The fallback decodes as the rest client would with the standard
	// codecs: without conversion, leaving type meta empty.
	ours := applicationSerializer{fallback: standard.DecoderToVersion(json.Serializer, v1alpha1.GroupVersion), encoder: json.Serializer}
	info := json
	info.Serializer = ours
	info.PrettySerializer = nil
	info.StrictSerializer = nil
	stream := *json.StreamSerializer
	stream.Serializer = ours
	stream.Framer = jsonFramer{}
	info.StreamSerializer = &stream
	return applicationCodecs{standard: standard, info: info}, nil
}

func (c applicationCodecs) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{c.info}
}

func (c applicationCodecs) EncoderForVersion(encoder runtime.Encoder, gv runtime.GroupVersioner) runtime.Encoder {
	return c.standard.EncoderForVersion(encoder, gv)
}

func (c applicationCodecs) DecoderToVersion(decoder runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return decoder
}

// NewApplicationREST returns a REST client for argoproj.io/v1alpha1 that
// decodes Applications as described at the top of this file. It shares
// httpClient's connections.
func NewApplicationREST(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme) (rest.Interface, error) {
	codecs, err := newApplicationCodecs(scheme)
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &v1alpha1.GroupVersion
	cfg.APIPath = "/apis"
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.AcceptContentTypes = runtime.ContentTypeJSON
	cfg.NegotiatedSerializer = codecs
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientForConfigAndClient(cfg, httpClient)
}

// Applications wires Applications' own client into a controller-runtime
// manager, so that skiff server and the controller's tests read and write
// them the same way.
type Applications struct {
	// REST is the client from NewApplicationREST.
	REST       rest.Interface
	httpClient *http.Client
}

// NewApplications builds the HTTP client the manager's client and cache
// will share with REST.
func NewApplications(cfg *rest.Config, scheme *runtime.Scheme) (*Applications, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the HTTP client: %w", err)
	}
	applications, err := NewApplicationREST(cfg, httpClient, scheme)
	if err != nil {
		return nil, fmt.Errorf("building the Applications' client: %w", err)
	}
	return &Applications{REST: applications, httpClient: httpClient}, nil
}

// ConfigureManager makes the manager's client and cache share the HTTP
// client, and its cache list and watch Applications through REST: those
// of the cache's namespace when its DefaultNamespaces name exactly one (a
// namespaced install may list nothing else), else of every namespace. Set
// the cache's namespaces first.
func (a *Applications) ConfigureManager(opts *manager.Options) {
	opts.Client.HTTPClient = a.httpClient
	opts.Cache.HTTPClient = a.httpClient
	namespace := metav1.NamespaceAll
	if len(opts.Cache.DefaultNamespaces) == 1 {
		for ns := range opts.Cache.DefaultNamespaces {
			namespace = ns
		}
	}
	opts.Cache.NewInformer = NewInformerFunc(a.REST, namespace)
}

// Writes returns c with its patches of Applications going through REST
// (ApplicationWrites).
func (a *Applications) Writes(c client.Client) *ApplicationWrites {
	return NewApplicationWrites(c, a.REST)
}

// ApplicationListWatch lists and watches the Applications of namespace
// (metav1.NamespaceAll: of every namespace) through applications, a client
// from NewApplicationREST.
func ApplicationListWatch(applications rest.Interface, namespace string) toolscache.ListerWatcher {
	return toolscache.NewListWatchFromClient(applications, "applications", namespace, fields.Everything())
}

// NewInformerFunc returns a cache.Options.NewInformer that lists and
// watches the Applications of namespace through applications (see
// ApplicationListWatch) and builds every other informer as
// controller-runtime does. The cache must not restrict Applications by
// selector, nor by namespace other than this one: the list-watch it passes
// for them, which would apply the restriction, is not used.
func NewInformerFunc(applications rest.Interface, namespace string) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if _, ok := obj.(*v1alpha1.Application); ok {
			lw = ApplicationListWatch(applications, namespace)
		}
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
}

// ApplicationWrites is a client.Client whose patches of Applications go
// through a client from NewApplicationREST, so that their answers are
// decoded as described at the top of this file; everything else goes to
// the client it wraps.
type ApplicationWrites struct {
	client.Client
	applications rest.Interface
	params       runtime.ParameterCodec
}

// NewApplicationWrites wraps c; applications is a client from
// NewApplicationREST.
func NewApplicationWrites(c client.Client, applications rest.Interface) *ApplicationWrites {
	return &ApplicationWrites{Client: c, applications: applications, params: runtime.NewParameterCodec(c.Scheme())}
}

// Patch patches obj as controller-runtime's typed client does, and reads
// the answer into obj.
func (c *ApplicationWrites) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	app, ok := obj.(*v1alpha1.Application)
	if !ok {
		return c.Client.Patch(ctx, obj, patch, opts...)
	}
	data, err := patch.Data(app)
	if err != nil {
		return err
	}
	patchOpts := &client.PatchOptions{}
	patchOpts.ApplyOptions(opts)
	return c.applications.Patch(patch.Type()).
		Namespace(app.Namespace).
		Resource("applications").
		Name(app.Name).
		VersionedParams(patchOpts.AsPatchOptions(), c.params).
		Body(data).
		Do(ctx).
		Into(app)
}
