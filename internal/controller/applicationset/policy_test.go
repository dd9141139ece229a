package applicationset

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestEffectivePolicy(t *testing.T) {
	createOnly := v1alpha1.ApplicationsSyncPolicyCreateOnly
	for name, tc := range map[string]struct {
		set      *v1alpha1.ApplicationsSyncPolicy
		server   v1alpha1.ApplicationsSyncPolicy
		override bool
		want     v1alpha1.ApplicationsSyncPolicy
	}{
		"no policy anywhere is sync":                           {want: v1alpha1.ApplicationsSyncPolicySync},
		"the set's policy applies when the server allows it":   {set: &createOnly, override: true, want: createOnly},
		"the server's policy wins when overrides are off":      {set: &createOnly, server: v1alpha1.ApplicationsSyncPolicyCreateDelete, want: v1alpha1.ApplicationsSyncPolicyCreateDelete},
		"the server's policy applies to a set that names none": {server: v1alpha1.ApplicationsSyncPolicyCreateUpdate, override: true, want: v1alpha1.ApplicationsSyncPolicyCreateUpdate},
		"an unset server policy with overrides off still wins": {set: &createOnly, want: v1alpha1.ApplicationsSyncPolicySync},
	} {
		t.Run(name, func(t *testing.T) {
			set := &v1alpha1.ApplicationSet{Spec: v1alpha1.ApplicationSetSpec{SyncPolicy: &v1alpha1.ApplicationSetSyncPolicy{ApplicationsSync: tc.set}}}
			if got := effectivePolicy(set, tc.server, tc.override); got != tc.want {
				t.Errorf("policy %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]v1alpha1.ApplicationsSyncPolicy{"": "sync", "create-only": "create-only", "sync": "sync"} {
		if got, err := ParsePolicy(in); err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParsePolicy("create"); err == nil {
		t.Error("ParsePolicy accepted create")
	}
}

func TestServerPolicy(t *testing.T) {
	for name, tc := range map[string]struct {
		policy       string
		override     *bool
		wantPolicy   v1alpha1.ApplicationsSyncPolicy
		wantOverride bool
	}{
		"no flags: sync, sets may override":                    {wantPolicy: "sync", wantOverride: true},
		"a policy given: sets may not override":                {policy: "create-only", wantPolicy: "create-only"},
		"a policy given with the override flag: they may":      {policy: "create-only", override: ptr.To(true), wantPolicy: "create-only", wantOverride: true},
		"the override flag off without a policy: they may not": {override: ptr.To(false), wantPolicy: "sync"},
	} {
		t.Run(name, func(t *testing.T) {
			p, o, err := ServerPolicy(tc.policy, tc.override)
			if err != nil || p != tc.wantPolicy || o != tc.wantOverride {
				t.Errorf("ServerPolicy = %q, %v, %v; want %q, %v", p, o, err, tc.wantPolicy, tc.wantOverride)
			}
		})
	}
}

func TestPrepare(t *testing.T) {
	automated := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}}
	for name, tc := range map[string]struct {
		preserve, rolling bool
		finalizers        []string
		syncPolicy        *v1alpha1.SyncPolicy
		wantFinalizers    []string
		wantAutomated     bool
		wantPrune         bool
	}{
		"apps get the resources finalizer":                      {syncPolicy: automated, wantFinalizers: []string{v1alpha1.FinalizerResources}, wantAutomated: true},
		"a background resources finalizer is kept as it is":     {finalizers: []string{v1alpha1.FinalizerResourcesBackground}, wantFinalizers: []string{v1alpha1.FinalizerResourcesBackground}},
		"preserving resources takes every resources finalizer":  {preserve: true, finalizers: []string{"x", v1alpha1.FinalizerResources}, wantFinalizers: []string{"x"}},
		"a RollingSync takes automated sync off, keeping prune": {rolling: true, syncPolicy: automated, wantFinalizers: []string{v1alpha1.FinalizerResources}, wantPrune: true},
	} {
		t.Run(name, func(t *testing.T) {
			set := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "argocd"},
				Spec: v1alpha1.ApplicationSetSpec{SyncPolicy: &v1alpha1.ApplicationSetSyncPolicy{PreserveResourcesOnDeletion: tc.preserve}}}
			if tc.rolling {
				set.Spec.Strategy = &v1alpha1.ApplicationSetStrategy{Type: "RollingSync", RollingSync: &v1alpha1.ApplicationSetRolloutStrategy{
					Steps: []v1alpha1.ApplicationSetRolloutStep{{}}}}
			}
			gen := v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "a", Finalizers: tc.finalizers},
				Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "r"}, SyncPolicy: tc.syncPolicy.DeepCopy()}}
			got := prepare(set, []v1alpha1.Application{gen})[0]
			if got.app.Namespace != "argocd" || got.app.Spec.Project != "default" || got.app.Spec.Source.TargetRevision != "HEAD" {
				t.Errorf("namespace %q, project %q, revision %q; want the set's, default and HEAD", got.app.Namespace, got.app.Spec.Project, got.app.Spec.Source.TargetRevision)
			}
			if !slices.Equal(got.app.Finalizers, tc.wantFinalizers) {
				t.Errorf("finalizers %v, want %v", got.app.Finalizers, tc.wantFinalizers)
			}
			if got.app.IsAutomated() != tc.wantAutomated || got.prune != tc.wantPrune {
				t.Errorf("automated %v prune %v, want %v %v", got.app.IsAutomated(), got.prune, tc.wantAutomated, tc.wantPrune)
			}
		})
	}
}

func TestInvalid(t *testing.T) {
	app := func(name, ns string) planned {
		return planned{app: v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}}
	}
	refuse := func(_ context.Context, a *v1alpha1.Application) error {
		if a.Name == "bad" {
			return errors.New("refused")
		}
		return nil
	}
	set := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "argocd"}}
	for name, tc := range map[string]struct {
		apps []planned
		want []string
	}{
		"valid apps pass":                         {apps: []planned{app("a", "argocd"), app("b", "argocd")}},
		"a repeated name is refused":              {apps: []planned{app("a", "argocd"), app("a", "argocd")}, want: []string{"duplicate name: a"}},
		"another namespace is refused":            {apps: []planned{app("a", "other")}, want: []string{"namespace other is not the ApplicationSet's"}},
		"what the check refuses is refused, each": {apps: []planned{app("bad", "argocd"), app("a", "x")}, want: []string{"application bad: refused", "namespace x"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := invalid(context.Background(), set, tc.apps, refuse)
			if len(got) != len(tc.want) {
				t.Fatalf("messages %q, want %d", got, len(tc.want))
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("message %q, want it to say %q", got[i], tc.want[i])
				}
			}
		})
	}
	if got := summary([]string{"one", "two", "three"}); got != "one (and 2 more)" {
		t.Errorf("summary %q", got)
	}
}

func TestUpdated(t *testing.T) {
	set := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "s", UID: "u1"}, Spec: v1alpha1.ApplicationSetSpec{
		PreservedFields: &v1alpha1.ApplicationPreservedFields{Annotations: []string{"keep"}, Labels: []string{"team"}},
		IgnoreApplicationDifferences: []v1alpha1.ApplicationSetResourceIgnoreDifferences{
			{JSONPointers: []string{"/spec/source/targetRevision"}},
			{Name: "other", JSONPointers: []string{"/spec/destination/namespace"}},
		},
	}}
	found := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "7",
			Annotations: map[string]string{"keep": "k", "drop": "d", annotationNotified: "n"},
			Labels:      map[string]string{"team": "blue", "old": "x"},
			Finalizers:  []string{v1alpha1.FinalizerResources, v1alpha1.FinalizerPostDelete}},
		Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "r", TargetRevision: "hand-set"},
			Destination: v1alpha1.ApplicationDestination{Namespace: "live"}},
		Status: v1alpha1.ApplicationStatus{Health: v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy}},
	}
	want := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Annotations: map[string]string{"new": "n"}, Labels: map[string]string{"env": "dev"},
			Finalizers: []string{v1alpha1.FinalizerResources}},
		Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "r", TargetRevision: "HEAD", Path: "p"},
			Destination: v1alpha1.ApplicationDestination{Namespace: "templated"}},
	}
	got, err := updated(found, want, set)
	if err != nil {
		t.Fatal(err)
	}
	if !equalJSON(got.Annotations, map[string]string{"keep": "k", "new": "n", annotationNotified: "n"}) {
		t.Errorf("annotations %v: want the template's and the preserved ones", got.Annotations)
	}
	if !equalJSON(got.Labels, map[string]string{"team": "blue", "env": "dev"}) {
		t.Errorf("labels %v: want the template's and the preserved ones", got.Labels)
	}
	if !slices.Equal(got.Finalizers, []string{v1alpha1.FinalizerResources, v1alpha1.FinalizerPostDelete}) {
		t.Errorf("finalizers %v: want the template's and the post-delete one", got.Finalizers)
	}
	if got.Spec.Source.TargetRevision != "hand-set" || got.Spec.Source.Path != "p" {
		t.Errorf("source %+v: want the ignored targetRevision kept and the path updated", got.Spec.Source)
	}
	if got.Spec.Destination.Namespace != "templated" {
		t.Errorf("destination namespace %q: the rule naming another app applies to it", got.Spec.Destination.Namespace)
	}
	if got.ResourceVersion != "7" || got.Status.Health.Status != v1alpha1.HealthStatusHealthy {
		t.Errorf("resourceVersion %q health %q: want found's", got.ResourceVersion, got.Status.Health.Status)
	}
	if ref := metav1.GetControllerOf(got); ref == nil || ref.Name != "s" || ref.UID != "u1" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("controller %+v, want the set", ref)
	}
}

func TestConditions(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(then.Add(time.Hour))
	ok := mergeConditions(nil, passConditions(failure{}, nil), then)
	if len(ok) != 3 || ok[0].Type != v1alpha1.ApplicationSetConditionErrorOccurred || ok[0].Status != "False" ||
		ok[2].Type != v1alpha1.ApplicationSetConditionResourcesUpToDate || ok[2].Status != "True" {
		t.Fatalf("conditions after success %+v", ok)
	}
	failed := mergeConditions(ok, passConditions(failure{reason: ReasonValidationError, message: "bad", paramsGenerated: true}, nil), now)
	for _, c := range failed {
		switch c.Type {
		case v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionResourcesUpToDate:
			if c.Reason != ReasonValidationError || c.Message != "bad" || !c.LastTransitionTime.Equal(&now) {
				t.Errorf("%s %+v: want the validation error, now", c.Type, c)
			}
		case v1alpha1.ApplicationSetConditionParametersGenerated:
			if c.Status != "True" || !c.LastTransitionTime.Equal(&then) {
				t.Errorf("ParametersGenerated %+v: want it True since then", c)
			}
		}
	}
	noParams := passConditions(failure{reason: ReasonGenerationError, message: "git down"}, nil)
	if noParams[1].Status != "False" || noParams[1].Message != "git down" {
		t.Errorf("ParametersGenerated after a generator error %+v", noParams[1])
	}
}
