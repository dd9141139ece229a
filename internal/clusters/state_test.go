package clusters

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMergeStates(t *testing.T) {
	early, late := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	ok := func(server string, apps, resources int, synced *metav1.Time) State {
		return State{Server: server, Info: Info{ConnectionState: ConnectionState{Status: ConnectionSuccessful},
			ServerVersion: "1.35", ApplicationsCount: apps,
			CacheInfo: CacheInfo{ResourcesCount: resources, APIsCount: 10, LastCacheSyncTime: synced}}}
	}
	failed := State{Server: "https://b", Info: Info{ConnectionState: ConnectionState{Status: ConnectionFailed, Message: "connection refused"},
		ApplicationsCount: 2}}
	tests := map[string]struct {
		reports [][]State
		want    []State
	}{
		"one replica's states are kept as they are, in server order": {
			reports: [][]State{{ok("https://b", 1, 5, &early), ok("https://a", 2, 7, &late)}},
			want:    []State{ok("https://a", 2, 7, &late), ok("https://b", 1, 5, &early)},
		},
		"a cluster split over two replicas sums its apps and keeps the newest, largest cache": {
			reports: [][]State{{ok("https://a", 3, 40, &early)}, {ok("https://a", 4, 42, &late)}},
			want:    []State{ok("https://a", 7, 42, &late)},
		},
		"a replica that cannot reach a cluster makes it Failed, with its message": {
			reports: [][]State{{ok("https://b", 1, 5, &early)}, {failed}},
			want: []State{{Server: "https://b", Info: Info{ConnectionState: failed.Info.ConnectionState, ServerVersion: "1.35",
				ApplicationsCount: 3, CacheInfo: CacheInfo{ResourcesCount: 5, APIsCount: 10, LastCacheSyncTime: &early}}}},
		},
		"clusters of different replicas are listed side by side": {
			reports: [][]State{{ok("https://a", 1, 5, &early)}, {ok("https://c", 2, 6, &late)}, nil},
			want:    []State{ok("https://a", 1, 5, &early), ok("https://c", 2, 6, &late)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := MergeStates(tc.reports...)
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if g.Server != w.Server || g.Info.ConnectionState != w.Info.ConnectionState || g.Info.ServerVersion != w.Info.ServerVersion ||
					g.Info.ApplicationsCount != w.Info.ApplicationsCount || g.Info.CacheInfo.ResourcesCount != w.Info.CacheInfo.ResourcesCount ||
					!g.Info.CacheInfo.LastCacheSyncTime.Equal(w.Info.CacheInfo.LastCacheSyncTime) {
					t.Errorf("state %d: got %+v, want %+v", i, g, w)
				}
			}
		})
	}
}
