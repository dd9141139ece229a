package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/client-go/util/retry"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/appcli"
)

func newAppSetCommand(a *appContext) *cobra.Command {
	var spec appcli.SpecFlags
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Change fields of an Application, like `argocd app set`",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().NFlag() == 0 {
				return fmt.Errorf("nothing to set: give at least one flag")
			}
			c, _, err := a.client()
			if err != nil {
				return err
			}
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				app := &v1alpha1.Application{}
				if err := c.Get(cmd.Context(), a.key(args[0]), app); err != nil {
					return err
				}
				if err := spec.Apply(app, cmd.Flags().Changed); err != nil {
					return err
				}
				return c.Update(cmd.Context(), app)
			})
			if err != nil {
				return fmt.Errorf("setting application %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application '%s' updated\n", args[0])
			return nil
		},
	}
	addSpecFlags(cmd.Flags(), &spec, false)
	return cmd
}

func newAppDeleteCommand(a *appContext) *cobra.Command {
	var (
		cascade     bool
		propagation string
		yes         bool
	)
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an Application and, with --cascade (the default), its resources",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if !yes && isTerminalReader(cmd.InOrStdin()) {
				question := fmt.Sprintf("Delete application '%s'?", name)
				if cascade {
					question = fmt.Sprintf("Delete application '%s' and all its resources?", name)
				}
				ok, err := appcli.Confirm(cmd.InOrStdin(), cmd.ErrOrStderr(), question)
				if err != nil || !ok {
					return err
				}
			}
			c, _, err := a.client()
			if err != nil {
				return err
			}
			app := &v1alpha1.Application{}
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				if err := c.Get(cmd.Context(), a.key(name), app); err != nil {
					return err
				}
				finalizers, err := appcli.SetFinalizers(app.Finalizers, cascade, propagation)
				if err != nil {
					return err
				}
				if slices.Equal(finalizers, app.Finalizers) {
					return nil
				}
				app.Finalizers = finalizers
				return c.Update(cmd.Context(), app)
			})
			if err != nil {
				return fmt.Errorf("preparing to delete application %s: %w", name, err)
			}
			if err := c.Delete(cmd.Context(), app); err != nil {
				return fmt.Errorf("deleting application %s: %w", name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application '%s' deleted\n", name)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&cascade, "cascade", true, "delete the application's resources too")
	f.StringVarP(&propagation, "propagation-policy", "p", "foreground", "how resources are deleted: foreground or background")
	f.BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}
