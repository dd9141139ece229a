package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/cli/appcli"
)

func newAppSyncCommand(a *appContext) *cobra.Command {
	var (
		op        v1alpha1.SyncOperation
		resources []string
		force     bool
		async     bool
		timeout   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "sync NAME",
		Short: "Sync an Application and wait for the result, like `argocd app sync`",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, r := range resources {
				res, err := appcli.ParseResource(r)
				if err != nil {
					return err
				}
				op.Resources = append(op.Resources, res)
			}
			if force {
				op.SyncStrategy = &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{Force: true}}
			}
			b, err := a.backend()
			if err != nil {
				return err
			}
			return runOperation(cmd, b, args[0], func() (*v1alpha1.Application, error) { return b.Sync(cmd.Context(), args[0], &op) }, async, timeout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&op.Revision, "revision", "", "revision to sync to (default: the target revision)")
	f.BoolVar(&op.Prune, "prune", false, "delete resources git no longer has")
	f.BoolVar(&op.DryRun, "dry-run", false, "validate the sync without changing anything")
	f.StringArrayVar(&resources, "resource", nil, "sync only GROUP:KIND:NAME or GROUP:KIND:NAMESPACE/NAME (repeatable)")
	f.StringArrayVar(&op.SyncOptions, "sync-option", nil, "sync option Name=value for this sync (repeatable)")
	f.BoolVar(&force, "force", false, "replace resources that cannot be patched")
	f.BoolVar(&async, "async", false, "do not wait for the sync to finish")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for the sync (0 waits without limit)")
	return cmd
}

// runOperation requests an operation on the app and, unless async,
// follows it to the end; an operation that fails is an error carrying its
// message.
func runOperation(cmd *cobra.Command, b appcli.Backend, name string, request func() (*v1alpha1.Application, error), async bool, timeout time.Duration) error {
	ctx := cmd.Context()
	requested, err := request()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if async {
		fmt.Fprintf(out, "sync of application '%s' requested\n", name)
		return nil
	}
	ctx, cancel := withTimeout(ctx, timeout)
	defer cancel()
	progress := &appcli.Progress{Out: out, TTY: isTerminal(out)}
	app, err := appcli.Waiter{Backend: b, Interval: pollInterval(b), OnUpdate: progress.Update}.WaitOperation(ctx, name, requested)
	progress.Finish()
	if app != nil && app.Name != "" {
		fmt.Fprintln(out)
		if werr := appcli.WriteApp(out, app); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// pollInterval is how often a wait reads the Application: every second
// from the API server, which serves many clients.
func pollInterval(b appcli.Backend) time.Duration {
	if _, ok := b.(*appcli.API); ok {
		return time.Second
	}
	return 0
}

func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

func newAppWaitCommand(a *appContext) *cobra.Command {
	var (
		conds   appcli.Conditions
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait until an Application is synced, healthy and without operation, like `argocd app wait`",
		Long: `Wait until the Application meets the conditions given (--sync, --health,
--operation), or all of them when none is given.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if conds == (appcli.Conditions{}) {
				conds = appcli.Conditions{Sync: true, Health: true, Operation: true}
			}
			b, err := a.backend()
			if err != nil {
				return err
			}
			ctx, cancel := withTimeout(cmd.Context(), timeout)
			defer cancel()
			app, err := appcli.Waiter{Backend: b, Interval: pollInterval(b)}.Wait(ctx, args[0], conds)
			if err != nil {
				return err
			}
			return appcli.WriteApp(cmd.OutOrStdout(), app)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&conds.Sync, "sync", false, "wait until Synced")
	f.BoolVar(&conds.Health, "health", false, "wait until Healthy")
	f.BoolVar(&conds.Operation, "operation", false, "wait until no operation is running")
	f.DurationVar(&timeout, "timeout", 0, "how long to wait (0 waits without limit)")
	return cmd
}

func newAppTerminateCommand(a *appContext) *cobra.Command {
	return &cobra.Command{
		Use:   "terminate-op NAME",
		Short: "Stop the running operation of an Application",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := a.backend()
			if err != nil {
				return err
			}
			if err := b.Terminate(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application '%s' operation terminating\n", args[0])
			return nil
		},
	}
}

func newAppConfirmDeletionCommand(a *appContext) *cobra.Command {
	return &cobra.Command{
		Use:   "confirm-deletion NAME",
		Short: "Confirm the pruning or deletion of an Application's resources that wait for it (Prune=confirm, Delete=confirm)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := a.backend()
			if err != nil {
				return err
			}
			err = appcli.EditApp(cmd.Context(), b, args[0], func(app *v1alpha1.Application) error {
				appops.ApproveDeletion(app, time.Now())
				return nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Application '%s' updated successfully\n", args[0])
			return nil
		},
	}
}

func newAppRollbackCommand(a *appContext) *cobra.Command {
	var (
		prune   bool
		async   bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "rollback NAME [ID]",
		Short: "Sync an Application to a revision of its history (default: the previous one)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := int64(-1)
			if len(args) == 2 {
				n, err := strconv.ParseInt(args[1], 10, 64)
				if err != nil || n < 0 {
					return fmt.Errorf("history ID %q: want a number from `skiff app history`", args[1])
				}
				id = n
			}
			b, err := a.backend()
			if err != nil {
				return err
			}
			return runOperation(cmd, b, args[0], func() (*v1alpha1.Application, error) { return b.Rollback(cmd.Context(), args[0], id, prune) }, async, timeout)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&prune, "prune", false, "delete resources the old revision does not have")
	f.BoolVar(&async, "async", false, "do not wait for the rollback to finish")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait (0 waits without limit)")
	return cmd
}
