package clustercli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/internal/clusterops"
	"github.com/skiffcd/skiff/internal/clusters"
)

func TestWriteList(t *testing.T) {
	cluster := func(name, server, version, status, message string, apps ...string) clusterops.Cluster {
		return clusterops.Cluster{Name: name, Server: server, ServerVersion: version, Applications: apps,
			ConnectionState: clusterops.ConnectionState{Status: status, Message: message}}
	}
	tests := map[string]struct {
		list           clusterops.List
		want, warnings string
	}{
		"clusters show their version, connection state and apps, as argocd cluster list": {
			list: clusterops.List{Items: []clusterops.Cluster{
				cluster("in-cluster", "https://kubernetes.default.svc", "1.35", clusters.ConnectionSuccessful, "", "guestbook", "web"),
				cluster("east", "https://east.example.com", "1.34", clusters.ConnectionFailed, "Get \"https://east.example.com/version\":\n  connection refused", "shop"),
				cluster("idle", "https://idle.example.com", "", clusters.ConnectionUnknown, clusters.NotMonitored),
			}},
			want: `SERVER                           NAME         VERSION   STATUS       MESSAGE                                                      PROJECT   APPS
https://kubernetes.default.svc   in-cluster   1.35      Successful                                                                          2
https://east.example.com         east         1.34      Failed       Get "https://east.example.com/version": connection refused             1
https://idle.example.com         idle                   Unknown      Cluster has no applications and is not being monitored.                0
`,
		},
		"Secrets that cannot be read are warned of after the table": {
			list:     clusterops.List{Invalid: []string{`cluster Secret argocd/bad: key "server" is missing`}},
			want:     "SERVER   NAME   VERSION   STATUS   MESSAGE   PROJECT   APPS\n",
			warnings: "warning: cluster Secret argocd/bad: key \"server\" is missing\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out, warnings bytes.Buffer
			if err := WriteList(&out, &warnings, tc.list); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", strings.ReplaceAll(out.String(), " ", "·"), strings.ReplaceAll(tc.want, " ", "·"))
			}
			if warnings.String() != tc.warnings {
				t.Errorf("warnings %q, want %q", warnings.String(), tc.warnings)
			}
		})
	}
}
