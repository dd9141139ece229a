package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/appcli"
)

func newAppListCommand(a *appContext) *cobra.Command {
	var (
		output, selector string
		projects         []string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List Applications, like `argocd app list`",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := []client.ListOption{client.InNamespace(a.namespace)}
			if selector != "" {
				sel, err := labels.Parse(selector)
				if err != nil {
					return fmt.Errorf("--selector %q: %w", selector, err)
				}
				opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
			}
			c, _, err := a.client()
			if err != nil {
				return err
			}
			var list v1alpha1.ApplicationList
			if err := c.List(cmd.Context(), &list, opts...); err != nil {
				return fmt.Errorf("listing applications in %s: %w", a.namespace, err)
			}
			apps := list.Items[:0]
			for _, app := range list.Items {
				if len(projects) == 0 || slices.Contains(projects, app.Spec.Project) {
					apps = append(apps, app)
				}
			}
			out := cmd.OutOrStdout()
			switch output {
			case "", "wide":
				return appcli.WriteList(out, apps, output == "wide")
			case "name":
				for _, app := range apps {
					fmt.Fprintln(out, app.Name)
				}
				return nil
			}
			return appcli.WriteObject(out, output, apps)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "output format: wide, json, yaml or name")
	f.StringVarP(&selector, "selector", "l", "", "label selector")
	f.StringArrayVarP(&projects, "project", "p", nil, "only applications of this project (repeatable)")
	return cmd
}

func newAppGetCommand(a *appContext) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show an Application and its resources, like `argocd app get`",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, app, err := a.get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			switch output {
			case "", "wide":
				return appcli.WriteApp(cmd.OutOrStdout(), app)
			}
			return appcli.WriteObject(cmd.OutOrStdout(), output, app)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: wide, json or yaml")
	return cmd
}

func newAppHistoryCommand(a *appContext) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "Show the deployment history of an Application",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, app, err := a.get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if output == "" || output == "wide" {
				return appcli.WriteHistory(cmd.OutOrStdout(), app)
			}
			return appcli.WriteObject(cmd.OutOrStdout(), output, app.Status.History)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: wide, json or yaml")
	return cmd
}
