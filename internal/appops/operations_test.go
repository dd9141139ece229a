package appops

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestRollbackOperation(t *testing.T) {
	history := []v1alpha1.RevisionHistory{
		{ID: 0, Revision: "aaa", Source: v1alpha1.ApplicationSource{RepoURL: "r", Path: "p", TargetRevision: "HEAD"}},
		{ID: 1, Revision: "bbb", Source: v1alpha1.ApplicationSource{RepoURL: "r", Path: "p", TargetRevision: "HEAD"}},
	}
	multi := []v1alpha1.RevisionHistory{
		{ID: 3, Revisions: []string{"ccc", "ddd"}, Sources: []v1alpha1.ApplicationSource{{RepoURL: "r1"}, {RepoURL: "r2"}}},
		{ID: 4, Revisions: []string{"eee", "fff"}, Sources: []v1alpha1.ApplicationSource{{RepoURL: "r1"}, {RepoURL: "r2"}}},
	}
	automated := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
	tests := map[string]struct {
		policy       *v1alpha1.SyncPolicy
		history      []v1alpha1.RevisionHistory
		id           int64
		wantRevision string
		wantSources  []string
		wantErr      error
		wantMsg      string
	}{
		"without an ID it goes to the entry before the last": {history: history, id: -1, wantRevision: "aaa"},
		"an ID picks its entry":                              {history: history, id: 1, wantRevision: "bbb"},
		"a multi-source entry pins each source": {
			history: multi, id: 3, wantSources: []string{"ccc", "ddd"},
		},
		"an unknown ID is invalid": {
			history: history, id: 7, wantErr: ErrInvalid, wantMsg: "no history entry 7",
		},
		"automated sync refuses, naming no flag": {
			policy: automated, history: history, id: 0, wantErr: ErrAutomatedRollback, wantMsg: "auto-sync is enabled",
		},
		"nothing comes before the only entry": {
			history: history[:1], id: -1, wantErr: ErrInvalid, wantMsg: "no previous deployment",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{SyncPolicy: tc.policy}, Status: v1alpha1.ApplicationStatus{History: tc.history}}
			op, err := RollbackOperation(app, tc.id, true)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantMsg) || strings.Contains(err.Error(), "--") {
					t.Fatalf("got %v, want %v with %q and no flag", err, tc.wantErr, tc.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !op.Prune {
				t.Error("prune was not passed on")
			}
			if tc.wantSources != nil {
				if !slices.Equal(op.Revisions, tc.wantSources) || len(op.Sources) != 2 || op.Source != nil {
					t.Errorf("operation %+v, want the entry's sources at %v", op, tc.wantSources)
				}
				return
			}
			if op.Revision != tc.wantRevision || op.Source == nil || op.Source.TargetRevision != "HEAD" || op.Source.Path != "p" {
				t.Errorf("operation %+v source %+v, want revision %s and the source as written", op, op.Source, tc.wantRevision)
			}
		})
	}
	if !errors.Is(ErrAutomatedRollback, ErrInvalid) {
		t.Error("a rollback refused for automated sync is not ErrInvalid")
	}
}

func TestSetFinalizers(t *testing.T) {
	tests := map[string]struct {
		in          []string
		cascade     bool
		propagation string
		want        []string
		wantErr     bool
	}{
		"cascade adds the foreground finalizer by default": {in: []string{"other"}, cascade: true, want: []string{"other", v1alpha1.FinalizerResources}},
		"foreground is named in any case":                  {cascade: true, propagation: "Foreground", want: []string{v1alpha1.FinalizerResources}},
		"background replaces foreground":                   {in: []string{v1alpha1.FinalizerResources}, cascade: true, propagation: "background", want: []string{v1alpha1.FinalizerResourcesBackground}},
		"no cascade removes the resources finalizers only": {in: []string{v1alpha1.FinalizerResourcesBackground, "other"}, want: []string{"other"}},
		"no cascade without finalizers leaves none":        {in: nil, want: []string{}},
		"no cascade ignores the propagation":               {propagation: "orphan", want: []string{}},
		"an unknown propagation with cascade is invalid":   {cascade: true, propagation: "orphan", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := SetFinalizers(tc.in, tc.cascade, tc.propagation)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "--") {
					t.Fatalf("got %v, want ErrInvalid naming no flag", err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestCheckRefresh(t *testing.T) {
	tests := map[string]struct {
		mode  string
		valid bool
	}{
		"a normal refresh":                   {mode: "normal", valid: true},
		"a hard refresh":                     {mode: "hard", valid: true},
		"an empty mode asks for nothing":     {mode: "", valid: false},
		"modes are spelled in lower case":    {mode: "Hard", valid: false},
		"another word is not a refresh mode": {mode: "soft", valid: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := CheckRefresh(tc.mode)
			if (err == nil) != tc.valid || err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("got %v, want valid %v", err, tc.valid)
			}
		})
	}
}

func TestCheckSync(t *testing.T) {
	tests := map[string]struct {
		resources []v1alpha1.SyncOperationResource
		valid     bool
	}{
		"a sync of everything":      {valid: true},
		"a sync of named resources": {resources: []v1alpha1.SyncOperationResource{{Kind: "ConfigMap", Name: "a"}, {Group: "apps", Kind: "Deployment", Name: "b"}}, valid: true},
		"a resource without a kind": {resources: []v1alpha1.SyncOperationResource{{Name: "a"}}},
		"a resource without a name": {resources: []v1alpha1.SyncOperationResource{{Kind: "ConfigMap", Name: "a"}, {Kind: "Service"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := CheckSync(&v1alpha1.SyncOperation{Resources: tc.resources})
			if (err == nil) != tc.valid || err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("got %v, want valid %v", err, tc.valid)
			}
		})
	}
}

func TestErrorKinds(t *testing.T) {
	tests := map[string]struct {
		err  error
		kind error
	}{
		"another operation in progress is a conflict": {err: ErrOperationInProgress, kind: ErrConflict},
		"no running operation is a conflict":          {err: ErrNoRunningOperation, kind: ErrConflict},
		"a changed application is a conflict":         {err: ErrChanged, kind: ErrConflict},
		"a rollback under automated sync is invalid":  {err: ErrAutomatedRollback, kind: ErrInvalid},
		"a kind survives wrapping":                    {err: errors.Join(errors.New("context"), ErrNoRunningOperation), kind: ErrConflict},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, kind := range []error{ErrNotFound, ErrInvalid, ErrConflict} {
				if got := errors.Is(tc.err, kind); got != (kind == tc.kind) {
					t.Errorf("errors.Is(%v, %v) = %v", tc.err, kind, got)
				}
			}
		})
	}
}

func TestApproveDeletionApprovesWhatWaitsUntilNow(t *testing.T) {
	started := time.Date(2026, 12, 7, 14, 0, 0, 0, time.UTC)
	app := &v1alpha1.Application{}
	ApproveDeletion(app, started.Add(-time.Minute))
	if app.DeletionApproved(started) {
		t.Fatal("an approval given before the operation began approves it")
	}
	ApproveDeletion(app, started.Add(time.Minute).In(time.FixedZone("CET", 3600)))
	if got := app.Annotations[v1alpha1.AnnotationDeletionApproved]; got != "2026-12-07T14:01:00Z" {
		t.Errorf("annotation %q, want the time in UTC, RFC 3339", got)
	}
	if !app.DeletionApproved(started) {
		t.Error("a later approval does not approve what waits")
	}
}
