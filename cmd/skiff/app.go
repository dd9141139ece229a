package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/appcli"
)

// appContext holds the flags every `skiff app` subcommand shares.
type appContext struct {
	kubeconfig string
	namespace  string
}

func (a *appContext) key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: a.namespace, Name: name}
}

// client connects to the cluster of --kubeconfig.
func (a *appContext) client() (client.Client, *rest.Config, error) {
	cfg, err := loadConfig(a.kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	scheme, err := appcli.Scheme()
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, err
	}
	return c, cfg, nil
}

// get connects and reads the Application name.
func (a *appContext) get(ctx context.Context, name string) (client.Client, *v1alpha1.Application, error) {
	c, _, err := a.client()
	if err != nil {
		return nil, nil, err
	}
	app := &v1alpha1.Application{}
	if err := c.Get(ctx, a.key(name), app); err != nil {
		return nil, nil, fmt.Errorf("reading application %s: %w", name, err)
	}
	return c, app, nil
}

func newAppCommand() *cobra.Command {
	a := &appContext{}
	cmd := &cobra.Command{
		Use:   "app",
		Short: "Manage Applications, like `argocd app`, through the Kubernetes API",
		Args:  cobra.NoArgs,
	}
	f := cmd.PersistentFlags()
	f.StringVar(&a.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
	f.StringVarP(&a.namespace, "namespace", "N", "argocd", "namespace of the Applications (argocd --app-namespace)")
	cmd.AddCommand(
		newAppCreateCommand(a), newAppListCommand(a), newAppGetCommand(a), newAppSyncCommand(a),
		newAppWaitCommand(a), newAppDiffCommand(a), newAppManifestsCommand(a), newAppHistoryCommand(a),
		newAppRollbackCommand(a), newAppDeleteCommand(a), newAppTerminateCommand(a), newAppSetCommand(a),
	)
	return cmd
}

// silentExit reports the exit code of an error that asks to exit without
// a message, such as `app diff` finding differences.
func silentExit(err error) (int, bool) {
	var exit *appcli.ExitError
	if errors.As(err, &exit) {
		return exit.Code, true
	}
	return 0, false
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
