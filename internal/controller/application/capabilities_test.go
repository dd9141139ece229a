package application

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/crds"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// capsChart renders a ConfigMap that says which example.com kinds its
// cluster serves, as Helm's .Capabilities tell it.
const capsChart = `apiVersion: v1
kind: ConfigMap
metadata:
  name: caps
data:
  widgets: {{ .Capabilities.APIVersions.Has "example.com/v1" | quote }}
  gadgets: {{ .Capabilities.APIVersions.Has "example.com/v1/Gadget" | quote }}
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
`

// A Helm chart renders with the capabilities of its app's destination, as
// in Argo CD: the same chart sees example.com/v1 in the registered cluster
// that serves it and not in the local one, and a kind the registered
// cluster serves later shows in its app's next render, without a restart.
func TestHelmRendersWithTheDestinationsCapabilities(t *testing.T) {
	ctx := context.Background()
	target := startCluster(t)
	installExampleCRD(t, target, "Widget", "widgets")

	argocd := cluster.Namespace(t)
	reg := startSecretsRegistry(t, argocd)
	register(t, argocd, registered("east", target))
	c, _ := startReconciler(t, argocd, 2*time.Second, func(r *Reconciler) {
		r.Clusters = reg
		r.Connect = testConnector(t)
	})
	repo := testgit.New(t)
	repo.Commit(map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: caps\nversion: 0.1.0\n", "chart/templates/caps.yaml": capsChart})
	policy := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}}
	dests := map[string]struct {
		dest   v1alpha1.ApplicationDestination
		client client.Client
	}{
		"local": {v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: cluster.Namespace(t)}, c},
		"east":  {v1alpha1.ApplicationDestination{Name: "east", Namespace: target.Namespace(t)}, target.Client(t)},
	}
	for where, d := range dests {
		app := newApp(argocd, "caps-"+where, repo.URL(), "chart", "", policy)
		app.Spec.Destination = d.dest
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	caps := func(where string) map[string]string {
		cm := &corev1.ConfigMap{}
		d := dests[where]
		if err := d.client.Get(ctx, client.ObjectKey{Namespace: d.dest.Namespace, Name: "caps"}, cm); err != nil {
			return nil
		}
		return cm.Data
	}
	testwait.Eventually(t, "each cluster's capabilities rendered", func() bool {
		return caps("local")["widgets"] == "false" && caps("east")["widgets"] == "true"
	}, testwait.Timeout(clusterWait))
	if v := caps("east")["kubeVersion"]; v == "" || v[0] != 'v' {
		t.Errorf("east's kubeVersion %q, want the server's git version", v)
	}

	installExampleCRD(t, target, "Gadget", "gadgets")
	testwait.Eventually(t, "east's new kind in its app's render", func() bool {
		return caps("east")["gadgets"] == "true"
	}, testwait.Timeout(clusterWait))
	if got := caps("local")["gadgets"]; got != "false" {
		t.Errorf("the local app renders gadgets %q, want false", got)
	}
}

// installExampleCRD installs the namespaced kind example.com/v1 kind in c
// and waits until it is served.
func installExampleCRD(t *testing.T, c *testcluster.Cluster, kind, plural string) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: plural[:len(plural)-1]},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(c.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Create(context.Background(), crd); err != nil {
		t.Fatal(err)
	}
	if err := crds.WaitServed(context.Background(), c.Config, []*apiextensionsv1.CustomResourceDefinition{crd}, time.Minute); err != nil {
		t.Fatal(err)
	}
}
