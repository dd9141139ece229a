package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skiffcd/skiff/internal/cli/appcli"
)

// resourceFlags select resources as `argocd app actions` flags do.
type resourceFlags struct {
	filter appcli.ResourceFilter
}

func (r *resourceFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.filter.Kind, "kind", "", "kind of the resources")
	f.StringVar(&r.filter.Group, "group", "", "API group of the resources")
	f.StringVar(&r.filter.Name, "resource-name", "", "name of the resource")
	f.StringVar(&r.filter.Namespace, "namespace", "", "namespace of the resources")
}

func newAppActionsCommand(a *appContext) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "actions",
		Short: "List and run resource actions, like `argocd app actions`",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newAppActionsListCommand(a), newAppActionsRunCommand(a))
	return cmd
}

func newAppActionsListCommand(a *appContext) *cobra.Command {
	var (
		rf     resourceFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "list NAME",
		Short: "List the actions of an Application's resources, like `argocd app actions list`",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := a.backend()
			if err != nil {
				return err
			}
			actions, err := appcli.ListActions(cmd.Context(), b, args[0], rf.filter)
			if err != nil {
				return err
			}
			if output == "" {
				return appcli.WriteActions(cmd.OutOrStdout(), actions)
			}
			if actions == nil {
				actions = []appcli.ResourceAction{}
			}
			return appcli.WriteObject(cmd.OutOrStdout(), output, actions)
		},
	}
	rf.add(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml (default a table)")
	return cmd
}

func newAppActionsRunCommand(a *appContext) *cobra.Command {
	var (
		rf     resourceFlags
		all    bool
		params []string
	)
	cmd := &cobra.Command{
		Use:   "run NAME ACTION",
		Short: "Run a resource action, like `argocd app actions run`",
		Long: `Run ACTION on the resource of the Application that --kind (required),
--resource-name, --namespace and --group select; with --all on every one they
select. --param name=value gives an action's parameter (scale's replicas).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ps, err := appcli.ParseParams(params)
			if err != nil {
				return err
			}
			b, err := a.backend()
			if err != nil {
				return err
			}
			ran, err := appcli.RunAction(cmd.Context(), b, args[0], args[1], rf.filter, ps, all)
			for _, r := range ran {
				fmt.Fprintf(cmd.OutOrStdout(), "ran %s on %s\n", args[1], r)
			}
			return err
		},
	}
	rf.add(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "run on every resource selected")
	cmd.Flags().StringArrayVar(&params, "param", nil, "parameter of the action as name=value (repeatable)")
	return cmd
}
