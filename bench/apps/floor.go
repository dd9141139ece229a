package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/internal/testcluster"
)

// runFloor applies the objects of n apps with a plain client, each app's
// to its control plane (-clusters of them, started for the floor), 20 in
// flight per plane and the planes in parallel, and returns the time until
// every plane holds them all (and, for -shape web, every Deployment is
// Available).
func runFloor(ctx context.Context, n int) (time.Duration, error) {
	ps, err := startPlanes(ctx, *clusterCount, testcluster.Options{})
	if err != nil {
		return 0, err
	}
	defer ps.stop()
	cs, err := ps.clients()
	if err != nil {
		return 0, err
	}
	k := len(ps)
	// Each plane's apps, and their objects in apply order.
	apps := make([][]int, k)
	objs := make([][]*unstructured.Unstructured, k)
	for i := range n {
		j := clusterOf(i, k)
		apps[j] = append(apps[j], i)
		for _, doc := range manifests(i, 0) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return 0, err
			}
			u.SetNamespace(appNS(i))
			objs[j] = append(objs[j], u)
		}
	}
	start := time.Now()
	marked := "Deployment" // the object whose apply marks an app's first step
	if *shape == "configmap" {
		marked = "ConfigMap"
	}
	steps := newTimeline(start, marked+" applied", "Deployment Available")
	defer func() {
		fmt.Printf("floor: when the apps reached each step (seconds after the clock started):\n%s", steps)
	}()
	done := make([]time.Duration, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for j := range k {
		wg.Go(func() {
			errs[j] = floorPlane(ctx, cs[j], apps[j], objs[j], marked, steps)
			done[j] = time.Since(start)
		})
	}
	wg.Wait()
	if k > 1 {
		var at []string
		for j := range k {
			at = append(at, secs(done[j]))
		}
		fmt.Printf("floor: each control plane done after %s\n", strings.Join(at, " / "))
	}
	return time.Since(start), errors.Join(errs...)
}

// floorPlane applies, through c, the namespaces of apps and then objs, 20
// at a time, and for Deployments waits until all of them are Available.
func floorPlane(ctx context.Context, c client.WithWatch, apps []int, objs []*unstructured.Unstructured, marked string, steps *timeline) error {
	apply := func(u *unstructured.Unstructured) error {
		return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership)
	}
	if err := forEach(len(apps), func(i int) error {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(appNS(apps[i]))
		return apply(ns)
	}); err != nil {
		return err
	}
	if err := forEach(len(objs), func(i int) error {
		if err := apply(objs[i]); err != nil {
			return err
		}
		if objs[i].GetKind() == marked {
			steps.mark(appKey(objs[i].GetNamespace()), 0)
		}
		return nil
	}); err != nil {
		return err
	}
	if marked != "Deployment" {
		return nil // applied is all a ConfigMap becomes
	}
	n := len(apps)
	newList := func() client.ObjectList { return &appsv1.DeploymentList{} }
	return waitWatch(ctx, c, "floor Deployments Available", waitTimeout, nil, newList, nil, func(objs map[types.NamespacedName]client.Object, _ *types.NamespacedName) (bool, string) {
		ready, example := 0, ""
		for _, obj := range objs {
			d := obj.(*appsv1.Deployment)
			if available(d) {
				steps.mark(appKey(d.Namespace), 1)
				ready++
			} else if example == "" {
				example = fmt.Sprintf("%s/%s: %+v", d.Namespace, d.Name, d.Status.Conditions)
			}
		}
		return ready == n, fmt.Sprintf("%d/%d Deployments Available; e.g. %s", ready, n, example)
	})
}

func available(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas >= 1
		}
	}
	return false
}
