package appcli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestSpecFlagsApply(t *testing.T) {
	tests := map[string]struct {
		flags   SpecFlags
		set     []string
		start   v1alpha1.Application
		check   func(t *testing.T, app *v1alpha1.Application)
		wantErr string
	}{
		"automated with prune, self-heal and a replaced sync option": {
			flags: SpecFlags{SyncPolicy: "automated", AutoPrune: true, SelfHeal: true, SyncOptions: []string{"CreateNamespace=true"}},
			set:   []string{FlagSyncPolicy, FlagAutoPrune, FlagSelfHeal, FlagSyncOption},
			start: v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{SyncPolicy: &v1alpha1.SyncPolicy{SyncOptions: []string{"CreateNamespace=false"}}}},
			check: func(t *testing.T, app *v1alpha1.Application) {
				p := app.Spec.SyncPolicy
				if !app.IsAutomated() || !p.Automated.Prune || !p.Automated.SelfHeal || len(p.SyncOptions) != 1 || p.SyncOptions[0] != "CreateNamespace=true" {
					t.Errorf("policy %+v %+v", p, p.Automated)
				}
			},
		},
		"none drops an empty policy": {
			flags: SpecFlags{SyncPolicy: "none"},
			set:   []string{FlagSyncPolicy},
			start: v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}}},
			check: func(t *testing.T, app *v1alpha1.Application) {
				if app.Spec.SyncPolicy != nil {
					t.Errorf("policy %+v, want none", app.Spec.SyncPolicy)
				}
			},
		},
		"helm parameters replace by name": {
			flags: SpecFlags{HelmSets: []string{"a=2", "b=3"}},
			set:   []string{FlagHelmSet},
			start: v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{
				Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "a", Value: "1"}}}}}},
			check: func(t *testing.T, app *v1alpha1.Application) {
				p := app.Spec.Source.Helm.Parameters
				if len(p) != 2 || p[0].Value != "2" || p[1].Name != "b" {
					t.Errorf("parameters %+v", p)
				}
			},
		},
		"auto-prune without automated sync": {
			flags: SpecFlags{AutoPrune: true}, set: []string{FlagAutoPrune}, wantErr: "needs automated sync",
		},
		"an unknown policy": {
			flags: SpecFlags{SyncPolicy: "sometimes"}, set: []string{FlagSyncPolicy}, wantErr: "want automated or none",
		},
		"a source flag on a multi-source app": {
			flags: SpecFlags{Path: "x"}, set: []string{FlagPath},
			start:   v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Sources: []v1alpha1.ApplicationSource{{}, {}}}},
			wantErr: "several sources",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := tc.start.DeepCopy()
			set := map[string]bool{}
			for _, s := range tc.set {
				set[s] = true
			}
			err := tc.flags.Apply(app, func(f string) bool { return set[f] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, app)
		})
	}
}

func TestParseResource(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    v1alpha1.SyncOperationResource
		wantErr bool
	}{
		"core kind":           {in: ":Service:web", want: v1alpha1.SyncOperationResource{Kind: "Service", Name: "web"}},
		"group and namespace": {in: "apps:Deployment:shop/web", want: v1alpha1.SyncOperationResource{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}},
		"too few parts":       {in: "Service:web", wantErr: true},
		"empty name":          {in: "apps:Deployment:", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseResource(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("got %+v, %v; want %+v (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func testApp() *v1alpha1.Application {
	return &v1alpha1.Application{
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/repo", Path: "guestbook", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "shop"},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
		},
		Status: v1alpha1.ApplicationStatus{
			Sync:   v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: "53e28ff20cc530b9ada2173fbbd64d48338583ba"},
			Health: v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy},
			Resources: []v1alpha1.ResourceStatus{
				{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web", Status: v1alpha1.SyncStatusCodeSynced, Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy}},
				{Kind: "Service", Namespace: "shop", Name: "web", Status: v1alpha1.SyncStatusCodeSynced, Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy}},
			},
			Conditions: []v1alpha1.ApplicationCondition{{Type: "SyncError", Message: "a"}, {Type: "SyncError", Message: "b"}},
			OperationState: &v1alpha1.OperationState{Phase: v1alpha1.OperationSucceeded, Message: "successfully synced", SyncResult: &v1alpha1.SyncOperationResult{
				Resources: []v1alpha1.ResourceResult{
					{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web", Status: v1alpha1.ResultCodeSynced, Message: "deployment.apps/web created"},
					{Group: "batch", Kind: "Job", Namespace: "shop", Name: "migrate", HookType: "PreSync", HookPhase: v1alpha1.OperationSucceeded, Message: "job completed"},
					{Kind: "ConfigMap", Namespace: "shop", Name: "old", Status: v1alpha1.ResultCodePruned, Message: "pruned"},
				}}},
		},
	}
}

func TestTables(t *testing.T) {
	app := testApp()
	app.Name, app.Namespace = "guestbook", "argocd"
	tests := map[string]struct {
		write func(*bytes.Buffer) error
		want  []string
	}{
		"list": {
			write: func(b *bytes.Buffer) error { return WriteList(b, []v1alpha1.Application{*app}, true) },
			want: []string{"NAME       CLUSTER", "SYNCPOLICY  CONDITIONS    REPO", "guestbook  https://kubernetes.default.svc  shop",
				"Synced  Healthy  Auto-Prune  SyncError(2)", "guestbook  HEAD    53e28ff"},
		},
		"get": {
			write: func(b *bytes.Buffer) error { return WriteApp(b, app) },
			want: []string{"Name:           argocd/guestbook", "Sync Status:    Synced to HEAD (53e28ff)", "Sync Policy:    Auto-Prune",
				"GROUP  KIND        NAMESPACE  NAME     STATUS     HEALTH   HOOK     MESSAGE",
				"apps   Deployment  shop       web      Synced     Healthy           deployment.apps/web created",
				"       ConfigMap   shop       old      Pruned                       pruned",
				"batch  Job         shop       migrate  Succeeded           PreSync  job completed"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}

func TestProgressPrintsChangesOnly(t *testing.T) {
	app := testApp()
	var b bytes.Buffer
	p := &Progress{Out: &b}
	p.Update(app)
	first := b.Len()
	p.Update(app)
	if b.Len() != first {
		t.Errorf("an unchanged state printed again:\n%s", b.String())
	}
	app.Status.Resources[1].Health.Status = v1alpha1.HealthStatusDegraded
	p.Update(app)
	if added := b.String()[first:]; strings.Count(added, "\n") != 1 || !strings.Contains(added, "Service  shop/web  Synced  Degraded") {
		t.Errorf("the change printed as:\n%s", added)
	}

	var tty bytes.Buffer
	p = &Progress{Out: &tty, TTY: true}
	p.Update(app)
	p.Update(app)
	if !strings.Contains(tty.String(), "\x1b[") || strings.Count(tty.String(), "GROUP") != 2 {
		t.Errorf("terminal output does not redraw in place: %q", tty.String())
	}
}
