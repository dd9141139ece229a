package syncengine

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/testcluster"
)

// Field paths in managedFields (fieldsV1) of the Deployment in
// testdata/web-deployment.yaml.
var (
	replicasField  = []string{"f:spec", "f:replicas"}
	teamField      = []string{"f:metadata", "f:annotations", "f:team"}
	levelField     = []string{"f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"web"}`, "f:env", `k:{"name":"LEVEL"}`, "f:value"}
	pagedField     = []string{"f:metadata", "f:annotations", "f:paged"}
	debugFlagField = []string{"f:metadata", "f:labels", "f:debug"}
)

// After kubectl scale, edit or patch, a sync puts back what git sets and
// takes ownership of it, as Argo CD's server-side apply does (it forces
// conflicts); what only kubectl set stays, with its manager. The app is
// Synced afterwards. Without forcing, every sync of the app failed with
// "Apply failed with 1 conflict: conflict with "kubectl" with subresource
// "scale"".
func TestSyncTakesBackWhatKubectlChanged(t *testing.T) {
	tests := map[string]struct {
		// drift scales web to 5, sets LEVEL=debug, team=ops (all three
		// set by git), annotation paged=yes and label debug=on (not in git).
		drift func(t *testing.T, ns string)
		// pagedBy and debugBy manage the annotation and label git does not set.
		pagedBy, debugBy string
	}{
		"kubectl's requests, made with client-go": {
			drift:   driftAsKubectlDoes,
			pagedBy: "kubectl-patch", debugBy: "kubectl-edit",
		},
		"the kubectl binary": {
			drift:   driftWithKubectl,
			pagedBy: "kubectl-annotate", debugBy: "kubectl-label",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			ns := cluster.Namespace(t)
			desired := manifests(t, ns, syncWeb(t, e, ns, "shop"))

			tc.drift(t, ns)
			drifted := live(t, e.Client, desired)[0]
			if r, _, _ := unstructured.NestedInt64(drifted.Object, "spec", "replicas"); r != 5 || !slices.Equal(owners(t, drifted, replicasField), []string{"kubectl"}) {
				t.Fatalf("the drift did not happen: replicas %d owned by %v", r, owners(t, drifted, replicasField))
			}
			if got := owners(t, drifted, levelField); len(got) != 1 || got[0] == FieldManager {
				t.Fatalf("the drift did not happen: LEVEL's value is managed by %v", got)
			}

			res := runSync(t, e, ns, desired, []*unstructured.Unstructured{drifted}, false, false)
			if res.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("sync over kubectl's changes: %s: %s", res.Phase, res.Message)
			}
			synced := live(t, e.Client, desired)[0]
			replicas, _, _ := unstructured.NestedInt64(synced.Object, "spec", "replicas")
			containers, _, _ := unstructured.NestedSlice(synced.Object, "spec", "template", "spec", "containers")
			env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
			ann, labels := synced.GetAnnotations(), synced.GetLabels()
			if replicas != 2 || len(env) != 1 || env[0].(map[string]any)["value"] != "info" || ann["team"] != "shop" {
				t.Errorf("git's values not back: replicas %d, env %v, team %q", replicas, env, ann["team"])
			}
			if ann["paged"] != "yes" || labels["debug"] != "on" {
				t.Errorf("what git does not set was lost: annotations %v, labels %v", ann, labels)
			}
			for field, want := range map[string]struct {
				path    []string
				manager string
			}{
				"spec.replicas":                  {replicasField, FieldManager},
				"the team annotation":            {teamField, FieldManager},
				"LEVEL's value":                  {levelField, FieldManager},
				"the paged annotation (not git)": {pagedField, tc.pagedBy},
				"the debug label (not git)":      {debugFlagField, tc.debugBy},
			} {
				if got := owners(t, synced, want.path); !slices.Equal(got, []string{want.manager}) {
					t.Errorf("%s is managed by %v, want %s alone", field, got, want.manager)
				}
			}
			cmp, err := diff.Compare(desired[0], synced, diff.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if cmp.Modified {
				t.Errorf("OutOfSync right after the sync:\n%s", cmp.Diff)
			}
		})
	}
}

// driftAsKubectlDoes changes web with the requests kubectl sends, under
// its field managers: scale patches the scale subresource, edit updates
// the object, patch sends a strategic merge patch.
func driftAsKubectlDoes(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	deployments := cs.AppsV1().Deployments(ns)
	if _, err := deployments.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`),
		metav1.PatchOptions{FieldManager: "kubectl"}, "scale"); err != nil {
		t.Fatalf("kubectl scale: %v", err)
	}
	// An update of what was just read fails when the object moved in
	// between (the Deployment controller writes its status): read again.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deployments.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Env[0].Value = "debug"
		d.Labels = map[string]string{"debug": "on"}
		_, err = deployments.Update(ctx, d, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	})
	if err != nil {
		t.Fatalf("kubectl edit: %v", err)
	}
	if _, err := deployments.Patch(ctx, "web", types.StrategicMergePatchType, []byte(`{"metadata":{"annotations":{"team":"ops","paged":"yes"}}}`),
		metav1.PatchOptions{FieldManager: "kubectl-patch"}); err != nil {
		t.Fatalf("kubectl patch: %v", err)
	}
}

// driftWithKubectl changes web with the real kubectl (the control plane's
// version, from the binary cache): scale, edit (an editor script sets
// LEVEL=debug), label and annotate.
func driftWithKubectl(t *testing.T, ns string) {
	t.Helper()
	kubectl, err := testcluster.KubectlBinary()
	if err != nil {
		t.Fatal(err)
	}
	editor := filepath.Join(t.TempDir(), "edit.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nexec sed -i 's/value: info/value: debug/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"scale", "deployment/web", "--replicas=5"},
		{"edit", "deployment/web"},
		{"label", "deployment/web", "debug=on"},
		{"annotate", "--overwrite", "deployment/web", "team=ops", "paged=yes"},
	} {
		cmd := exec.CommandContext(t.Context(), kubectl, append([]string{"--kubeconfig", cluster.Kubeconfig, "-n", ns}, args...)...)
		cmd.Env = append(os.Environ(), "KUBE_EDITOR="+editor)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
	}
}

// owners lists the field managers of obj that own the field at path.
func owners(t *testing.T, obj *unstructured.Unstructured, path []string) []string {
	t.Helper()
	var managers []string
	for _, entry := range obj.GetManagedFields() {
		if entry.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(entry.FieldsV1.GetRawBytes(), &fields); err != nil {
			t.Fatal(err)
		}
		if ownsPath(fields, path) {
			managers = append(managers, entry.Manager)
		}
	}
	return managers
}

func ownsPath(fields map[string]any, path []string) bool {
	for _, step := range path {
		next, ok := fields[step].(map[string]any)
		if !ok {
			return false
		}
		fields = next
	}
	return true
}
