package main

import (
	"strings"
	"testing"
	"time"
)

func TestTable(t *testing.T) {
	floor := row{name: "floor", create: 10 * time.Second, update: 20 * time.Second, cpu: [3]float64{1, 2, 0.1}, rss: 100}
	argo := row{name: "argo", create: 20 * time.Second, update: 40 * time.Second, cpu: [3]float64{4, 8, 0.2}, rss: 120, apiCPU: [2]float64{2, 4}}
	skiff := row{name: "skiff", create: 10 * time.Second, update: 60 * time.Second, cpu: [3]float64{2, 16, 0}, rss: 60, apiCPU: [2]float64{1, 4}}
	tests := map[string]struct {
		rows      []row
		want      []string
		wantNot   []string
		wantLines int
	}{
		"every run: times against the floor and skiff against Argo Rollouts": {
			rows: []row{floor, argo, skiff},
			want: []string{
				"| N=200 canary | create → all Healthy |",
				"| Argo Rollouts v1.10.2 | 20.0 s | 2.00x | 40.0 s | 2.00x | 4.0 | 8.0 | 0.20 | 120 | 2.0 | 4.0 |",
				"| skiff / Argo Rollouts | 0.50x | | 1.50x | | 0.50x | 2.00x | 0.00x | 0.50x | 0.50x | 1.00x |",
			},
			wantLines: 6,
		},
		"without the floor no time is set against it": {
			rows:      []row{argo, skiff},
			want:      []string{"| skiff server | 10.0 s | - | 60.0 s | - |"},
			wantLines: 5,
		},
		"one controller alone has no ratio line": {
			rows:      []row{floor, skiff},
			wantNot:   []string{"skiff / Argo Rollouts"},
			wantLines: 4,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := table(tc.rows, 200, "canary", 30*time.Second)
			checkParts(t, got, tc.want, tc.wantNot)
			if lines := strings.Count(got, "\n"); lines != tc.wantLines {
				t.Errorf("table has %d lines, want %d:\n%s", lines, tc.wantLines, got)
			}
		})
	}
}

func TestRequestTable(t *testing.T) {
	argo := row{name: "argo", requests: [2]map[string]float64{
		{"CREATE replicasets": 200, "UPDATE rollouts/status": 600, "GET rollouts": 5},
		{"UPDATE rollouts/status": 900},
	}}
	skiff := row{name: "skiff", requests: [2]map[string]float64{
		{"CREATE replicasets": 200, "PATCH rollouts/status": 1000},
		{"PATCH rollouts/status": 2000, "LIST pods": 1},
	}}
	tests := map[string]struct {
		top  int
		want []string
		not  []string
	}{
		"the resources by their largest count, a zero where a run made none, and totals": {
			top: 10,
			want: []string{
				"| API requests (all clients) | argo create | argo update | skiff create | skiff update |\n|---|---|---|---|---|\n" +
					"| PATCH rollouts/status | 0 | 0 | 1000 | 2000 |\n" +
					"| UPDATE rollouts/status | 600 | 900 | 0 | 0 |\n" +
					"| CREATE replicasets | 200 | 0 | 200 | 0 |\n" +
					"| GET rollouts | 5 | 0 | 0 | 0 |\n" +
					"| LIST pods | 0 | 0 | 0 | 1 |\n" +
					"| total | 805 | 900 | 1200 | 2001 |\n",
			},
		},
		"only the top resources are listed; the totals still count all": {
			top:  2,
			want: []string{"| UPDATE rollouts/status |", "| total | 805 | 900 | 1200 | 2001 |"},
			not:  []string{"CREATE replicasets", "LIST pods"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkParts(t, requestTable([]row{argo, skiff}, tc.top), tc.want, tc.not)
		})
	}
}

// checkParts fails unless got holds every want and no not.
func checkParts(t *testing.T, got string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("table lacks %q:\n%s", w, got)
		}
	}
	for _, w := range not {
		if strings.Contains(got, w) {
			t.Errorf("table has %q:\n%s", w, got)
		}
	}
}
