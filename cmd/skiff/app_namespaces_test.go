package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/internal/testgit"
)

// diffHeader is the line `skiff app diff` starts each resource with.
var diffHeader = regexp.MustCompile(`(?m)^===== [^/\n]*/(\w+) (\S+) ======$`)

// placed reads the Kind/name → namespace of each resource of a diff.
func placed(out string) map[string]string {
	got := map[string]string{}
	for _, m := range diffHeader.FindAllStringSubmatch(out, -1) {
		ns, name, ok := strings.Cut(m[2], "/")
		if !ok {
			ns, name = "", m[2]
		}
		got[m[1]+"/"+name] = ns
	}
	return got
}

// The controller (the app's status), the API's diff (`skiff app diff`
// through the API server) and `skiff app diff --core` place the resources
// of an app that renders CRDs with their custom resources alike: the
// custom resource of the namespaced CRD in the destination namespace,
// those of the cluster-scoped CRD in none.
func TestNamespacesAgreeOnCustomResourcesOfCRDsInTheApp(t *testing.T) {
	t.Parallel()
	c := kube(t)
	dest := cluster.Namespace(t)
	// Two CRDs the cluster does not serve yet, with custom resources of
	// each: a Widget of a namespaced CRD, without a namespace, and Gadgets
	// of a cluster-scoped one, one of them naming a namespace it cannot have.
	files := map[string]string{}
	for _, f := range []string{"crds.yaml", "resources.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", "crd-namespaces", f))
		if err != nil {
			t.Fatal(err)
		}
		files["app/"+f] = string(data)
	}
	repo := testgit.New(t)
	repo.Commit(files)
	const name = "crd-namespaces"
	mustSkiff(t, "create", name, "--repo", repo.URL(), "--path", "app", "--dest-namespace", dest)
	t.Cleanup(func() { _, _ = skiff(t, "delete", name, "--cascade=false", "-y") })
	want := map[string]string{
		"CustomResourceDefinition/widgets.agree.skiff.test": "",
		"CustomResourceDefinition/gadgets.agree.skiff.test": "",
		"Widget/w1": dest, "Gadget/g1": "", "Gadget/g2": "",
	}

	controller := map[string]string{}
	waitFor(t, "the controller's comparison", func() bool {
		clear(controller)
		for _, rs := range getApp(t, c, name).Status.Resources {
			controller[rs.Kind+"/"+rs.Name] = rs.Namespace
		}
		return len(controller) == len(want)
	})

	srv := startAPIServer(t, appNamespace)
	session := filepath.Join(t.TempDir(), "session")
	if out, err := runSkiff("login", srv.addr, "--password", srv.password, "--insecure-skip-tls-verify", "--config", session); err != nil {
		t.Fatalf("login: %v\n%s", err, out)
	}
	viaAPI, err := runSkiff("app", "--config", session, "diff", name)
	if code, silent := silentExit(err); !silent || code != 1 {
		t.Fatalf("diff through the API server: %v\n%s", err, viaAPI)
	}
	core, err := skiff(t, "diff", name)
	if code, silent := silentExit(err); !silent || code != 1 {
		t.Fatalf("diff --core: %v\n%s", err, core)
	}

	for view, got := range map[string]map[string]string{
		"the controller": controller, "the API's diff": placed(viaAPI), "skiff app diff --core": placed(core),
	} {
		for key, ns := range want {
			if placedNS, ok := got[key]; !ok || placedNS != ns {
				t.Errorf("%s places %s in %q (listed %v), want %q", view, key, placedNS, ok, ns)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s lists %v, want %v", view, got, want)
		}
	}
}
