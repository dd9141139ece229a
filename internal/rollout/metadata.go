package rollout

import "maps"

// ApplyRoleMetadata returns current with the ephemeral metadata of a
// ReplicaSet's role (blue-green active/preview, canary stable/canary) put
// in: the keys any role manages are removed, then the role's are set. It
// says whether the result differs from current. Keys in keep (the
// selector's) are never touched.
func ApplyRoleMetadata(current, role map[string]string, managed, keep map[string]bool) (map[string]string, bool) {
	out := maps.Clone(current)
	if out == nil {
		out = map[string]string{}
	}
	for k := range managed {
		if !keep[k] {
			delete(out, k)
		}
	}
	for k, v := range role {
		if !keep[k] {
			out[k] = v
		}
	}
	if len(out) == len(current) {
		same := true
		for k, v := range out {
			if cv, ok := current[k]; !ok || cv != v {
				same = false
				break
			}
		}
		if same {
			return current, false
		}
	}
	return out, true
}
