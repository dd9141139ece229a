package render

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseKustomizeBuildOptions(t *testing.T) {
	tests := map[string]struct {
		in       string
		want     KustomizeOptions
		wantErrs []string
	}{
		"nothing set keeps kustomize's defaults": {},
		"the load restrictor most users set, as a separate value": {
			in:   "--load-restrictor LoadRestrictionsNone",
			want: KustomizeOptions{LoadRestrictorNone: true},
		},
		"flags joined to their values with an equals sign": {
			in:   "--load-restrictor=LoadRestrictionsNone --reorder=legacy --enable-managedby-label",
			want: KustomizeOptions{LoadRestrictorNone: true, Reorder: "legacy", ManagedByLabel: true},
		},
		"helm inflation is refused and the load restrictor still applies": {
			in:       "--enable-helm --load-restrictor LoadRestrictionsNone",
			want:     KustomizeOptions{LoadRestrictorNone: true},
			wantErrs: []string{"--enable-helm is not supported"},
		},
		"a helm command's value is not read as a flag": {
			in:       "--helm-command /usr/local/bin/helm --reorder none",
			want:     KustomizeOptions{Reorder: "none"},
			wantErrs: []string{"--helm-command is not supported"},
		},
		"plugins are refused": {
			in:       "--enable-alpha-plugins --enable-exec",
			wantErrs: []string{"--enable-alpha-plugins is not supported", "--enable-exec is not supported"},
		},
		"a bad value and an unknown flag are one error each": {
			in:       "--reorder sideways --frobnicate",
			wantErrs: []string{`--reorder "sideways"`, "--frobnicate is not a flag"},
		},
		"a flag without its value": {
			in:       "--load-restrictor",
			wantErrs: []string{"--load-restrictor needs a value"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, errs := ParseKustomizeBuildOptions(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			if len(errs) != len(tc.wantErrs) {
				t.Fatalf("errors %v, want %d", errs, len(tc.wantErrs))
			}
			for i, want := range tc.wantErrs {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i], want)
				}
			}
		})
	}
}

// A kustomization that reads a file beside its directory builds only with
// the load restrictor off, and still cannot read outside the repository.
func TestRenderKustomizeWithTheLoadRestrictorOff(t *testing.T) {
	root := kustomizeRoot(t, "resources: [../shared/config.yaml]\n")
	writeTree(t, root, map[string]string{
		"shared/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {a: b}\n",
	})
	req := Request{Root: root, Path: "app"}
	if _, err := Render(context.Background(), req); err == nil || !strings.Contains(err.Error(), "shared/config.yaml") {
		t.Fatalf("Render() with kustomize's default restrictor: %v, want it to refuse shared/config.yaml", err)
	}
	req.Kustomize = KustomizeOptions{LoadRestrictorNone: true}
	got, err := Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Object.GetName() != "shared" {
		t.Fatalf("rendered %d objects, want the shared ConfigMap", len(got))
	}

	outside := kustomizeRoot(t, "resources: [../../../../../../../../etc/hostname]\n")
	if _, err := Render(context.Background(), Request{Root: outside, Path: "app", Kustomize: KustomizeOptions{LoadRestrictorNone: true}}); err == nil {
		t.Fatal("Render() read a file outside the repository with the load restrictor off")
	}
}
