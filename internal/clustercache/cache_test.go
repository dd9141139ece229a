package clustercache

import (
	"context"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/internal/crds"
	"github.com/skiffcd/skiff/internal/testwait"
)

func startCache(t *testing.T) (*Cache, *eventLog) {
	t.Helper()
	return startCacheWith(t, Options{})
}

func startCacheWith(t *testing.T, opts Options) (*Cache, *eventLog) {
	t.Helper()
	c, err := New(cluster.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	events := &eventLog{}
	c.Subscribe(events.add)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// The context bounds the watches' lifetime, not just the start.
	timer := time.AfterFunc(time.Minute, cancel)
	err = c.Start(ctx)
	timer.Stop()
	if err != nil {
		t.Fatal(err)
	}
	return c, events
}

type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) matching(match func(Event) bool) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.events {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

func (l *eventLog) count(match func(Event) bool) int { return len(l.matching(match)) }

func (l *eventLog) has(match func(Event) bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if match(e) {
			return true
		}
	}
	return false
}

func TestCacheIndexesAppObjectsAndTheirChildren(t *testing.T) {
	ctx := context.Background()
	c, events := startCache(t)
	ns := cluster.Namespace(t)
	client := kubernetes.NewForConfigOrDie(cluster.Config)

	labels := map[string]string{"app": "api"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns,
			Annotations: map[string]string{TrackingAnnotation: "shop:apps/Deployment:" + ns + "/api"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: "nginx:1.27"}}},
			},
		},
	}
	created, err := client.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A ConfigMap carrying a tracking annotation that describes another
	// object (copied, not owned) must not count as the app's.
	copied := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "copied", Namespace: ns,
		Annotations: map[string]string{TrackingAnnotation: "shop:apps/Deployment:" + ns + "/api"}}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, copied, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	testwait.Eventually(t, "the Deployment to be indexed under its app", func() bool {
		objs := c.AppObjects("shop")
		return len(objs) == 1 && objs[0].GetName() == "api" && objs[0].GetNamespace() == ns
	})
	if !events.has(func(e Event) bool { return e.App == "shop" && e.Key.Kind == "Deployment" }) {
		t.Errorf("no event for the app's Deployment")
	}
	testwait.Eventually(t, "Deployments to be watched whole once one is tracked", func() bool {
		return c.watchesWhole(schema.GroupKind{Group: "apps", Kind: "Deployment"})
	})

	var rs *unstructured.Unstructured
	testwait.Eventually(t, "the ReplicaSet to be a child of the Deployment", func() bool {
		kids := c.Children(created.UID)
		if len(kids) == 1 && kids[0].GetKind() == "ReplicaSet" {
			rs = kids[0]
			return true
		}
		return false
	})
	testwait.Eventually(t, "two Pods to be children of the ReplicaSet", func() bool {
		return len(c.Children(rs.GetUID())) == 2
	})
	if c.watchesWhole(schema.GroupKind{Kind: "Pod"}) || c.watchesWhole(schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}) {
		t.Errorf("Pods or ReplicaSets, which no app tracks, are watched whole")
	}
	if _, ok := c.Get(ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "copied"}); !ok {
		t.Errorf("the untracked ConfigMap is not cached at all")
	}

	if err := client.AppsV1().Deployments(ns).Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the deleted Deployment to leave the app", func() bool { return len(c.AppObjects("shop")) == 0 })
	if !events.has(func(e Event) bool { return e.App == "shop" && e.Deleted }) {
		t.Errorf("no deletion event for the app")
	}
}

// Kinds installed after start (an app that ships its CRDs) are watched
// without a restart.
func TestCacheWatchesKindsOfCRDsInstalledLater(t *testing.T) {
	ctx := context.Background()
	c, _ := startCache(t)
	ns := cluster.Namespace(t)
	if c.Watches(schema.GroupKind{Group: "argoproj.io", Kind: "AnalysisTemplate"}) {
		t.Fatal("argoproj.io CRDs are already installed: this test needs a cluster without them")
	}
	installCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := crds.Install(installCtx, cluster.Config, time.Minute); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cluster.Config)
	gvr := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysistemplates"}
	at := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "AnalysisTemplate",
		"metadata": map[string]any{"name": "success-rate", "annotations": map[string]any{
			TrackingAnnotation: "canary:argoproj.io/AnalysisTemplate:" + ns + "/success-rate"}},
		"spec": map[string]any{"metrics": []any{map[string]any{"name": "m", "provider": map[string]any{"web": map[string]any{"url": "http://127.0.0.1"}}}}},
	}}
	testwait.Eventually(t, "the new kind to be watched", func() bool {
		return c.Watches(schema.GroupKind{Group: "argoproj.io", Kind: "AnalysisTemplate"})
	})
	if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, at, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the AnalysisTemplate to be indexed under its app", func() bool {
		return len(c.AppObjects("canary")) == 1
	})
}
