package traffic

import (
	"errors"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestNewRejectsRoutersSkiffDoesNotImplement(t *testing.T) {
	gateway := map[string]any{"httpRoute": "web"}
	tests := map[string]struct {
		routing   map[string]any
		pingPong  bool
		noCanary  bool
		wantTypes []string
		wantErr   string
	}{
		"the gateway API plugin is supported": {
			routing:   map[string]any{"plugins": map[string]any{GatewayAPIPlugin: gateway}},
			wantTypes: []string{GatewayAPIPlugin},
		},
		"nginx is supported": {
			routing:   map[string]any{"nginx": map[string]any{"stableIngress": "web"}},
			wantTypes: []string{"Nginx"},
		},
		"nginx and the gateway API plugin together give two routers": {
			routing:   map[string]any{"nginx": map[string]any{"stableIngress": "web"}, "plugins": map[string]any{GatewayAPIPlugin: gateway}, "managedRoutes": []any{}},
			wantTypes: []string{"Nginx", GatewayAPIPlugin},
		},
		"istio is named as unsupported": {
			routing: map[string]any{"istio": map[string]any{}},
			wantErr: "trafficRouting.istio not supported by Skiff",
		},
		"several unsupported routers are all named": {
			routing: map[string]any{"alb": map[string]any{}, "smi": map[string]any{}, "plugins": map[string]any{"argoproj-labs/contour": map[string]any{}}},
			wantErr: "trafficRouting.alb, trafficRouting.plugins.argoproj-labs/contour, trafficRouting.smi not supported",
		},
		"a GRPCRoute in the gateway API plugin is unsupported": {
			routing: map[string]any{"plugins": map[string]any{GatewayAPIPlugin: map[string]any{"grpcRoute": "rpc"}}},
			wantErr: `unknown field "grpcRoute"`,
		},
		"the gateway API plugin without a route is an error": {
			routing: map[string]any{"plugins": map[string]any{GatewayAPIPlugin: map[string]any{"namespace": "x"}}},
			wantErr: "names no httpRoute",
		},
		"nginx without a stable Ingress is an error": {
			routing: map[string]any{"nginx": map[string]any{"annotationPrefix": "x"}},
			wantErr: "names no stableIngress",
		},
		"an empty trafficRouting is an error": {
			routing: map[string]any{},
			wantErr: "names no traffic router",
		},
		"a bad maxTrafficWeight is an error": {
			routing: map[string]any{"maxTrafficWeight": int64(0), "nginx": map[string]any{"stableIngress": "web"}},
			wantErr: "maxTrafficWeight 0 is not a positive integer",
		},
		"pingPong is unsupported": {
			routing:  map[string]any{"nginx": map[string]any{"stableIngress": "web"}},
			pingPong: true,
			wantErr:  "pingPong is not supported",
		},
		"the canary and stable Services are required": {
			routing:  map[string]any{"nginx": map[string]any{"stableIngress": "web"}},
			noCanary: true,
			wantErr:  "needs both canary.canaryService and canary.stableService",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ro := &v1alpha1.Rollout{Spec: v1alpha1.RolloutSpec{Strategy: v1alpha1.RolloutStrategy{Canary: &v1alpha1.CanaryStrategy{
				CanaryService: "app-canary", StableService: "app-stable", TrafficRouting: &v1alpha1.RolloutTrafficRouting{},
			}}}}
			ro.Name, ro.Namespace = "app", "default"
			if tc.pingPong {
				ro.Spec.Strategy.Canary.PingPong = &v1alpha1.PingPongSpec{PingService: "ping", PongService: "pong"}
			}
			if tc.noCanary {
				ro.Spec.Strategy.Canary.CanaryService = ""
			}
			routers, err := routersFor(nil, ro, tc.routing)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, r := range routers {
				types = append(types, r.Type())
			}
			if strings.Join(types, ",") != strings.Join(tc.wantTypes, ",") {
				t.Errorf("router types %v, want %v", types, tc.wantTypes)
			}
		})
	}
}

func TestNewReadsRouterFieldsTheTypedRolloutDrops(t *testing.T) {
	c := newClient(t)
	ns := cluster.Namespace(t)
	ro := createRollout(t, c, ns, "app", map[string]any{"istio": map[string]any{"virtualService": map[string]any{"name": "vs"}}})
	_, err := New(c, ro)
	if err == nil || !strings.Contains(err.Error(), "trafficRouting.istio not supported") {
		t.Errorf("New error = %v, want istio named as unsupported", err)
	}
	if config := (*ConfigError)(nil); !errors.As(err, &config) {
		t.Errorf("New error = %#v, want a *ConfigError: no retry can run the spec", err)
	}

	plain := &v1alpha1.Rollout{}
	plain.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{}
	if routers, err := New(c, plain); err != nil || routers != nil {
		t.Errorf("New without trafficRouting = %v, %v; want no routers and no error", routers, err)
	}
}
