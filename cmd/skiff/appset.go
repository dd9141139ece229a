package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appsetops"
	"github.com/skiffcd/skiff/internal/cli/appcli"
	"github.com/skiffcd/skiff/internal/cli/appsetcli"
	"github.com/skiffcd/skiff/internal/cli/sessioncli"
	"github.com/skiffcd/skiff/internal/clusterops"
	"github.com/skiffcd/skiff/internal/reposerver"
)

// applicationSetContext holds the flags every `skiff appset` subcommand shares.
type applicationSetContext struct {
	conn      appContext
	namespace string
	// cacheDir holds the repositories `generate --core` checks out.
	cacheDir string
}

func (c *applicationSetContext) addFlags(f *pflag.FlagSet) {
	c.conn.addConnectionFlags(f)
	f.StringVarP(&c.namespace, "skiff-namespace", "N", "argocd", "Skiff's namespace, which holds the ApplicationSets, with --core")
	f.StringVar(&c.cacheDir, "cache-dir", "", "where generate --core caches repositories (default $XDG_CACHE_HOME/skiff or $HOME/.cache/skiff)")
}

// backend connects to the API server of the session or to the cluster of
// the kubeconfig, as `skiff app` chooses.
func (c *applicationSetContext) backend() (appsetcli.Backend, error) {
	cfg, err := c.conn.apiSession()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		return appsetcli.API{Client: &appcli.API{Client: sessioncli.NewClient(cfg)}}, nil
	}
	k, rc, err := c.conn.kube()
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return appsetcli.Kube{Ops: appsetops.Ops{Client: k, Namespace: c.namespace, Generate: coreGenerator(k, dyn, c.namespace, c.cacheDir)}}, nil
}

// coreGenerator generates as the controller does, from this process: git
// through a repo server of its own (with the repository Secrets of
// Skiff's namespace) and the cluster Secrets the kubeconfig can read.
func coreGenerator(k client.Client, dyn dynamic.Interface, namespace, cacheDir string) appsetops.Generator {
	return func(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
		repo, err := reposerver.NewInDir(cacheDir, reposerver.Options{Credentials: reposerver.SecretCredentials(k, namespace)})
		if err != nil {
			return nil, err
		}
		known, err := clusterops.Ops{Reader: k, Namespace: namespace}.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		live := appsetops.Live{Repo: repo, Clusters: appsetops.Listed(known.Clusters), Reader: k, Dynamic: dyn, Namespace: namespace}
		return live.Generate(ctx, set)
	}
}

func newApplicationSetCommand() *cobra.Command {
	c := &applicationSetContext{}
	cmd := &cobra.Command{
		Use:     "appset",
		Aliases: []string{"appsets", "applicationset", "applicationsets"},
		Short:   "Manage ApplicationSets, like `argocd appset`",
		Long: `Manage ApplicationSets in Skiff's namespace. Through the API server of the
session saved by ` + "`skiff login`" + ` (or of --server and --auth-token), which checks
RBAC (resource applicationsets, object <project>/<name>); with --core, an
explicit --kubeconfig, or without a saved session, through the Kubernetes API.`,
		Args: cobra.NoArgs,
	}
	c.addFlags(cmd.PersistentFlags())
	cmd.AddCommand(newApplicationSetListCommand(c), newApplicationSetGetCommand(c), newApplicationSetCreateCommand(c),
		newApplicationSetDeleteCommand(c), newApplicationSetGenerateCommand(c))
	return cmd
}

func newApplicationSetListCommand(c *applicationSetContext) *cobra.Command {
	var (
		output, selector string
		projects         []string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List ApplicationSets",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := c.backend()
			if err != nil {
				return err
			}
			sets, err := b.List(cmd.Context(), selector, projects)
			if err != nil {
				return err
			}
			switch output {
			case "", "wide":
				return appsetcli.WriteList(cmd.OutOrStdout(), sets)
			case "name":
				for _, s := range sets {
					fmt.Fprintln(cmd.OutOrStdout(), s.Name)
				}
				return nil
			}
			return appcli.WriteObject(cmd.OutOrStdout(), output, sets)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "output format: wide, name, json or yaml")
	f.StringVarP(&selector, "selector", "l", "", "list sets with these labels (a label selector)")
	f.StringArrayVarP(&projects, "project", "p", nil, "list sets of this project (repeatable)")
	return cmd
}

func newApplicationSetGetCommand(c *applicationSetContext) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show an ApplicationSet",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := c.backend()
			if err != nil {
				return err
			}
			set, err := b.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return appcli.WriteObject(cmd.OutOrStdout(), output, set)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: json or yaml")
	return cmd
}

// readSetFiles reads the ApplicationSets of each path ("-" is stdin).
func readSetFiles(in io.Reader, paths []string) ([]*v1alpha1.ApplicationSet, error) {
	var sets []*v1alpha1.ApplicationSet
	for _, path := range paths {
		r := in
		if path != "-" {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			r = f
		}
		read, err := appsetcli.ReadSets(r)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		sets = append(sets, read...)
	}
	return sets, nil
}

func newApplicationSetCreateCommand(c *applicationSetContext) *cobra.Command {
	var upsert, dryRun bool
	cmd := &cobra.Command{
		Use:   "create FILE...",
		Short: "Create ApplicationSets from files (- for stdin), like `argocd appset create`",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sets, err := readSetFiles(cmd.InOrStdin(), args)
			if err != nil {
				return err
			}
			b, err := c.backend()
			if err != nil {
				return err
			}
			for _, set := range sets {
				out, err := b.Create(cmd.Context(), set, upsert, dryRun)
				if err != nil {
					return err
				}
				verb := "created"
				if dryRun {
					verb = "would be created (dry run)"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "ApplicationSet '%s' %s\n", out.Name, verb)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&upsert, "upsert", false, "replace an ApplicationSet of the same name")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the ApplicationSets and write nothing")
	return cmd
}

func newApplicationSetDeleteCommand(c *applicationSetContext) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete ApplicationSets (their Applications go too, unless the set preserves them)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := c.backend()
			if err != nil {
				return err
			}
			for _, name := range args {
				if !yes && isTerminalReader(cmd.InOrStdin()) {
					ok, err := appcli.Confirm(cmd.InOrStdin(), cmd.ErrOrStderr(), fmt.Sprintf(
						"Delete ApplicationSet '%s' and, unless it preserves them, its Applications?", name))
					if err != nil {
						return err
					}
					if !ok {
						continue
					}
				}
				if err := b.Delete(cmd.Context(), name); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "ApplicationSet '%s' deleted\n", name)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func newApplicationSetGenerateCommand(c *applicationSetContext) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "generate FILE",
		Short: "Print the Applications an ApplicationSet would make, writing nothing, like `argocd appset generate`",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sets, err := readSetFiles(cmd.InOrStdin(), args)
			if err != nil {
				return err
			}
			if len(sets) != 1 {
				return fmt.Errorf("%s holds %d ApplicationSets, want one", args[0], len(sets))
			}
			b, err := c.backend()
			if err != nil {
				return err
			}
			apps, err := b.Generate(cmd.Context(), sets[0])
			if err != nil {
				return err
			}
			if output == "" || output == "wide" {
				return appsetcli.WriteApps(cmd.OutOrStdout(), apps)
			}
			return appcli.WriteObject(cmd.OutOrStdout(), output, apps)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: wide, json or yaml")
	return cmd
}
