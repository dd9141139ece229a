package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/appcli"
	"github.com/skiffcd/skiff/internal/source"
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

// renderer reads the app and builds a renderer over an in-process repo
// server; the repository password comes from $SKIFF_REPO_PASSWORD.
func (r *renderFlags) renderer(cmd *cobra.Command, a *appContext, name string) (*appcli.Renderer, *v1alpha1.Application, error) {
	c, cfg, err := a.client()
	if err != nil {
		return nil, nil, err
	}
	app := &v1alpha1.Application{}
	if err := c.Get(cmd.Context(), a.key(name), app); err != nil {
		return nil, nil, fmt.Errorf("reading application %s: %w", name, err)
	}
	cacheDir := r.cacheDir
	if cacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil, nil, fmt.Errorf("finding a cache directory: %w", err)
		}
		cacheDir = filepath.Join(dir, "skiff")
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("building the dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("building the discovery client: %w", err)
	}
	version, err := disc.ServerVersion()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the server version: %w", err)
	}
	creds := source.Credentials{Password: os.Getenv("SKIFF_REPO_PASSWORD")}
	return &appcli.Renderer{
		Repo: appcli.NewRepoServer(cacheDir, creds), Dynamic: dyn, Mapper: c.RESTMapper(), KubeVersion: version.GitVersion,
	}, app, nil
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
			r, app, err := rf.renderer(cmd, a, args[0])
			if err != nil {
				return err
			}
			diffs, err := r.Diff(cmd.Context(), app, rf.revision)
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
			r, app, err := rf.renderer(cmd, a, args[0])
			if err != nil {
				return err
			}
			objs, _, err := r.Desired(cmd.Context(), app, rf.revision)
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
