package main

import (
	"fmt"

	"github.com/spf13/cobra"

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
			b, err := a.backend()
			if err != nil {
				return err
			}
			apps, err := b.List(cmd.Context(), projects, selector)
			if err != nil {
				return err
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
	var (
		output               string
		refresh, hardRefresh bool
	)
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show an Application and its resources, like `argocd app get`",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := a.backend()
			if err != nil {
				return err
			}
			kind := ""
			if hardRefresh {
				kind = v1alpha1.RefreshHard
			} else if refresh {
				kind = v1alpha1.RefreshNormal
			}
			app, err := b.Get(cmd.Context(), args[0], kind)
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
	cmd.Flags().BoolVar(&refresh, "refresh", false, "ask the controller to compare the application with git again")
	cmd.Flags().BoolVar(&hardRefresh, "hard-refresh", false, "like --refresh, rendering again without the manifest cache")
	return cmd
}

func newAppHistoryCommand(a *appContext) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "Show the deployment history of an Application",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			app, err := a.get(cmd.Context(), args[0])
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
