package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/skiffcd/skiff/internal/cli/appcli"
	"github.com/skiffcd/skiff/internal/cli/clustercli"
	"github.com/skiffcd/skiff/internal/cli/sessioncli"
	"github.com/skiffcd/skiff/internal/clusterops"
)

// clusterContext holds the flags every `skiff cluster` subcommand shares.
type clusterContext struct {
	// conn chooses the API server or the cluster as for `skiff app`.
	conn      appContext
	namespace string
}

func (c *clusterContext) addFlags(f *pflag.FlagSet) {
	c.conn.addConnectionFlags(f)
	f.StringVarP(&c.namespace, "skiff-namespace", "N", "argocd", "Skiff's namespace, which holds the cluster Secrets, with --core")
}

// backend connects to the API server of the session or to the cluster of
// the kubeconfig, as `skiff app` chooses.
func (c *clusterContext) backend() (clustercli.Backend, error) {
	cfg, err := c.conn.apiSession()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		return clustercli.API{Client: &appcli.API{Client: sessioncli.NewClient(cfg)}}, nil
	}
	k, _, err := c.conn.kube()
	if err != nil {
		return nil, err
	}
	return clustercli.Kube{Ops: clusterops.Ops{Reader: k, Client: k, Namespace: c.namespace}}, nil
}

func newClusterCommand() *cobra.Command {
	c := &clusterContext{}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Manage the clusters Skiff deploys to, like `argocd cluster`",
		Long: `Manage the clusters Skiff deploys to: Argo CD's cluster Secrets in Skiff's
namespace. Through the API server of the session saved by ` + "`skiff login`" + ` (or of
--server and --auth-token), which checks RBAC (resource clusters); with --core,
an explicit --kubeconfig, or without a saved session, through the Kubernetes
API of the kubeconfig. Credentials are never printed.`,
		Args: cobra.NoArgs,
	}
	c.addFlags(cmd.PersistentFlags())
	cmd.AddCommand(newClusterListCommand(c), newClusterGetCommand(c), newClusterAddCommand(c),
		newClusterRmCommand(c), newClusterRotateAuthCommand(c))
	return cmd
}

func newClusterListCommand(c *clusterContext) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List clusters, like `argocd cluster list`",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := c.backend()
			if err != nil {
				return err
			}
			list, err := b.List(cmd.Context())
			if err != nil {
				return err
			}
			switch output {
			case "":
				return clustercli.WriteList(cmd.OutOrStdout(), cmd.ErrOrStderr(), list)
			case "server":
				for _, cl := range list.Items {
					fmt.Fprintln(cmd.OutOrStdout(), cl.Server)
				}
				return nil
			}
			return appcli.WriteObject(cmd.OutOrStdout(), output, list)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or server")
	return cmd
}

func newClusterGetCommand(c *clusterContext) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get SERVER|NAME",
		Short: "Show a cluster, credentials masked",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := c.backend()
			if err != nil {
				return err
			}
			cl, err := b.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if output == "server" {
				fmt.Fprintln(cmd.OutOrStdout(), cl.Server)
				return nil
			}
			return appcli.WriteObject(cmd.OutOrStdout(), output, cl)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: json, yaml or server")
	return cmd
}

func newClusterAddCommand(c *clusterContext) *cobra.Command {
	var (
		opts                clustercli.AddOptions
		labels, annotations []string
		yes                 bool
	)
	cmd := &cobra.Command{
		Use:   "add CONTEXT",
		Short: "Register the cluster of a kubeconfig context, like `argocd cluster add`",
		Long: `Creates the ServiceAccount argocd-manager in kube-system of the cluster of
CONTEXT, with the ClusterRole argocd-manager-role (everything) and its binding,
or with --namespace a Role and RoleBinding in each namespace, and a long-lived
token Secret; then the cluster Secret, holding that token, in Skiff's namespace.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if opts.Labels, err = clustercli.KeyValues("--label", labels); err != nil {
				return err
			}
			if opts.Annotations, err = clustercli.KeyValues("--annotation", annotations); err != nil {
				return err
			}
			target, err := clustercli.ContextConfig(c.conn.kubeconfig, args[0])
			if err != nil {
				return err
			}
			if !yes {
				scope := "with full cluster level privileges"
				if len(opts.Namespaces) > 0 {
					scope = "with full privileges in namespaces " + strings.Join(opts.Namespaces, ", ")
				}
				ok, err := appcli.Confirm(cmd.InOrStdin(), cmd.ErrOrStderr(), fmt.Sprintf(
					"This will create the ServiceAccount argocd-manager in the cluster of context %q (%s) %s. Continue?", args[0], target.Host, scope))
				if err != nil {
					return err
				}
				if !ok { // privileges are granted only when asked for
					return errors.New("cluster not added: answer y, or give --yes")
				}
			}
			b, err := c.backend()
			if err != nil {
				return err
			}
			cl, err := clustercli.Add(cmd.Context(), b, target, args[0], opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster '%s' added\n", cl.Server)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Name, "name", "", "name of the cluster (default: the context's)")
	f.StringVar(&opts.Project, "project", "", "make the cluster project-scoped")
	f.StringArrayVar(&opts.Namespaces, "namespace", nil, "manage only this namespace (repeatable): Roles instead of a ClusterRole")
	f.BoolVar(&opts.ClusterResources, "cluster-resources", false, "with --namespace, also manage cluster-scoped resources")
	f.BoolVar(&opts.Upsert, "upsert", false, "replace the cluster if it exists")
	f.StringArrayVar(&labels, "label", nil, "label of the cluster Secret, key=value (repeatable)")
	f.StringArrayVar(&annotations, "annotation", nil, "annotation of the cluster Secret, key=value (repeatable)")
	f.BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func newClusterRmCommand(c *clusterContext) *cobra.Command {
	var force, yes bool
	cmd := &cobra.Command{
		Use:   "rm SERVER|NAME",
		Short: "Remove a cluster; refused while apps target it unless --force",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !yes && isTerminalReader(cmd.InOrStdin()) {
				ok, err := appcli.Confirm(cmd.InOrStdin(), cmd.ErrOrStderr(), fmt.Sprintf(
					"Remove cluster '%s'? Apps deploying to it will go Unknown.", args[0]))
				if err != nil || !ok {
					return err
				}
			}
			b, err := c.backend()
			if err != nil {
				return err
			}
			if err := b.Delete(cmd.Context(), args[0], force); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster '%s' removed\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "remove it even while apps target it")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func newClusterRotateAuthCommand(c *clusterContext) *cobra.Command {
	return &cobra.Command{
		Use:   "rotate-auth SERVER|NAME",
		Short: "Give a cluster a new argocd-manager token and end the old one",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := c.backend()
			if err != nil {
				return err
			}
			cl, err := b.RotateAuth(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster '%s' rotated auth\n", cl.Server)
			return nil
		},
	}
}
