package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
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
			b, err := a.backend()
			if err != nil {
				return err
			}
			err = appcli.EditApp(cmd.Context(), b, args[0], func(app *v1alpha1.Application) error {
				return spec.Apply(app, cmd.Flags().Changed)
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
			if _, err := appops.SetFinalizers(nil, cascade, propagation); err != nil {
				return fmt.Errorf("--propagation-policy: %w", err)
			}
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
			b, err := a.backend()
			if err != nil {
				return err
			}
			if err := b.Delete(cmd.Context(), name, cascade, propagation); err != nil {
				return err
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
