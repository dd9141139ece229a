package main

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

const (
	imageV1 = "registry.example/app:v1"
	imageV2 = "registry.example/app:v2"
	// replicas of every Deployment and Rollout.
	replicas = 2
)

func name(i int) string { return fmt.Sprintf("app-%04d", i) }

// podTemplate is the one pod template of every run (kwok runs its pods
// without pulling the image).
func podTemplate(app string) string {
	return fmt.Sprintf(`  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: app
        image: %[2]s
        ports: [{containerPort: 8080}]
`, app, imageV1)
}

// deployment is the floor's Deployment i.
func deployment(i int) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	src := fmt.Sprintf("metadata: {name: %s}\nspec:\n  replicas: %d\n", name(i), replicas) + podTemplate(name(i))
	if err := yaml.UnmarshalStrict([]byte(src), d); err != nil {
		return nil, fmt.Errorf("the floor's Deployment: %w", err)
	}
	return d, nil
}

// strategies are the Rollouts' strategies, by -strategy name.
var strategies = map[string]string{
	"canary": `  strategy:
    canary:
      steps:
      - setWeight: 50
      - pause: {duration: 2s}
`,
	"bluegreen": `  strategy:
    blueGreen:
      activeService: NAME-active
      previewService: NAME-preview
      autoPromotionEnabled: true
`,
}

// rolloutObject is Rollout i of the strategy.
func rolloutObject(strategy string, i int) (*v1alpha1.Rollout, error) {
	s, ok := strategies[strategy]
	if !ok {
		return nil, fmt.Errorf("no strategy %q", strategy)
	}
	ro := &v1alpha1.Rollout{}
	src := fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: %s}\nspec:\n  replicas: %d\n", name(i), replicas) +
		podTemplate(name(i)) + strings.ReplaceAll(s, "NAME", name(i))
	if err := yaml.UnmarshalStrict([]byte(src), ro); err != nil {
		return nil, fmt.Errorf("the %s Rollout: %w", strategy, err)
	}
	return ro, nil
}

// services are the Services Rollout i of the strategy needs (blue-green's
// active and preview).
func services(strategy string, i int) []*corev1.Service {
	if strategy != "bluegreen" {
		return nil
	}
	var out []*corev1.Service
	for _, suffix := range []string{"-active", "-preview"} {
		svc := &corev1.Service{}
		svc.Name = name(i) + suffix
		svc.Spec.Selector = map[string]string{"app": name(i)}
		svc.Spec.Ports = []corev1.ServicePort{{Port: 80}}
		out = append(out, svc)
	}
	return out
}

// imagePatch is the JSON patch that moves a Deployment's or Rollout's
// container to v2: one request, no read, no conflict.
var imagePatch = []byte(fmt.Sprintf(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":%q}]`, imageV2))
