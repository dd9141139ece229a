// Package shard spreads the Application controller's work over the live
// replicas of `skiff server --leader-elect`. Each replica holds a Lease of
// its own (Membership); every replica computes, from the same live members
// and the same apps, the same owner for each app (Assign); an app changes
// hands only after its previous owner has had time to let it go (Sharder).
// The coordination is the Kubernetes API's Leases: there is no store of
// Skiff's own.
package shard

import (
	"cmp"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
)

// App is what the assignment knows of one Application: its name and the
// cluster it deploys to.
type App struct {
	Name string
	// Cluster is the server of the app's destination cluster; "" when the
	// destination names no known cluster.
	Cluster string
	// Pin is the cluster Secret's `shard` key (Argo CD's): the cluster's
	// apps all go to the Pin-th member in name order (modulo the member
	// count). Nil lets the assignment decide.
	Pin *int
}

const (
	// capacitySlack is how far above an even share a member may be filled
	// before a cluster goes elsewhere: a little room lets whole clusters stay
	// together (one watch cache each) and keeps apps in place when the
	// count moves a little.
	capacitySlack = 1.1
	// splitBuckets is how many parts a cluster too big for one member is
	// cut into: enough that the parts even out (eight per member up to
	// eight members), the same for any member count so that an app keeps
	// its bucket when members come and go.
	splitBuckets = 64
)

// unit is a set of apps assigned together: a whole cluster, or one bucket
// of a cluster too big for one member.
type unit struct {
	key  string
	apps []string
}

// Assign gives each app an owner among members, the same on every replica
// that sees the same members and apps:
//
//   - A cluster whose Secret pins it (the `shard` key) goes to the pinned
//     member.
//   - Every other cluster goes whole to one member when it fits: the first,
//     in the cluster's own rendezvous order of the members, whose load
//     stays within an even share plus 10 %. One cluster's apps then share
//     one watch cache.
//   - A cluster bigger than that (argo-cd #6125: one large cluster
//     overloads one shard), or that fits on no member whole (three
//     clusters on two members), is cut by a hash of the app names into
//     64 buckets; each member gets a quota of buckets in proportion to
//     the room it has left, and each bucket goes to the first member in
//     its own rendezvous order with quota left. So no member carries much
//     more than its share, and an app added to a cut cluster moves no
//     other once every bucket holds an app.
//
// Whole clusters are placed in the order of their names (an order by size
// changes as they grow); what fits nowhere whole is cut. Rendezvous order and hash buckets
// keep most apps where they were when a member joins or leaves.
func Assign(members []string, apps []App) map[string]string {
	if len(members) == 0 {
		return nil
	}
	members = slices.Clone(members)
	slices.Sort(members)
	members = slices.Compact(members)
	n := len(members)
	even := float64(len(apps)) / float64(n)
	capacity := max(int(math.Ceil(even)), int(even*capacitySlack))
	owner := make(map[string]string, len(apps))
	load := make(map[string]int, n)

	byCluster := map[string][]string{}
	pins := map[string]int{}
	for _, a := range apps {
		byCluster[a.Cluster] = append(byCluster[a.Cluster], a.Name)
		if a.Pin != nil {
			pins[a.Cluster] = *a.Pin
		}
	}
	var whole []unit
	var split []string
	for _, cluster := range slices.Sorted(maps.Keys(byCluster)) {
		names := byCluster[cluster]
		slices.Sort(names)
		if pin, ok := pins[cluster]; ok {
			m := members[((pin%n)+n)%n]
			for _, name := range names {
				owner[name] = m
			}
			load[m] += len(names)
			continue
		}
		if len(names) <= capacity || n == 1 {
			whole = append(whole, unit{key: cluster, apps: names})
		} else {
			split = append(split, cluster)
		}
	}
	sortUnits(whole)
	for _, u := range whole {
		m, fits := roomFor(u, members, load, capacity)
		if !fits {
			// A whole cluster that fits nowhere is cut as a big one is.
			split = append(split, u.key)
			continue
		}
		for _, name := range u.apps {
			owner[name] = m
		}
		load[m] += len(u.apps)
	}
	for _, cluster := range split {
		placeBuckets(buckets(cluster, byCluster[cluster], splitBuckets), members, load, capacity, owner)
	}
	return owner
}

// placeBuckets gives each member a quota of the cluster's buckets in
// proportion to its room (capacity less its load), and each bucket, in
// their fixed order, to the first member in the bucket's rendezvous order
// with quota left. Quotas count buckets, not apps: while apps come and go
// within the buckets, no bucket changes hands.
func placeBuckets(parts []unit, members []string, load map[string]int, capacity int, owner map[string]string) {
	rooms := make([]int, len(members))
	for i, m := range members {
		rooms[i] = max(capacity-load[m], 0)
	}
	quota := map[string]int{}
	for i, q := range shareOut(len(parts), rooms) {
		quota[members[i]] = q
	}
	for _, p := range parts {
		ranked := rendezvous(p.key, members)
		m := ranked[0]
		for _, candidate := range ranked {
			if quota[candidate] > 0 {
				m = candidate
				break
			}
		}
		quota[m]--
		for _, name := range p.apps {
			owner[name] = m
		}
		load[m] += len(p.apps)
	}
}

// shareOut divides total in proportion to weights (largest remainders;
// ties to the earlier weight); equal shares when every weight is zero.
func shareOut(total int, weights []int) []int {
	sum := 0
	for _, w := range weights {
		sum += w
	}
	if sum == 0 {
		weights = slices.Repeat([]int{1}, len(weights))
		sum = len(weights)
	}
	out := make([]int, len(weights))
	type rest struct{ i, r int }
	rests := make([]rest, len(weights))
	given := 0
	for i, w := range weights {
		out[i] = total * w / sum
		given += out[i]
		rests[i] = rest{i, total * w % sum}
	}
	slices.SortStableFunc(rests, func(a, b rest) int { return cmp.Compare(b.r, a.r) })
	for k := 0; given < total; k++ {
		out[rests[k].i]++
		given++
	}
	return out
}

// sortUnits orders whole clusters by name, not size: an order by size
// changes whenever one cluster overtakes another by an app, and with it
// which cluster gets a member both prefer, so clusters of about the same
// size would trade members back and forth as they grow.
func sortUnits(units []unit) {
	slices.SortStableFunc(units, func(a, b unit) int { return cmp.Compare(a.key, b.key) })
}

// roomFor picks u's member: the first in u's rendezvous order with room
// for it (fits), else the least loaded (ties: rendezvous order).
func roomFor(u unit, members []string, load map[string]int, capacity int) (member string, fits bool) {
	ranked := rendezvous(u.key, members)
	for _, m := range ranked {
		if load[m]+len(u.apps) <= capacity {
			return m, true
		}
	}
	least := ranked[0]
	for _, m := range ranked[1:] {
		if load[m] < load[least] {
			least = m
		}
	}
	return least, false
}

// buckets cuts a cluster's apps into count buckets by a hash of their
// names; an app stays in its bucket whatever other apps do.
func buckets(cluster string, names []string, count int) []unit {
	parts := make([][]string, count)
	for _, name := range names {
		i := hash(name) % uint64(count)
		parts[i] = append(parts[i], name)
	}
	var units []unit
	for i, apps := range parts {
		if len(apps) > 0 {
			units = append(units, unit{key: cluster + "#" + strconv.Itoa(i), apps: apps})
		}
	}
	return units
}

// rendezvous orders members by their score for key, highest first
// (highest random weight hashing): each key has its own order, and
// removing a member changes no other member's place in it.
func rendezvous(key string, members []string) []string {
	type scored struct {
		member string
		score  uint64
	}
	s := make([]scored, len(members))
	for i, m := range members {
		s[i] = scored{m, hash(key + "\x00" + m)}
	}
	slices.SortFunc(s, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.member, b.member))
	})
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.member
	}
	return out
}

func hash(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	// FNV's low bits mix poorly for short, similar strings: finish with
	// a multiply-xorshift (splitmix64's) so that buckets even out.
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
