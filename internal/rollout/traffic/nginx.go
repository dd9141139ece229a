package traffic

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

const (
	// defaultNginxAnnotationPrefix is ingress-nginx's annotation prefix.
	defaultNginxAnnotationPrefix = "nginx.ingress.kubernetes.io"
	// ingressClassAnnotation must match the stable Ingress for ingress-nginx
	// to pair the canary Ingress with it.
	ingressClassAnnotation = "kubernetes.io/ingress.class"
	canaryIngressSuffix    = "-canary"
	// maxObjectNameLength is the longest name an Ingress may have.
	maxObjectNameLength = 253
)

// nginxConfig is trafficRouting.nginx.
type nginxConfig struct {
	StableIngress                string            `json:"stableIngress,omitempty"`
	StableIngresses              []string          `json:"stableIngresses,omitempty"`
	AnnotationPrefix             string            `json:"annotationPrefix,omitempty"`
	AdditionalIngressAnnotations map[string]string `json:"additionalIngressAnnotations,omitempty"`
}

// nginxRouter maintains one canary Ingress per stable Ingress: a copy of the
// stable Ingress's rules that reach the stable Service, pointed at the canary
// Service and annotated with the canary weight.
type nginxRouter struct {
	c               client.Client
	rollout         *v1alpha1.Rollout
	stableIngresses []string
	prefix          string
	additional      map[string]string
	maxWeight       int32
}

func newNginx(c client.Client, ro *v1alpha1.Rollout, raw any, maxWeight int32) (*nginxRouter, error) {
	var cfg nginxConfig
	if err := decodeInto(raw, &cfg); err != nil {
		return nil, fmt.Errorf("trafficRouting.nginx: %w", err)
	}
	// As in Argo Rollouts, stableIngresses wins over stableIngress.
	ingresses := appendUnique(nil, cfg.StableIngresses...)
	if len(cfg.StableIngresses) == 0 {
		ingresses = appendUnique(nil, cfg.StableIngress)
	}
	if len(ingresses) == 0 {
		return nil, fmt.Errorf("trafficRouting.nginx names no stableIngress")
	}
	prefix := cfg.AnnotationPrefix
	if prefix == "" {
		prefix = defaultNginxAnnotationPrefix
	}
	return &nginxRouter{
		c:               c,
		rollout:         ro,
		stableIngresses: ingresses,
		prefix:          prefix,
		additional:      cfg.AdditionalIngressAnnotations,
		maxWeight:       maxWeight,
	}, nil
}

// Type implements Router.
func (r *nginxRouter) Type() string { return "Nginx" }

// CanaryIngressName is the name of the canary Ingress Argo Rollouts (and
// Skiff) creates for a stable Ingress: <rollout>-<stableIngress>-canary,
// shortened to fit an object name.
func CanaryIngressName(rollout, stableIngress string) string {
	prefix := rollout + "-" + stableIngress
	if limit := maxObjectNameLength - len(canaryIngressSuffix); len(prefix) > limit {
		prefix = prefix[:limit]
	}
	return prefix + canaryIngressSuffix
}

// SetWeight creates or updates the canary Ingress of every stable Ingress.
func (r *nginxRouter) SetWeight(ctx context.Context, weight int32) error {
	for _, stableName := range r.stableIngresses {
		if err := r.setIngressWeight(ctx, stableName, weight); err != nil {
			return fmt.Errorf("canary Ingress for %s/%s: %w", r.rollout.Namespace, stableName, err)
		}
	}
	return nil
}

func (r *nginxRouter) setIngressWeight(ctx context.Context, stableName string, weight int32) error {
	var stable networkingv1.Ingress
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.rollout.Namespace, Name: stableName}, &stable); err != nil {
		return fmt.Errorf("reading the stable Ingress: %w", err)
	}
	desired, err := r.canaryIngress(&stable, weight)
	if err != nil {
		return err
	}

	var current networkingv1.Ingress
	err = r.c.Get(ctx, client.ObjectKeyFromObject(desired), &current)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.c.Create(ctx, desired); err != nil {
			return fmt.Errorf("creating %s: %w", desired.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading %s: %w", desired.Name, err)
	}
	// Never take over an Ingress someone else made under this name.
	if !metav1.IsControlledBy(&current, r.rollout) {
		return fmt.Errorf("%s exists and is not controlled by Rollout %s", desired.Name, r.rollout.Name)
	}
	current.Annotations = desired.Annotations
	current.Labels = desired.Labels
	current.Spec = desired.Spec
	if err := r.c.Update(ctx, &current); err != nil {
		return fmt.Errorf("updating %s: %w", desired.Name, err)
	}
	return nil
}

// canaryIngress builds the desired canary Ingress from the stable one.
func (r *nginxRouter) canaryIngress(stable *networkingv1.Ingress, weight int32) (*networkingv1.Ingress, error) {
	canaryService := r.rollout.Spec.Strategy.Canary.CanaryService
	stableService := r.rollout.Spec.Strategy.Canary.StableService
	canary := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Name:            CanaryIngressName(r.rollout.Name, stable.Name),
			Namespace:       stable.Namespace,
			Annotations:     map[string]string{},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(r.rollout, v1alpha1.GroupVersion.WithKind("Rollout"))},
		},
		Spec: networkingv1.IngressSpec{
			IngressClassName: stable.Spec.IngressClassName,
		},
	}
	for _, tls := range stable.Spec.TLS {
		canary.Spec.TLS = append(canary.Spec.TLS, *tls.DeepCopy())
	}
	if class, ok := stable.Annotations[ingressClassAnnotation]; ok {
		canary.Annotations[ingressClassAnnotation] = class
	}
	// Only rules that reach the stable Service are copied; in them, paths
	// to the stable Service go to the canary Service instead.
	for _, rule := range stable.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		copied := rule.DeepCopy()
		reachesStable := false
		for i := range copied.HTTP.Paths {
			svc := copied.HTTP.Paths[i].Backend.Service
			if svc != nil && svc.Name == stableService {
				svc.Name = canaryService
				reachesStable = true
			}
		}
		if reachesStable {
			canary.Spec.Rules = append(canary.Spec.Rules, *copied)
		}
	}
	if len(canary.Spec.Rules) == 0 {
		return nil, fmt.Errorf("stable Ingress %s has no rule with a backend to the stable Service %s", stable.Name, stableService)
	}

	for key, value := range r.additional {
		if !strings.HasPrefix(key, r.prefix) {
			key = r.prefix + "/" + key
		}
		canary.Annotations[key] = value
	}
	// canary and canary-weight are always Skiff's; a canary-by-header or
	// canary-by-cookie among the additional annotations still takes precedence
	// in ingress-nginx.
	canary.Annotations[r.prefix+"/canary"] = "true"
	canary.Annotations[r.prefix+"/canary-weight"] = strconv.Itoa(int(weight))
	if r.maxWeight != defaultMaxTrafficWeight {
		canary.Annotations[r.prefix+"/canary-weight-total"] = strconv.Itoa(int(r.maxWeight))
	}
	return canary, nil
}
