package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/cli/appcli"
	"github.com/skiffcd/skiff/internal/cli/rolloutcli"
	"github.com/skiffcd/skiff/internal/cli/sessioncli"
	"github.com/skiffcd/skiff/internal/rolloutops"
)

// rolloutContext holds the flags every `skiff rollout` subcommand shares.
type rolloutContext struct {
	// conn chooses the API server or the cluster as for `skiff app`.
	conn      appContext
	namespace string
}

// backend connects to the API server of the session or to the cluster
// of the kubeconfig, as `skiff app` chooses, and settles the namespace:
// --namespace, else the kubeconfig context's, else default.
func (r *rolloutContext) backend() (rolloutcli.Backend, error) {
	cfg, err := r.conn.apiSession()
	if err != nil {
		return nil, err
	}
	var b rolloutcli.Backend
	if cfg != nil {
		b = &rolloutcli.API{Client: &appcli.API{Client: sessioncli.NewClient(cfg)}}
	} else {
		c, _, err := r.conn.kube()
		if err != nil {
			return nil, err
		}
		b = &rolloutcli.Kube{Client: c}
	}
	if r.namespace == "" {
		ns, err := rolloutcli.DefaultNamespace(r.conn.kubeconfig)
		if err != nil {
			return nil, err
		}
		r.namespace = ns
	}
	return b, nil
}

// addFlags registers the flags every `skiff rollout` subcommand shares.
func (r *rolloutContext) addFlags(f *pflag.FlagSet) {
	r.conn.addConnectionFlags(f)
	f.StringVarP(&r.namespace, "namespace", "n", "", "namespace of the Rollouts (default: the kubeconfig context's, or default)")
}

func (r *rolloutContext) key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: r.namespace, Name: name}
}

// run runs req on the Rollout name and prints done.
func (r *rolloutContext) run(cmd *cobra.Command, name, done string, req rolloutops.Request) error {
	b, err := r.backend()
	if err != nil {
		return err
	}
	res, err := b.Run(cmd.Context(), r.key(name), req)
	if err != nil {
		return err
	}
	if res.Skipped != "" {
		fmt.Fprintln(cmd.OutOrStdout(), res.Skipped)
		return nil
	}
	fmt.Fprintf(cmd.OutOrStdout(), "rollout '%s' %s\n", name, done)
	return nil
}

func newRolloutCommand() *cobra.Command {
	r := &rolloutContext{}
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Manage Rollouts, like `kubectl argo rollouts`, through the API server or the Kubernetes API",
		Long: `Manage Rollouts through the API server of the session saved by
` + "`skiff login`" + ` (or of --server and --auth-token), which checks RBAC; with
--core, an explicit --kubeconfig, or without a saved session, through the
Kubernetes API of the kubeconfig. lint reads files only.`,
		Args: cobra.NoArgs,
	}
	r.addFlags(cmd.PersistentFlags())
	cmd.AddCommand(
		newRolloutGetCommand(r), newRolloutListCommand(r), newRolloutStatusCommand(r), newRolloutPromoteCommand(r),
		newRolloutAbortCommand(r), newRolloutRetryCommand(r), newRolloutPauseCommand(r), newRolloutRestartCommand(r),
		newRolloutSetCommand(r), newRolloutUndoCommand(r), newRolloutLintCommand(),
	)
	return cmd
}

// rolloutName takes NAME, or "rollout NAME" as the plugin spells it.
func rolloutName(args []string) (string, error) {
	switch {
	case len(args) == 1:
		return args[0], nil
	case len(args) == 2 && (args[0] == "rollout" || args[0] == "rollouts" || args[0] == "ro"):
		return args[1], nil
	}
	return "", fmt.Errorf("want NAME or rollout NAME, got %d arguments", len(args))
}

func newRolloutGetCommand(r *rolloutContext) *cobra.Command {
	var (
		output  string
		watch   bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "get [rollout] NAME",
		Short: "Show a Rollout with its ReplicaSets, pods and AnalysisRuns as a tree",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := rolloutName(args)
			if err != nil {
				return err
			}
			b, err := r.backend()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if watch {
				if output != "" {
					return errors.New("--watch prints the tree; it does not take --output")
				}
				ctx, cancel := withTimeout(cmd.Context(), timeout)
				defer cancel()
				printer := &rolloutcli.TreePrinter{Out: out, TTY: isTerminal(out)}
				err := rolloutcli.Watcher{Backend: b}.Watch(ctx, r.key(name), printer.See)
				if errors.Is(err, appcli.ErrTimeout) {
					return nil
				}
				return err
			}
			info, err := b.Load(cmd.Context(), r.key(name))
			if err != nil {
				return err
			}
			if output == "" {
				return rolloutcli.WriteTree(out, info, time.Now())
			}
			return appcli.WriteObject(out, output, info.Rollout)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "output format: json or yaml (default: the tree)")
	f.BoolVarP(&watch, "watch", "w", false, "redraw the tree as it changes")
	f.DurationVar(&timeout, "timeout", 0, "with --watch, stop after this long (0 watches until interrupted)")
	return cmd
}

func newRolloutListCommand(r *rolloutContext) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list [rollouts]",
		Short: "List Rollouts, like `kubectl argo rollouts list rollouts`",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && args[0] != "rollouts" && args[0] != "rollout" && args[0] != "ro" {
				return fmt.Errorf("list %s: only rollouts can be listed", args[0])
			}
			b, err := r.backend()
			if err != nil {
				return err
			}
			rollouts, err := b.List(cmd.Context(), r.namespace)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch output {
			case "":
				return rolloutcli.WriteList(out, rollouts)
			case "name":
				for _, ro := range rollouts {
					fmt.Fprintln(out, ro.Name)
				}
				return nil
			}
			return appcli.WriteObject(out, output, rollouts)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or name (default: a table)")
	return cmd
}

func newRolloutStatusCommand(r *rolloutContext) *cobra.Command {
	var (
		watch   bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Print the phase and message of a Rollout; --watch waits until it is Healthy or Degraded",
		Long: `Print the phase and message of a Rollout. With --watch, print each change
and exit 0 once the rollout is Healthy, non-zero when it is Degraded or the
--timeout passes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := r.backend()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if !watch {
				info, err := b.Load(cmd.Context(), r.key(args[0]))
				if err != nil {
					return err
				}
				return rolloutcli.WriteStatus(out, info.Rollout)
			}
			ctx, cancel := withTimeout(cmd.Context(), timeout)
			defer cancel()
			printer := &rolloutcli.StatusPrinter{Out: out}
			err = rolloutcli.Watcher{Backend: b}.Watch(ctx, r.key(args[0]), printer.See)
			if errors.Is(err, appcli.ErrTimeout) {
				return fmt.Errorf("waiting for rollout %s to be Healthy: %w", args[0], err)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&watch, "watch", "w", false, "wait until the rollout is Healthy or Degraded")
	f.DurationVarP(&timeout, "timeout", "t", 0, "with --watch, how long to wait (0 waits without limit)")
	return cmd
}

func newRolloutPromoteCommand(r *rolloutContext) *cobra.Command {
	var full bool
	cmd := &cobra.Command{
		Use:   "promote NAME",
		Short: "Resume a paused Rollout or move a canary to its next step; --full skips the remaining steps",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, done := rolloutops.Request{Op: rolloutops.Promote}, "promoted"
			if full {
				req.Op, done = rolloutops.PromoteFull, "fully promoted"
			}
			return r.run(cmd, args[0], done, req)
		},
	}
	cmd.Flags().BoolVar(&full, "full", false, "skip the remaining steps, pauses and analyses")
	return cmd
}

// newRolloutOpCommand is a command that runs op, which takes no
// arguments, on the Rollout NAME (or "rollout NAME", as the plugin spells
// it) and prints done.
func newRolloutOpCommand(r *rolloutContext, op rolloutops.Op, short, done string) *cobra.Command {
	return &cobra.Command{
		Use:   string(op) + " [rollout] NAME",
		Short: short,
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := rolloutName(args)
			if err != nil {
				return err
			}
			return r.run(cmd, name, done, rolloutops.Request{Op: op})
		},
	}
}

func newRolloutAbortCommand(r *rolloutContext) *cobra.Command {
	return newRolloutOpCommand(r, rolloutops.Abort, "Abort an update: go back to the stable revision; the Rollout is Degraded until retried", "aborted")
}

func newRolloutRetryCommand(r *rolloutContext) *cobra.Command {
	return newRolloutOpCommand(r, rolloutops.Retry, "Retry an aborted update", "retried")
}

func newRolloutPauseCommand(r *rolloutContext) *cobra.Command {
	return newRolloutOpCommand(r, rolloutops.Pause, "Pause a Rollout where it is (spec.paused)", "paused")
}

func newRolloutRestartCommand(r *rolloutContext) *cobra.Command {
	return newRolloutOpCommand(r, rolloutops.Restart, "Replace the pods of a Rollout (spec.restartAt: now)", "restarts")
}

func newRolloutSetCommand(r *rolloutContext) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "set",
		Short: "Change a Rollout",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "image NAME CONTAINER=IMAGE [CONTAINER=IMAGE...]",
		Short: "Set the image of containers of a Rollout (* for all of them), which starts a new revision",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			images, err := rolloutcli.ParseImages(args[1:])
			if err != nil {
				return err
			}
			return r.run(cmd, args[0], "image updated", rolloutops.Request{Op: rolloutops.SetImage, Images: images})
		},
	})
	return cmd
}

func newRolloutUndoCommand(r *rolloutContext) *cobra.Command {
	var toRevision int64
	cmd := &cobra.Command{
		Use:   "undo NAME",
		Short: "Go back to the pod template of the previous revision (or --to-revision)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.run(cmd, args[0], "undo", rolloutops.Request{Op: rolloutops.Undo, ToRevision: toRevision})
		},
	}
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "revision to go back to (default: the one before the newest)")
	return cmd
}

func newRolloutLintCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "lint FILE",
		Short: "Validate the Rollouts of a YAML file offline; exit non-zero on errors",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			count, problems := rolloutcli.Lint(data)
			out := cmd.OutOrStdout()
			for _, p := range problems {
				fmt.Fprintf(out, "%s: %s\n", args[0], p)
			}
			if len(problems) > 0 {
				return fmt.Errorf("%s: %d error(s)", args[0], len(problems))
			}
			if count == 0 {
				return fmt.Errorf("%s: no Rollout found", args[0])
			}
			fmt.Fprintf(out, "%s: %s valid\n", args[0], plural(count, "rollout"))
			return nil
		},
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
