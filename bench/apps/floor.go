package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/internal/testcluster"
)

func runFloor(ctx context.Context, n int) (time.Duration, error) {
	cluster, err := testcluster.Start(ctx, testcluster.Options{})
	if err != nil {
		return 0, err
	}
	defer cluster.Stop()
	c, err := newClient(cluster.Config)
	if err != nil {
		return 0, err
	}
	objs := make([][]*unstructured.Unstructured, n)
	for i := range n {
		for _, doc := range manifests(i, 0) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return 0, err
			}
			u.SetNamespace(appNS(i))
			objs[i] = append(objs[i], u)
		}
	}
	apply := func(u *unstructured.Unstructured) error {
		return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership)
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
	if err := forEach(n, func(i int) error {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(appNS(i))
		return apply(ns)
	}); err != nil {
		return 0, err
	}
	var flat []*unstructured.Unstructured
	for _, o := range objs {
		flat = append(flat, o...)
	}
	if err := forEach(len(flat), func(i int) error {
		if err := apply(flat[i]); err != nil {
			return err
		}
		if flat[i].GetKind() == marked {
			steps.mark(appKey(flat[i].GetNamespace()), 0)
		}
		return nil
	}); err != nil {
		return 0, err
	}
	if marked != "Deployment" {
		return time.Since(start), nil // applied is all a ConfigMap becomes
	}
	newList := func() client.ObjectList { return &appsv1.DeploymentList{} }
	err = waitWatch(ctx, c, "floor Deployments Available", waitTimeout, nil, newList, nil, func(objs map[types.NamespacedName]client.Object, _ *types.NamespacedName) (bool, string) {
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
	return time.Since(start), err
}

func available(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas >= 1
		}
	}
	return false
}
