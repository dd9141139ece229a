package main

import (
	"reflect"
	"testing"
)

func TestAppsPerCluster(t *testing.T) {
	for name, tc := range map[string]struct {
		n, k int
		want []int
	}{
		"one plane holds every app":              {n: 5, k: 1, want: []int{5}},
		"apps are dealt out evenly":              {n: 900, k: 3, want: []int{300, 300, 300}},
		"the first planes take the remainder":    {n: 7, k: 3, want: []int{3, 2, 2}},
		"fewer apps than planes leave some none": {n: 2, k: 3, want: []int{1, 1, 0}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := appsPerCluster(tc.n, tc.k); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("appsPerCluster(%d, %d) = %v, want %v", tc.n, tc.k, got, tc.want)
			}
		})
	}
}

func TestSharesPerCluster(t *testing.T) {
	names := []string{"skiff-r1", "skiff-r2"}
	for name, tc := range map[string]struct {
		owners map[string][]string
		k      int
		want   [][]int
	}{
		"each replica's apps are counted on their plane": {
			owners: map[string][]string{"app-0000": {"skiff-r1"}, "app-0001": {"skiff-r2"}, "app-0002": {"skiff-r2"}, "app-0003": {"skiff-r1"}},
			k:      2,
			want:   [][]int{{1, 1}, {1, 1}},
		},
		"an app two replicas report counts for both": {
			owners: map[string][]string{"app-0004": {"skiff-r1", "skiff-r2"}},
			k:      3,
			want:   [][]int{{0, 1, 0}, {0, 1, 0}},
		},
		"names that are not the bench's apps or replicas are left out": {
			owners: map[string][]string{"other": {"skiff-r1"}, "app-x": {"skiff-r1"}, "app-0002": {"skiff-r9"}},
			k:      3,
			want:   [][]int{{0, 0, 0}, {0, 0, 0}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if got := sharesPerCluster(tc.owners, names, tc.k); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("sharesPerCluster = %v, want %v", got, tc.want)
			}
		})
	}
}
