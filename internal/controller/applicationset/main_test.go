package applicationset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/controller/application"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/syncengine"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(testcluster.RunMainWithCRDs(m, func(c *testcluster.Cluster) { cluster = c }))
}

// listGenerate stands in for the generators and templates (internal/appset)
// in these tests: one Application per List element, the element's keys
// substituted for {{key}} in the template. An element with a "fail" key
// fails the generation, as a generator that cannot read its source.
func listGenerate(_ context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
	tmpl, err := json.Marshal(set.Spec.Template)
	if err != nil {
		return nil, err
	}
	var out []v1alpha1.Application
	for _, g := range set.Spec.Generators {
		if g.List == nil {
			continue
		}
		for _, e := range g.List.Elements {
			params := map[string]string{}
			if err := json.Unmarshal(e.Raw, &params); err != nil {
				return nil, err
			}
			if msg, ok := params["fail"]; ok {
				return nil, errors.New(msg)
			}
			doc := string(tmpl)
			for k, v := range params {
				doc = strings.ReplaceAll(doc, "{{"+k+"}}", v)
			}
			var app v1alpha1.Application
			if err := json.Unmarshal([]byte(doc), &app); err != nil {
				return nil, err
			}
			out = append(out, app)
		}
	}
	return out, nil
}

// startController runs the ApplicationSet controller for ns with
// listGenerate, changed by configure, until the test ends, and returns a
// direct client.
func startController(t *testing.T, ns string, configure ...func(*Reconciler)) client.Client {
	t.Helper()
	return cluster.StartManager(t, func(mgr manager.Manager) error {
		r := &Reconciler{Client: mgr.GetClient(), Namespace: ns, Generate: listGenerate, PolicyOverride: true}
		for _, f := range configure {
			f(r)
		}
		return r.SetupWithManager(mgr)
	})
}

// startAppController runs the Application controller for ns too (syncs
// and health), comparing every 2 s, as skiff server runs it next to this one.
func startAppController(t *testing.T, ns string) {
	t.Helper()
	live, err := clustercache.New(cluster.Config, clustercache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := reposerver.NewInDir(t.TempDir(), reposerver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = live.Start(ctx) }()
	direct := cluster.Client(t)
	cluster.StartManager(t, func(mgr manager.Manager) error {
		r := &application.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Namespace: ns, Repo: repo, Cache: live,
			Engine: &syncengine.Engine{Client: direct, Poll: 100 * time.Millisecond, WaveTimeout: time.Minute,
				Health: func(*unstructured.Unstructured) (v1alpha1.HealthStatusCode, string) {
					return v1alpha1.HealthStatusHealthy, ""
				}},
			RefreshPeriod: 2 * time.Second}
		return r.SetupWithManager(mgr)
	})
}

// readSet reads the fixture testdata/<file> into ns.
func readSet(t *testing.T, file, ns string) *v1alpha1.ApplicationSet {
	t.Helper()
	set := &v1alpha1.ApplicationSet{}
	testcluster.ReadYAML(t, "testdata/"+file, set, ns)
	return set
}

// elements sets the List elements of set's first generator.
func elements(t *testing.T, set *v1alpha1.ApplicationSet, elems ...string) {
	t.Helper()
	set.Spec.Generators[0].List.Elements = nil
	for _, e := range elems {
		var raw json.RawMessage
		if err := yaml.Unmarshal([]byte(e), &raw); err != nil {
			t.Fatal(err)
		}
		set.Spec.Generators[0].List.Elements = append(set.Spec.Generators[0].List.Elements, apiextensionsv1.JSON{Raw: raw})
	}
}

// createSet creates set and waits for its n apps, which it returns.
func createSet(t *testing.T, c client.Client, set *v1alpha1.ApplicationSet, n int) map[string]v1alpha1.Application {
	t.Helper()
	if err := c.Create(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	return waitApps(t, c, set.Namespace, fmt.Sprintf("%d apps", n), func(a map[string]v1alpha1.Application) bool { return len(a) == n })
}

// waitSet reads the set every 200 ms until cond holds (up to 60 s).
func waitSet(t *testing.T, c client.Client, set *v1alpha1.ApplicationSet, what string, cond func(*v1alpha1.ApplicationSet) bool) *v1alpha1.ApplicationSet {
	t.Helper()
	got := &v1alpha1.ApplicationSet{}
	testwait.Eventually(t, what, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(set), got); err != nil {
			return err
		}
		if !cond(got) {
			status, _ := yaml.Marshal(got.Status)
			return fmt.Errorf("status:\n%s", status)
		}
		return nil
	}, testwait.Timeout(60*time.Second), testwait.Interval(200*time.Millisecond))
	return got
}

// waitApps lists the Applications of ns every 200 ms until cond holds (up
// to 60 s) and returns them by name.
func waitApps(t *testing.T, c client.Client, ns, what string, cond func(map[string]v1alpha1.Application) bool) map[string]v1alpha1.Application {
	t.Helper()
	var apps map[string]v1alpha1.Application
	testwait.Eventually(t, what, func() error {
		list := &v1alpha1.ApplicationList{}
		if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return err
		}
		apps = map[string]v1alpha1.Application{}
		for _, a := range list.Items {
			apps[a.Name] = a
		}
		if !cond(apps) {
			return fmt.Errorf("apps: %v", names(apps))
		}
		return nil
	}, testwait.Timeout(60*time.Second), testwait.Interval(200*time.Millisecond))
	return apps
}

func names(apps map[string]v1alpha1.Application) []string {
	var out []string
	for n := range apps {
		out = append(out, n)
	}
	return out
}

// condition is set's condition of type t, or a zero one.
func condition(set *v1alpha1.ApplicationSet, t v1alpha1.ApplicationSetConditionType) v1alpha1.ApplicationSetCondition {
	for _, c := range set.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return v1alpha1.ApplicationSetCondition{}
}

// upToDate holds once the set's last pass changed everything it wanted.
func upToDate(set *v1alpha1.ApplicationSet) bool {
	return condition(set, v1alpha1.ApplicationSetConditionResourcesUpToDate).Status == v1alpha1.ApplicationSetConditionStatusTrue
}

// update changes the set as change says, read afresh, with a merge patch:
// the controller's status writes meanwhile do not make it conflict.
func update(t *testing.T, c client.Client, set *v1alpha1.ApplicationSet, change func(*v1alpha1.ApplicationSet)) {
	t.Helper()
	cur := &v1alpha1.ApplicationSet{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(set), cur); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cur.DeepCopy())
	change(cur)
	if err := c.Patch(context.Background(), cur, patch); err != nil {
		t.Fatal(err)
	}
}
