package clusterops

import (
	"errors"
	"testing"

	"github.com/skiffcd/skiff/internal/clusters"
)

func TestWithStates(t *testing.T) {
	const prod, dev = "https://prod.example.com", "https://dev.example.com"
	connected := clusters.State{Server: prod, Info: clusters.Info{
		ConnectionState: clusters.ConnectionState{Status: clusters.ConnectionSuccessful}, ServerVersion: "1.35", ApplicationsCount: 2,
		CacheInfo: clusters.CacheInfo{ResourcesCount: 40, APIsCount: 12},
	}}
	type want struct{ status, message, version string }
	tests := map[string]struct {
		states []clusters.State
		err    error
		want   map[string]want
		// prodInfo, when set, is prod's whole info.
		prodInfo *clusters.Info
	}{
		"a cluster with a state takes it, and one without is not monitored": {
			states: []clusters.State{connected}, prodInfo: &connected.Info,
			want: map[string]want{prod: {clusters.ConnectionSuccessful, "", "1.35"},
				dev: {clusters.ConnectionUnknown, clusters.NotMonitored, ""}},
		},
		"states that cannot be read leave every cluster Unknown, saying why": {
			err: errors.New("no controller"),
			want: map[string]want{prod: {clusters.ConnectionUnknown, "connection state unavailable: no controller", ""},
				dev: {clusters.ConnectionUnknown, "connection state unavailable: no controller", ""}},
		},
		"a state of a cluster not listed is ignored": {
			states: []clusters.State{{Server: "https://gone.example.com"}},
			want: map[string]want{prod: {clusters.ConnectionUnknown, clusters.NotMonitored, ""},
				dev: {clusters.ConnectionUnknown, clusters.NotMonitored, ""}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			items := []Cluster{Public(clusters.Cluster{Name: "prod", Server: prod}, nil), Public(clusters.Cluster{Name: "dev", Server: dev}, nil)}
			withStates(items, tc.states, tc.err)
			if len(items) != 2 {
				t.Fatalf("%d items, want 2", len(items))
			}
			for _, c := range items {
				w := tc.want[c.Server]
				got := want{c.ConnectionState.Status, c.ConnectionState.Message, c.ServerVersion}
				if got != w || c.Info.ConnectionState != c.ConnectionState || c.Info.ServerVersion != c.ServerVersion {
					t.Errorf("%s: %+v with info %+v, want %+v repeated in info", c.Server, got, c.Info, w)
				}
			}
			if tc.prodInfo != nil && items[0].Info != *tc.prodInfo {
				t.Errorf("prod's info %+v, want %+v", items[0].Info, *tc.prodInfo)
			}
		})
	}
}
