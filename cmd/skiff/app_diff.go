package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skiffcd/skiff/internal/cli/appcli"
)

// renderFlags are the flags of the commands that render an app locally.
type renderFlags struct {
	revision string
	cacheDir string
}

func (r *renderFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.revision, "revision", "", "revision to render (default: the target revision)")
	f.StringVar(&r.cacheDir, "cache-dir", "", "where repositories and charts are cached (default $XDG_CACHE_HOME/skiff or $HOME/.cache/skiff)")
}

// backend connects as a does; the cache directory is for rendering with
// --core.
func (r *renderFlags) backend(a *appContext) (appcli.Backend, error) {
	b, err := a.backend()
	if k, ok := b.(*appcli.Kube); ok {
		k.CacheDir = r.cacheDir
	}
	return b, err
}

func newAppDiffCommand(a *appContext) *cobra.Command {
	var (
		rf       renderFlags
		exitCode bool
	)
	cmd := &cobra.Command{
		Use:   "diff NAME",
		Short: "Show how the live resources differ from git, like `argocd app diff`",
		Long: `Render the Application's desired state and print a unified diff per resource
against the live objects; Secret values are masked. Exits with status 1 when
there are differences (unless --exit-code=false).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := rf.backend(a)
			if err != nil {
				return err
			}
			diffs, err := b.Diff(cmd.Context(), args[0], rf.revision)
			if err != nil {
				return err
			}
			appcli.WriteDiffs(cmd.OutOrStdout(), diffs)
			if len(diffs) > 0 && exitCode {
				return &appcli.ExitError{Code: 1, Reason: fmt.Sprintf("%d resources differ", len(diffs))}
			}
			return nil
		},
	}
	rf.add(cmd)
	cmd.Flags().BoolVar(&exitCode, "exit-code", true, "exit with status 1 when there are differences")
	return cmd
}

func newAppManifestsCommand(a *appContext) *cobra.Command {
	var (
		rf          renderFlags
		showSecrets bool
	)
	cmd := &cobra.Command{
		Use:   "manifests NAME",
		Short: "Print the manifests an Application renders to, like `argocd app manifests`",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := rf.backend(a)
			if err != nil {
				return err
			}
			if _, ok := b.(*appcli.API); ok && showSecrets {
				return fmt.Errorf("--show-secrets needs --core: the API server masks Secret values")
			}
			objs, err := b.Manifests(cmd.Context(), args[0], rf.revision)
			if err != nil {
				return err
			}
			return appcli.WriteManifests(cmd.OutOrStdout(), objs, showSecrets)
		},
	}
	rf.add(cmd)
	cmd.Flags().BoolVar(&showSecrets, "show-secrets", false, "print Secret values instead of masking them")
	return cmd
}
