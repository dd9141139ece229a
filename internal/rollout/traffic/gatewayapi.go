package traffic

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// httpRouteGVK is the served Gateway API version Skiff writes HTTPRoutes through.
var httpRouteGVK = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}

// gatewayAPIConfig is the argoproj-labs/gatewayAPI plugin configuration, as
// far as Skiff implements it. Route kinds other than HTTPRoute and route
// selectors are rejected by decodeInto as unknown fields.
type gatewayAPIConfig struct {
	HTTPRoute  string `json:"httpRoute,omitempty"`
	HTTPRoutes []struct {
		Name            string `json:"name"`
		UseHeaderRoutes bool   `json:"useHeaderRoutes,omitempty"`
	} `json:"httpRoutes,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Used by the plugin for header routes and its in-progress label, which
	// Skiff does not implement; accepted so existing Rollouts keep working.
	ConfigMap              string `json:"configMap,omitempty"`
	DisableInProgressLabel bool   `json:"disableInProgressLabel,omitempty"`
	InProgressLabelKey     string `json:"inProgressLabelKey,omitempty"`
	InProgressLabelValue   string `json:"inProgressLabelValue,omitempty"`
}

// gatewayAPIRouter sets backendRef weights on HTTPRoutes.
type gatewayAPIRouter struct {
	c             client.Client
	namespace     string
	routes        []string
	canaryService string
	stableService string
	maxWeight     int32
}

func newGatewayAPI(c client.Client, ro *v1alpha1.Rollout, raw any, maxWeight int32) (*gatewayAPIRouter, error) {
	var cfg gatewayAPIConfig
	if err := decodeInto(raw, &cfg); err != nil {
		return nil, fmt.Errorf("trafficRouting.plugins[%q]: %w", GatewayAPIPlugin, err)
	}
	routes := appendUnique(nil, cfg.HTTPRoute)
	for _, r := range cfg.HTTPRoutes {
		routes = appendUnique(routes, r.Name)
	}
	if len(routes) == 0 {
		return nil, fmt.Errorf("trafficRouting.plugins[%q] names no httpRoute", GatewayAPIPlugin)
	}
	ns := cfg.Namespace
	if ns == "" {
		ns = ro.Namespace
	}
	return &gatewayAPIRouter{
		c:             c,
		namespace:     ns,
		routes:        routes,
		canaryService: ro.Spec.Strategy.Canary.CanaryService,
		stableService: ro.Spec.Strategy.Canary.StableService,
		maxWeight:     maxWeight,
	}, nil
}

// Type implements Router.
func (r *gatewayAPIRouter) Type() string { return GatewayAPIPlugin }

// SetWeight gives every backendRef to the canary Service weight and every
// backendRef to the stable Service the rest, in every rule of every HTTPRoute.
func (r *gatewayAPIRouter) SetWeight(ctx context.Context, weight int32) error {
	for _, name := range r.routes {
		if err := r.setRouteWeight(ctx, name, weight); err != nil {
			return fmt.Errorf("HTTPRoute %s/%s: %w", r.namespace, name, err)
		}
	}
	return nil
}

func (r *gatewayAPIRouter) setRouteWeight(ctx context.Context, name string, weight int32) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		route := &unstructured.Unstructured{}
		route.SetGroupVersionKind(httpRouteGVK)
		if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.namespace, Name: name}, route); err != nil {
			return err
		}
		rules, _, err := unstructured.NestedSlice(route.Object, "spec", "rules")
		if err != nil {
			return err
		}
		var foundCanary, foundStable bool
		for _, rule := range rules {
			ruleMap, ok := rule.(map[string]any)
			if !ok {
				continue
			}
			refs, _ := ruleMap["backendRefs"].([]any)
			for _, ref := range refs {
				refMap, ok := ref.(map[string]any)
				if !ok || !isServiceRef(refMap) {
					continue
				}
				switch refMap["name"] {
				case r.canaryService:
					refMap["weight"] = int64(weight)
					foundCanary = true
				case r.stableService:
					refMap["weight"] = int64(r.maxWeight - weight)
					foundStable = true
				}
			}
		}
		var missing []string
		if !foundCanary {
			missing = append(missing, "canary Service "+r.canaryService)
		}
		if !foundStable {
			missing = append(missing, "stable Service "+r.stableService)
		}
		if len(missing) > 0 {
			return errors.New("no backendRef to the " + strings.Join(missing, " or the "))
		}
		if err := unstructured.SetNestedSlice(route.Object, rules, "spec", "rules"); err != nil {
			return err
		}
		return r.c.Update(ctx, route)
	})
}

// isServiceRef reports whether a backendRef points at a core Service, the
// default when group and kind are left out.
func isServiceRef(ref map[string]any) bool {
	group, _ := ref["group"].(string)
	kind, hasKind := ref["kind"].(string)
	return group == "" && (!hasKind || kind == "Service")
}
