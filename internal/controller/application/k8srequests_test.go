package application

import (
	"net/http"
	"testing"
)

func TestParseRequestReadsVerbResourceAndNamespaceFromTheURL(t *testing.T) {
	tests := map[string]struct {
		method, path string
		watch        bool
		want         requestInfo
	}{
		"a get of a namespaced core object": {
			method: http.MethodGet, path: "/api/v1/namespaces/web/configmaps/settings",
			want: requestInfo{verb: "Get", resource: "configmaps", namespace: "web"}},
		"a list of a group's objects in a namespace": {
			method: http.MethodGet, path: "/apis/apps/v1/namespaces/web/deployments",
			want: requestInfo{verb: "List", resource: "deployments", namespace: "web"}},
		"a watch is a watch, not a list": {
			method: http.MethodGet, path: "/apis/apps/v1/namespaces/web/deployments", watch: true,
			want: requestInfo{verb: "Watch", resource: "deployments", namespace: "web"}},
		"a server-side apply is a patch": {
			method: http.MethodPatch, path: "/apis/apps/v1/namespaces/web/deployments/shop",
			want: requestInfo{verb: "Patch", resource: "deployments", namespace: "web"}},
		"a create posts to the collection": {
			method: http.MethodPost, path: "/apis/batch/v1/namespaces/web/jobs",
			want: requestInfo{verb: "Create", resource: "jobs", namespace: "web"}},
		"an update of a subresource is of its resource": {
			method: http.MethodPut, path: "/apis/apps/v1/namespaces/web/deployments/shop/status",
			want: requestInfo{verb: "Update", resource: "deployments", namespace: "web"}},
		"a delete of a cluster-scoped object has no namespace": {
			method: http.MethodDelete, path: "/apis/rbac.authorization.k8s.io/v1/clusterroles/reader",
			want: requestInfo{verb: "Delete", resource: "clusterroles"}},
		"a namespace itself is of resource namespaces and in no namespace": {
			method: http.MethodGet, path: "/api/v1/namespaces/web",
			want: requestInfo{verb: "Get", resource: "namespaces"}},
		"a namespace created is of resource namespaces": {
			method: http.MethodPost, path: "/api/v1/namespaces",
			want: requestInfo{verb: "Create", resource: "namespaces"}},
		"discovery is Unknown": {
			method: http.MethodGet, path: "/apis",
			want: requestInfo{verb: "Unknown"}},
		"a method Kubernetes does not use is Unknown": {
			method: http.MethodHead, path: "/api/v1/namespaces/web/pods/p",
			want: requestInfo{verb: "Unknown", resource: "pods", namespace: "web"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := parseRequest(tc.method, tc.path, tc.watch); got != tc.want {
				t.Errorf("parseRequest(%s %s) = %+v, want %+v", tc.method, tc.path, got, tc.want)
			}
		})
	}
}
