package shard

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// appsOn returns count apps named after cluster deploying to it.
func appsOn(cluster string, count int) []App {
	apps := make([]App, count)
	for i := range apps {
		apps[i] = App{Name: fmt.Sprintf("%s-app-%d", cluster, i), Cluster: cluster}
	}
	return apps
}

func pinned(apps []App, shard int) []App {
	for i := range apps {
		apps[i].Pin = &shard
	}
	return apps
}

// loads counts the apps of each member.
func loads(owner map[string]string) map[string]int {
	l := map[string]int{}
	for _, m := range owner {
		l[m]++
	}
	return l
}

// ownersOf returns the members owning apps of cluster.
func ownersOf(owner map[string]string, apps []App, cluster string) []string {
	set := map[string]bool{}
	for _, a := range apps {
		if a.Cluster == cluster {
			set[owner[a.Name]] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func TestAssign(t *testing.T) {
	three := []string{"skiff-c", "skiff-a", "skiff-b"}
	tests := map[string]struct {
		members []string
		apps    []App
		check   func(t *testing.T, owner map[string]string, apps []App)
	}{
		"no member owns nothing": {
			members: nil,
			apps:    appsOn("https://a", 3),
			check: func(t *testing.T, owner map[string]string, _ []App) {
				if len(owner) != 0 {
					t.Errorf("owners without members: %v", owner)
				}
			},
		},
		"one member owns every app": {
			members: []string{"skiff-a"},
			apps:    append(appsOn("https://a", 50), appsOn("https://b", 5)...),
			check: func(t *testing.T, owner map[string]string, apps []App) {
				if l := loads(owner); l["skiff-a"] != len(apps) {
					t.Errorf("loads %v, want all %d on skiff-a", l, len(apps))
				}
			},
		},
		"three clusters of 300 apps on three members: one whole cluster each": {
			members: three,
			apps:    slices.Concat(appsOn("https://a", 300), appsOn("https://b", 300), appsOn("https://c", 300)),
			check: func(t *testing.T, owner map[string]string, apps []App) {
				seen := map[string]bool{}
				for _, c := range []string{"https://a", "https://b", "https://c"} {
					owners := ownersOf(owner, apps, c)
					if len(owners) != 1 {
						t.Errorf("cluster %s is split over %v, want one member", c, owners)
						continue
					}
					if seen[owners[0]] {
						t.Errorf("%s owns two clusters", owners[0])
					}
					seen[owners[0]] = true
				}
			},
		},
		"one cluster of 10,000 apps on three members: none holds more than 40 %": {
			members: three,
			apps:    appsOn("https://big", 10000),
			check: func(t *testing.T, owner map[string]string, apps []App) {
				for m, l := range loads(owner) {
					if l*100 > 40*len(apps) {
						t.Errorf("%s holds %d of %d apps", m, l, len(apps))
					}
				}
				if l := loads(owner); len(l) != 3 {
					t.Errorf("loads %v, want all three members used", l)
				}
			},
		},
		"a big cluster is split and the small ones stay whole": {
			members: three,
			apps:    slices.Concat(appsOn("https://big", 900), appsOn("https://s1", 20), appsOn("https://s2", 20)),
			check: func(t *testing.T, owner map[string]string, apps []App) {
				for _, c := range []string{"https://s1", "https://s2"} {
					if owners := ownersOf(owner, apps, c); len(owners) != 1 {
						t.Errorf("small cluster %s is split over %v", c, owners)
					}
				}
				if owners := ownersOf(owner, apps, "https://big"); len(owners) != 3 {
					t.Errorf("the big cluster is on %v, want all three members", owners)
				}
				for m, l := range loads(owner) {
					if l*100 > 40*len(apps) {
						t.Errorf("%s holds %d of %d apps", m, l, len(apps))
					}
				}
			},
		},
		"three clusters on two members: the one that fits nowhere whole is cut": {
			members: []string{"skiff-a", "skiff-b"},
			apps:    slices.Concat(appsOn("https://a", 100), appsOn("https://b", 100), appsOn("https://c", 100)),
			check: func(t *testing.T, owner map[string]string, apps []App) {
				split := 0
				for _, c := range []string{"https://a", "https://b", "https://c"} {
					if len(ownersOf(owner, apps, c)) > 1 {
						split++
					}
				}
				if split != 1 {
					t.Errorf("%d clusters are split, want one", split)
				}
				for m, l := range loads(owner) {
					if l > 165 {
						t.Errorf("%s holds %d of 300 apps, want at most an even share plus 10 %%", m, l)
					}
				}
			},
		},
		"a cluster's shard key pins it to that member in name order, modulo the member count": {
			members: three,
			apps:    slices.Concat(pinned(appsOn("https://one", 10), 1), pinned(appsOn("https://four", 10), 4), appsOn("https://free", 10)),
			check: func(t *testing.T, owner map[string]string, apps []App) {
				if got := ownersOf(owner, apps, "https://one"); !slices.Equal(got, []string{"skiff-b"}) {
					t.Errorf("shard 1 is on %v, want skiff-b", got)
				}
				if got := ownersOf(owner, apps, "https://four"); !slices.Equal(got, []string{"skiff-b"}) {
					t.Errorf("shard 4 of 3 members is on %v, want skiff-b", got)
				}
			},
		},
		"apps of unknown destinations are assigned too": {
			members: three,
			apps:    []App{{Name: "lost", Cluster: ""}},
			check: func(t *testing.T, owner map[string]string, _ []App) {
				if owner["lost"] == "" {
					t.Error("the app of an unknown cluster has no owner")
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			owner := Assign(tc.members, tc.apps)
			if len(tc.members) > 0 && len(owner) != len(tc.apps) {
				t.Fatalf("%d owners for %d apps", len(owner), len(tc.apps))
			}
			tc.check(t, owner, tc.apps)
			// Every replica computes the same, whatever order it read them in.
			reversed := slices.Clone(tc.apps)
			slices.Reverse(reversed)
			members := slices.Clone(tc.members)
			slices.Reverse(members)
			if again := Assign(members, reversed); !maps.Equal(owner, again) {
				t.Error("the assignment depends on the order of members or apps")
			}
		})
	}
}

// moved counts the apps whose owner differs between two assignments.
func moved(before, after map[string]string) int {
	n := 0
	for app, m := range before {
		if o, ok := after[app]; ok && o != m {
			n++
		}
	}
	return n
}

// Apps created one at a time in one cluster (the cluster cut into buckets
// on three members): once every bucket holds an app, a new app moves no
// other.
func TestAssignKeepsAppsInPlaceAsACutClusterGrows(t *testing.T) {
	members := []string{"a", "b", "c"}
	var apps []App
	var prev map[string]string
	early := 0
	for i := range 600 {
		apps = append(apps, App{Name: fmt.Sprintf("app-%04d", i), Cluster: "https://kubernetes.default.svc"})
		cur := Assign(members, apps)
		n := moved(prev, cur)
		switch {
		case i < 300:
			early += n
		case n > 0:
			t.Fatalf("adding app %d moved %d others", i, n)
		}
		prev = cur
	}
	t.Logf("the first 300 apps moved %d apps while buckets filled", early)
	if early > 150 {
		t.Errorf("the first 300 apps moved %d apps, want the buckets' quotas to settle sooner", early)
	}
}

func TestAssignMovesFewAppsWhenThingsChange(t *testing.T) {
	one := appsOn("https://big", 3000)
	many := slices.Concat(appsOn("https://a", 300), appsOn("https://b", 250), appsOn("https://c", 200), appsOn("https://d", 100))
	tests := map[string]struct {
		before, after func() ([]string, []App)
		// maxMoved is the most apps that may change owner.
		maxMoved int
	}{
		"a new app in a split cluster moves only a few others": {
			before: func() ([]string, []App) { return []string{"a", "b", "c"}, one },
			after: func() ([]string, []App) {
				return []string{"a", "b", "c"}, append(slices.Clone(one), App{Name: "new", Cluster: "https://big"})
			},
			maxMoved: 0,
		},
		"a fourth member takes apps only from the others, about a quarter": {
			before:   func() ([]string, []App) { return []string{"a", "b", "c"}, one },
			after:    func() ([]string, []App) { return []string{"a", "b", "c", "d"}, one },
			maxMoved: 3000 * 35 / 100,
		},
		// The leaving member's cluster (300) moves, and c's 200 go back to
		// their first choice, which has room now.
		"a member leaving moves its own apps and at most one other cluster": {
			before:   func() ([]string, []App) { return []string{"a", "b", "c"}, many },
			after:    func() ([]string, []App) { return []string{"a", "b"}, many },
			maxMoved: 300 + 200,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m1, a1 := tc.before()
			m2, a2 := tc.after()
			if n := moved(Assign(m1, a1), Assign(m2, a2)); n > tc.maxMoved {
				t.Errorf("%d apps changed owner, want at most %d", n, tc.maxMoved)
			}
		})
	}
}

// Three clusters of about the same size grow app by app on three members:
// each stays whole on one member, and whole clusters do not trade places
// whenever one of them gets ahead of the others by an app (placing the
// largest first did that: 599 of 900 apps moved on the way to 900).
func TestAssignKeepsWholeClustersInPlaceAsTheyGrow(t *testing.T) {
	for _, members := range [][]string{
		{"skiff-r1", "skiff-r2", "skiff-r3"},
		{"a", "b", "c"},
		{"skiff-7f9c8-abcde_0b1c", "skiff-7f9c8-fghij_9a8b", "skiff-7f9c8-klmno_7766"},
	} {
		clusters := []string{"https://kubernetes.default.svc", "https://10.0.0.2:6443", "https://10.0.0.3:6443"}
		var apps []App
		var prev map[string]string
		movedApps := map[string]bool{}
		for i := range 900 {
			apps = append(apps, App{Name: fmt.Sprintf("app-%04d", i), Cluster: clusters[i%3]})
			cur := Assign(members, apps)
			for app, m := range prev {
				if cur[app] != m {
					movedApps[app] = true
				}
			}
			prev = cur
		}
		perCluster := map[string]map[string]bool{}
		for _, a := range apps {
			if perCluster[a.Cluster] == nil {
				perCluster[a.Cluster] = map[string]bool{}
			}
			perCluster[a.Cluster][prev[a.Name]] = true
		}
		for cluster, owners := range perCluster {
			if len(owners) != 1 {
				t.Errorf("members %v: cluster %s is on %d members at 900 apps, want one", members, cluster, len(owners))
			}
		}
		t.Logf("members %v: %d of 900 apps moved on the way to 900", members, len(movedApps))
		// The first few apps may move while the clusters are tiny (an
		// even share of 4 apps has little room); after that none should.
		if len(movedApps) > 10 {
			t.Errorf("members %v: %d of 900 apps moved on the way to 900, want the clusters to stay in place", members, len(movedApps))
		}
	}
}
