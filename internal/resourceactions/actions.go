package resourceactions

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiffcd/skiff/internal/opserr"
	"github.com/skiffcd/skiff/internal/rolloutops"
)

// Action is one action of an object as Argo CD's API lists it.
type Action struct {
	Name     string  `json:"name"`
	Params   []Param `json:"params,omitempty"`
	Disabled bool    `json:"disabled"`
	// IconClass and DisplayName are what the UI shows, when set.
	IconClass   string `json:"iconClass,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
}

// Param is a parameter of an action: as listed, its name, type and
// default; as given to run one, its name and value.
type Param struct {
	Name    string `json:"name"`
	Value   string `json:"value,omitempty"`
	Type    string `json:"type,omitempty"`
	Default string `json:"default,omitempty"`
}

// Change is one write of an action: a patch of the object acted on, or an
// object to create.
type Change struct {
	// Patch of the object, to its status subresource when Patch.Status.
	Patch *rolloutops.Patch `json:"patch,omitempty"`
	// Create is a new object (create-job's Job).
	Create *unstructured.Unstructured `json:"create,omitempty"`
}

// Operation is what a custom action does with an object it returns.
type Operation string

// The operations of Argo CD's newer action form.
const (
	OpPatch  Operation = "patch"
	OpCreate Operation = "create"
)

// Impacted is an object a custom action returns with what to do with it:
// the changed object acted on (patch) or a new one (create).
type Impacted struct {
	Operation Operation
	Object    *unstructured.Unstructured
}

// Custom is the actions argocd-cm defines (resource.customizations.actions),
// in whatever language: internal/lua runs them.
type Custom interface {
	// Discover lists the custom actions of obj's kind; ok is false when
	// none are defined for it, merge when they add to the built-in set
	// (mergeBuiltinActions) instead of replacing it.
	Discover(obj *unstructured.Unstructured) (actions []Action, merge, ok bool, err error)
	// Run runs custom action name on obj, a copy it may change.
	Run(obj *unstructured.Unstructured, name string, params []Param) ([]Impacted, error)
}

// Catalog discovers and plans the actions of objects: the built-in ones
// and those of Custom, if set.
type Catalog struct {
	Custom Custom
}

// List returns the actions of obj, sorted by name; custom ones replace the
// built-in set of the kind unless they ask to be merged (and then win on a
// shared name).
func (c Catalog) List(obj *unstructured.Unstructured) ([]Action, error) {
	actions, _, err := c.list(obj)
	return actions, err
}

// list returns the actions of obj and which of them are custom.
func (c Catalog) list(obj *unstructured.Unstructured) ([]Action, map[string]bool, error) {
	byName := map[string]Action{}
	custom := map[string]bool{}
	useBuiltin := true
	if c.Custom != nil {
		actions, merge, ok, err := c.Custom.Discover(obj.DeepCopy())
		if err != nil {
			return nil, nil, fmt.Errorf("discovering the custom actions of %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if ok {
			useBuiltin = merge
			for _, a := range actions {
				byName[a.Name], custom[a.Name] = a, true
			}
		}
	}
	if useBuiltin {
		for _, a := range builtinActions(obj) {
			if !custom[a.Name] {
				byName[a.Name] = a
			}
		}
	}
	out := make([]Action, 0, len(byName))
	for _, a := range byName {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, custom, nil
}

// Plan plans action name with params on obj at now: the writes to send, in
// order. An action obj does not list, or lists disabled, is refused.
func (c Catalog) Plan(obj *unstructured.Unstructured, name string, params []Param, now time.Time) ([]Change, error) {
	actions, custom, err := c.list(obj)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(actions, func(a Action) bool { return a.Name == name })
	if i < 0 {
		names := make([]string, len(actions))
		for j, a := range actions {
			names[j] = a.Name
		}
		return nil, opserr.Invalid("%s %s has no action %q (its actions: %s)", obj.GetKind(), obj.GetName(), name, strings.Join(names, ", "))
	}
	if actions[i].Disabled {
		return nil, opserr.New(opserr.ErrConflict, fmt.Errorf("action %s is disabled for %s %s in its present state", name, obj.GetKind(), obj.GetName()))
	}
	if !custom[name] {
		return planBuiltin(obj, name, params, now)
	}
	impacted, err := c.Custom.Run(obj.DeepCopy(), name, params)
	if err != nil {
		return nil, opserr.Invalid("running action %s on %s %s: %w", name, obj.GetKind(), obj.GetName(), err)
	}
	return changesOf(obj, impacted)
}

// changesOf turns a custom action's objects into writes: a changed target
// into a merge patch of what it changed (and one of its status, which the
// main resource ignores), new objects into creates.
func changesOf(obj *unstructured.Unstructured, impacted []Impacted) ([]Change, error) {
	var out []Change
	for _, im := range impacted {
		if im.Object == nil {
			return nil, opserr.Invalid("action returned no object")
		}
		switch im.Operation {
		case OpCreate:
			out = append(out, Change{Create: im.Object})
		case OpPatch, "":
			if im.Object.GetName() != obj.GetName() || im.Object.GetNamespace() != obj.GetNamespace() || im.Object.GetKind() != obj.GetKind() {
				return nil, opserr.Invalid("action patched %s %s/%s, not the object it ran on", im.Object.GetKind(), im.Object.GetNamespace(), im.Object.GetName())
			}
			changes, err := patchesOf(obj, im.Object)
			if err != nil {
				return nil, err
			}
			out = append(out, changes...)
		default:
			return nil, opserr.Invalid("action returned operation %q; want patch or create", im.Operation)
		}
	}
	return out, nil
}

// patchesOf is the merge patches that turn before into after: one of the
// main resource and one of the status subresource, each only when needed.
func patchesOf(before, after *unstructured.Unstructured) ([]Change, error) {
	split := func(u *unstructured.Unstructured) (main, status []byte, err error) {
		m := u.DeepCopy().Object
		st := map[string]any{"status": m["status"]}
		delete(m, "status")
		if main, err = json.Marshal(m); err != nil {
			return nil, nil, err
		}
		status, err = json.Marshal(st)
		return main, status, err
	}
	bm, bs, err := split(before)
	if err != nil {
		return nil, err
	}
	am, as, err := split(after)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, p := range []struct {
		before, after []byte
		status        bool
	}{{bm, am, false}, {bs, as, true}} {
		patch, err := jsonpatch.CreateMergePatch(p.before, p.after)
		if err != nil {
			return nil, fmt.Errorf("diffing the action's object: %w", err)
		}
		if string(patch) == "{}" {
			continue
		}
		out = append(out, Change{Patch: &rolloutops.Patch{Type: types.MergePatchType, Data: string(patch), Status: p.status}})
	}
	return out, nil
}

// Apply is what changes make of obj: the object as patched and the objects
// created, as the API server would store them (no defaulting).
func Apply(obj *unstructured.Unstructured, changes []Change) (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, nil, err
	}
	var created []*unstructured.Unstructured
	for _, c := range changes {
		if c.Create != nil {
			created = append(created, c.Create)
			continue
		}
		if c.Patch.Type != types.MergePatchType {
			return nil, nil, fmt.Errorf("applying a %s patch: only merge patches are planned", c.Patch.Type)
		}
		if doc, err = jsonpatch.MergePatch(doc, []byte(c.Patch.Data)); err != nil {
			return nil, nil, fmt.Errorf("applying %s: %w", c.Patch.Data, err)
		}
	}
	out := &unstructured.Unstructured{}
	if err := json.Unmarshal(doc, &out.Object); err != nil {
		return nil, nil, err
	}
	return out, created, nil
}

// GroupKind is obj's group and kind.
func GroupKind(obj *unstructured.Unstructured) schema.GroupKind {
	return obj.GroupVersionKind().GroupKind()
}

// Describe names a resource in messages and Events: "apps/Deployment
// shop/web", the group and namespace left out when empty.
func Describe(group, kind, namespace, name string) string {
	gk := kind
	if group != "" {
		gk = group + "/" + kind
	}
	if namespace == "" {
		return gk + " " + name
	}
	return gk + " " + namespace + "/" + name
}
