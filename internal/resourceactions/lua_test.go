package resourceactions

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiffcd/skiff/internal/lua"
	"github.com/skiffcd/skiff/internal/opserr"
)

// Custom actions in Lua, as argocd-cm defines them, through the catalog:
// discovery lists them (replacing or merging with the built-in set), the
// classic form's changed object becomes a patch, the list form creates,
// parameters reach actionParams, and a failing or endless script is an
// invalid action, never a crash.
func TestLuaActions(t *testing.T) {
	const touch = `obj.metadata.labels = obj.metadata.labels or {}
obj.metadata.labels["touched"] = actionParams["by"] or "nobody"
return obj`
	tests := map[string]struct {
		manifest string
		scripts  Scripts
		action   string
		params   []Param
		list     []string
		writes   []string
		err      string
	}{
		"a Lua set replaces the built-in actions and patches what the script changed": {
			manifest: deployment, action: "touch", params: []Param{{Name: "by", Value: "ana"}},
			scripts: Scripts{Discovery: `return {touch = {displayName = "Touch"}}`, Actions: map[string]string{"touch": touch}},
			list:    []string{"touch"}, writes: []string{`{"metadata":{"labels":{"touched":"ana"}}}`},
		},
		"mergeBuiltinActions keeps the built-in ones": {
			manifest: statefulSet, action: "restart",
			scripts: Scripts{Discovery: `return {touch = {}}`, Actions: map[string]string{"touch": touch}, MergeBuiltin: true},
			list:    []string{"restart", "scale replicas=1", "touch"},
			writes:  []string{`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-12-07T14:30:05Z"}}}}}`},
		},
		"discovery's disabled and params are listed": {
			manifest: deployment, action: "touch",
			scripts: Scripts{Discovery: `return {touch = {disabled = obj.spec.replicas > 2, params = {{name = "by", default = "me"}}}}`, Actions: map[string]string{"touch": touch}},
			list:    []string{"touch by=me (disabled)"}, err: "disabled",
		},
		"the list form creates objects": {
			manifest: cronJob, action: "spawn",
			scripts: Scripts{Discovery: `return {spawn = {}}`, Actions: map[string]string{"spawn": `
local job = {apiVersion = "batch/v1", kind = "Job", metadata = {name = obj.metadata.name .. "-by-lua", namespace = obj.metadata.namespace}}
return {{operation = "create", resource = job}}`}},
			list: []string{"spawn"}, writes: []string{"create Job report-by-lua"},
		},
		"an action discovery offers without a definition is refused": {
			manifest: deployment, action: "ghost",
			scripts: Scripts{Discovery: `return {ghost = {}}`},
			list:    []string{"ghost"}, err: "no definition",
		},
		"a script's error is the action's": {
			manifest: deployment, action: "boom",
			scripts: Scripts{Discovery: `return {boom = {}}`, Actions: map[string]string{"boom": `error("no way")`}},
			list:    []string{"boom"}, err: "no way",
		},
		"an endless script is stopped": {
			manifest: deployment, action: "spin",
			scripts: Scripts{Discovery: `return {spin = {}}`, Actions: map[string]string{"spin": `while true do end`}},
			list:    []string{"spin"}, err: "time limit exceeded",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cat := Catalog{Custom: LuaActions{
				Scripts: func(gk schema.GroupKind) (Scripts, bool) {
					return tc.scripts, gk.Kind == object(t, tc.manifest).GetKind()
				},
				Runner: lua.New(lua.Options{Timeout: 200 * time.Millisecond}),
			}}
			obj := object(t, tc.manifest)
			actions, err := cat.List(obj)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(actions); !reflect.DeepEqual(got, tc.list) {
				t.Errorf("actions %q, want %q", got, tc.list)
			}
			changes, err := cat.Plan(obj, tc.action, tc.params, now)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !(errors.Is(err, opserr.ErrInvalid) || errors.Is(err, opserr.ErrConflict)) {
					t.Fatalf("error %v, want an invalid or conflict one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var writes []string
			for _, c := range changes {
				if c.Create != nil {
					writes = append(writes, "create "+c.Create.GetKind()+" "+c.Create.GetName())
					continue
				}
				writes = append(writes, c.Patch.Data)
			}
			if !reflect.DeepEqual(writes, tc.writes) {
				t.Errorf("writes %q, want %q", writes, tc.writes)
			}
		})
	}
}
