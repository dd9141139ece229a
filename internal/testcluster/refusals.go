package testcluster

import (
	"net/http"
	"sync"
)

// Refusals records the requests an API server refused with 403: set
// Wrap as a rest.Config's WrapTransport (or pass it to Wrap) and read
// List, to show that a client with limited rights asks nothing outside
// them.
type Refusals struct {
	mu       sync.Mutex
	requests []string
}

// Wrap records the 403 answers of rt's requests.
func (r *Refusals) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			r.mu.Lock()
			r.requests = append(r.requests, req.Method+" "+req.URL.Path+"?"+req.URL.RawQuery)
			r.mu.Unlock()
		}
		return resp, err
	})
}

// List returns the refused requests, method, path and query, in order.
func (r *Refusals) List() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
