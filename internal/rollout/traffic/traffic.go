// Package traffic moves traffic between the canary and stable Services of a
// Rollout whose canary strategy has trafficRouting: it sets backend weights on
// Gateway API HTTPRoutes (the argoproj-labs/gatewayAPI plugin configuration)
// and maintains the NGINX canary Ingress, as Argo Rollouts does.
package traffic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Router sets the canary weight on one traffic router.
type Router interface {
	// SetWeight sends weight (out of maxTrafficWeight, 100 by default) of the
	// traffic to the canary Service and the rest to the stable Service.
	SetWeight(ctx context.Context, weight int32) error
	// Type names the router, such as "Nginx".
	Type() string
}

// GatewayAPIPlugin is the trafficRouting.plugins key of the Argo Rollouts
// Gateway API plugin, whose configuration Skiff understands natively.
const GatewayAPIPlugin = "argoproj-labs/gatewayAPI"

// defaultMaxTrafficWeight is the total weight when trafficRouting.maxTrafficWeight is unset.
const defaultMaxTrafficWeight = 100

// readTimeout bounds the read of the Rollout in New, which has no context.
const readTimeout = 30 * time.Second

// New returns the routers ro's trafficRouting names, or nil when it has none.
// It is NewWithContext bounded to 30 seconds.
func New(c client.Client, ro *v1alpha1.Rollout) ([]Router, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	return NewWithContext(ctx, c, ro)
}

// NewWithContext returns the routers ro's trafficRouting names, or nil when it
// has no trafficRouting. The typed Rollout drops router fields Skiff does not
// model (nginx, maxTrafficWeight, other routers), so the Rollout is read once
// more from the API server as unstructured; the CRD keeps those fields. A
// router Skiff does not implement is a *ConfigError naming it.
func NewWithContext(ctx context.Context, c client.Client, ro *v1alpha1.Rollout) ([]Router, error) {
	canary := ro.Spec.Strategy.Canary
	if canary == nil || canary.TrafficRouting == nil {
		return nil, nil
	}
	raw := &unstructured.Unstructured{}
	raw.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Rollout"))
	if err := c.Get(ctx, client.ObjectKeyFromObject(ro), raw); err != nil {
		return nil, fmt.Errorf("reading Rollout %s/%s for its trafficRouting: %w", ro.Namespace, ro.Name, err)
	}
	routing, _, err := unstructured.NestedMap(raw.Object, "spec", "strategy", "canary", "trafficRouting")
	if err != nil {
		return nil, fmt.Errorf("reading spec.strategy.canary.trafficRouting of Rollout %s/%s: %w", ro.Namespace, ro.Name, err)
	}
	owner := ro.DeepCopy()
	if owner.UID == "" {
		owner.UID = raw.GetUID()
	}
	routers, err := routersFor(c, owner, routing)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return routers, nil
}

// ConfigError is a trafficRouting Skiff cannot run: a router it does not
// implement, a missing or malformed setting. Retrying cannot help; the
// Rollout controller reports it in the InvalidSpec condition.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// routersFor builds the routers from the raw trafficRouting map.
func routersFor(c client.Client, ro *v1alpha1.Rollout, routing map[string]any) ([]Router, error) {
	canary := ro.Spec.Strategy.Canary
	if canary.PingPong != nil {
		return nil, errors.New("trafficRouting with canary.pingPong is not supported by Skiff")
	}
	if canary.CanaryService == "" || canary.StableService == "" {
		return nil, errors.New("trafficRouting needs both canary.canaryService and canary.stableService")
	}

	var unsupported []string
	for key := range routing {
		switch key {
		case "plugins", "nginx", "maxTrafficWeight", "managedRoutes":
		default:
			unsupported = append(unsupported, key)
		}
	}
	plugins, _ := routing["plugins"].(map[string]any)
	for name := range plugins {
		if name != GatewayAPIPlugin {
			unsupported = append(unsupported, "plugins."+name)
		}
	}
	if len(unsupported) > 0 {
		sort.Strings(unsupported)
		return nil, fmt.Errorf("trafficRouting.%s not supported by Skiff (it supports nginx and the %s plugin)",
			strings.Join(unsupported, ", trafficRouting."), GatewayAPIPlugin)
	}

	maxWeight := int32(defaultMaxTrafficWeight)
	if v, ok := routing["maxTrafficWeight"]; ok {
		n, ok := asInt32(v)
		if !ok || n <= 0 {
			return nil, fmt.Errorf("trafficRouting.maxTrafficWeight %v is not a positive integer", v)
		}
		maxWeight = n
	}

	var routers []Router
	if cfg, ok := routing["nginx"]; ok {
		r, err := newNginx(c, ro, cfg, maxWeight)
		if err != nil {
			return nil, err
		}
		routers = append(routers, r)
	}
	if cfg, ok := plugins[GatewayAPIPlugin]; ok {
		r, err := newGatewayAPI(c, ro, cfg, maxWeight)
		if err != nil {
			return nil, err
		}
		routers = append(routers, r)
	}
	if len(routers) == 0 {
		return nil, errors.New("trafficRouting names no traffic router")
	}
	return routers, nil
}

// decodeInto converts a raw JSON-like value into out, rejecting unknown fields
// so that a misspelt or unsupported option is reported rather than ignored.
func decodeInto(raw any, out any) error {
	data, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

func asInt32(v any) (int32, bool) {
	switch n := v.(type) {
	case int64:
		return int32(n), true
	case float64:
		if n == float64(int32(n)) {
			return int32(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return int32(i), err == nil
	}
	return 0, false
}

// appendUnique appends the names not yet in list.
func appendUnique(list []string, names ...string) []string {
	for _, n := range names {
		if n != "" && !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}
