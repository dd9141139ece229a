package rollout

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// annotationRole records which role's metadata the pods of a ReplicaSet
// were last given, so a pass that failed half way is finished by the next.
const annotationRole = "rollout.skiff.io/pod-role"

// syncRoleMetadata gives the pods of each ReplicaSet the ephemeral metadata
// of its role: blue-green activeMetadata and previewMetadata, canary
// stableMetadata and canaryMetadata. When a ReplicaSet changes role (a
// promotion) its pod template is updated first, so pods created from then
// on have the new metadata, then the pods already running, and last, once
// the ReplicaSet controller has seen the new template, the role annotation;
// a steady state costs no API call.
func (p *pass) syncRoleMetadata(ctx context.Context) error {
	roleOf, roles := p.roles()
	managed := rollout.RoleMetadataKeys(roles, nil)
	managedLabels, managedAnnotations := managed.Labels, managed.Annotations
	if len(managedLabels) == 0 && len(managedAnnotations) == 0 {
		return nil
	}
	for _, rs := range p.allRS {
		name, md := roleOf(rs)
		var want v1alpha1.PodTemplateMetadata
		if md != nil {
			want = *md
		}
		keep := map[string]bool{}
		if rs.Spec.Selector != nil {
			for k := range rs.Spec.Selector.MatchLabels {
				keep[k] = true
			}
		}
		labels, labelsChanged := rollout.ApplyRoleMetadata(rs.Spec.Template.Labels, want.Labels, managedLabels, keep)
		annotations, annotationsChanged := rollout.ApplyRoleMetadata(rs.Spec.Template.Annotations, want.Annotations, managedAnnotations, nil)
		if !labelsChanged && !annotationsChanged && rs.Annotations[annotationRole] == name {
			continue
		}
		if labelsChanged || annotationsChanged {
			patch := client.MergeFrom(rs.DeepCopy())
			rs.Spec.Template.Labels, rs.Spec.Template.Annotations = labels, annotations
			if err := p.patchReplicaSet(ctx, rs, patch); err != nil {
				return fmt.Errorf("updating the pod metadata of ReplicaSet %s/%s: %w", rs.Namespace, rs.Name, err)
			}
		}
		if err := p.relabelPods(ctx, rs, want, managedLabels, managedAnnotations, keep); err != nil {
			return err
		}
		if rs.Status.ObservedGeneration < rs.Generation {
			// The ReplicaSet controller may still create pods from the old
			// template: look at the pods again once it has seen the new one.
			p.requeueAfter(time.Second)
			continue
		}
		if err := p.setAnnotation(ctx, rs, annotationRole, name); err != nil {
			return err
		}
	}
	return nil
}

// roleMetadata lists the metadata of all roles of the strategy.
func (p *pass) roleMetadata() []*v1alpha1.PodTemplateMetadata {
	_, roles := p.roles()
	return roles
}

// roles says which role each ReplicaSet's pods have (and its metadata),
// and lists the metadata of all roles of the strategy.
func (p *pass) roles() (func(*appsv1.ReplicaSet) (string, *v1alpha1.PodTemplateMetadata), []*v1alpha1.PodTemplateMetadata) {
	st := p.status
	if bg := p.ro.Spec.Strategy.BlueGreen; bg != nil {
		return func(rs *appsv1.ReplicaSet) (string, *v1alpha1.PodTemplateMetadata) {
			switch hash := rs.Labels[rollout.PodTemplateHashLabel]; {
			case hash == st.BlueGreen.ActiveSelector:
				return "active", bg.ActiveMetadata
			case rs == p.newRS:
				return "preview", bg.PreviewMetadata
			}
			return "", nil
		}, []*v1alpha1.PodTemplateMetadata{bg.ActiveMetadata, bg.PreviewMetadata}
	}
	canary := p.ro.Spec.Strategy.Canary
	return func(rs *appsv1.ReplicaSet) (string, *v1alpha1.PodTemplateMetadata) {
		switch hash := rs.Labels[rollout.PodTemplateHashLabel]; {
		case hash == st.StableRS:
			return "stable", canary.StableMetadata
		case rs == p.newRS:
			return "canary", canary.CanaryMetadata
		}
		return "", nil
	}, []*v1alpha1.PodTemplateMetadata{canary.StableMetadata, canary.CanaryMetadata}
}

// relabelPods puts the role's metadata on the running pods of rs.
func (p *pass) relabelPods(ctx context.Context, rs *appsv1.ReplicaSet, want v1alpha1.PodTemplateMetadata, managedLabels, managedAnnotations, keep map[string]bool) error {
	if rs.Status.Replicas == 0 && specReplicas(rs) == 0 {
		return nil
	}
	var pods corev1.PodList
	err := p.r.APIReader.List(ctx, &pods, client.InNamespace(rs.Namespace),
		client.MatchingLabels{rollout.PodTemplateHashLabel: rs.Labels[rollout.PodTemplateHashLabel]})
	if err != nil {
		return fmt.Errorf("listing the pods of ReplicaSet %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		labels, labelsChanged := rollout.ApplyRoleMetadata(pod.Labels, want.Labels, managedLabels, keep)
		annotations, annotationsChanged := rollout.ApplyRoleMetadata(pod.Annotations, want.Annotations, managedAnnotations, nil)
		if !labelsChanged && !annotationsChanged {
			continue
		}
		patch := client.MergeFrom(pod.DeepCopy())
		pod.Labels, pod.Annotations = labels, annotations
		if err := p.r.Client.Patch(ctx, pod, patch); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("updating the metadata of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	return nil
}
