package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/appcli"
)

// addSpecFlags registers the Application flags shared by create and set.
func addSpecFlags(f *pflag.FlagSet, s *appcli.SpecFlags, defaults bool) {
	def := func(v string) string {
		if defaults {
			return v
		}
		return ""
	}
	f.StringVar(&s.Repo, appcli.FlagRepo, "", "git repository URL")
	f.StringVar(&s.Path, appcli.FlagPath, "", "directory inside the repository")
	f.StringVar(&s.Revision, appcli.FlagRevision, def("HEAD"), "branch, tag, commit SHA or HEAD")
	f.StringVar(&s.DestServer, appcli.FlagDestServer, def("https://kubernetes.default.svc"), "destination cluster URL")
	f.StringVar(&s.DestNamespace, appcli.FlagDestNamespace, "", "destination namespace")
	f.StringVar(&s.Project, appcli.FlagProject, def("default"), "AppProject of the application")
	f.StringVar(&s.SyncPolicy, appcli.FlagSyncPolicy, "", "automated or none")
	f.BoolVar(&s.AutoPrune, appcli.FlagAutoPrune, false, "prune resources git no longer has during automated syncs")
	f.BoolVar(&s.SelfHeal, appcli.FlagSelfHeal, false, "sync again when live resources drift from git")
	f.StringArrayVar(&s.SyncOptions, appcli.FlagSyncOption, nil, "sync option Name=value (repeatable)")
	f.StringArrayVar(&s.HelmSets, appcli.FlagHelmSet, nil, "Helm parameter name=value (repeatable)")
	f.StringArrayVar(&s.ValueFiles, appcli.FlagValues, nil, "Helm value file, relative to the chart (repeatable)")
}

func newAppCreateCommand(a *appContext) *cobra.Command {
	var (
		spec   appcli.SpecFlags
		file   string
		upsert bool
	)
	cmd := &cobra.Command{
		Use:   "create [NAME] (--repo URL --path P --dest-namespace NS | -f app.yaml)",
		Short: "Create an Application, like `argocd app create`",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			app := &v1alpha1.Application{}
			set := cmd.Flags().Changed
			if file != "" {
				if err := readApp(cmd.InOrStdin(), file, app); err != nil {
					return err
				}
			} else {
				if spec.Repo == "" {
					return fmt.Errorf("--repo is required (or -f app.yaml)")
				}
				defaulted := map[string]bool{appcli.FlagRepo: true, appcli.FlagPath: true, appcli.FlagRevision: true,
					appcli.FlagDestServer: true, appcli.FlagDestNamespace: true, appcli.FlagProject: true}
				set = func(name string) bool { return defaulted[name] || cmd.Flags().Changed(name) }
			}
			if len(args) == 1 {
				app.Name = args[0]
			}
			if app.Name == "" {
				return fmt.Errorf("an application name is required")
			}
			if app.Namespace == "" || cmd.Flags().Changed("namespace") {
				app.Namespace = a.namespace
			}
			app.APIVersion, app.Kind = v1alpha1.GroupVersion.String(), "Application"
			if err := spec.Apply(app, set); err != nil {
				return err
			}
			b, err := a.backend()
			if err != nil {
				return err
			}
			outcome, err := appcli.CreateApp(cmd.Context(), b, app, upsert)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application '%s' %s\n", app.Name, outcome)
			return nil
		},
	}
	f := cmd.Flags()
	addSpecFlags(f, &spec, true)
	f.StringVarP(&file, "file", "f", "", `Application manifest to create from ("-" reads standard input)`)
	f.BoolVar(&upsert, "upsert", false, "replace the spec of an existing application")
	return cmd
}

// readApp reads an Application manifest from path, or from in for "-".
func readApp(in io.Reader, path string, app *v1alpha1.Application) error {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(in)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := yaml.Unmarshal(data, app); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if app.Kind != "" && app.Kind != "Application" {
		return fmt.Errorf("%s holds a %s, not an Application", path, app.Kind)
	}
	return nil
}
