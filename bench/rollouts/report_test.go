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
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("table lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("table has %q:\n%s", w, got)
				}
			}
			if lines := strings.Count(got, "\n"); lines != tc.wantLines {
				t.Errorf("table has %d lines, want %d:\n%s", lines, tc.wantLines, got)
			}
		})
	}
}
