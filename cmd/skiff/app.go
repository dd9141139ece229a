package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/appcli"
	"github.com/skiffcd/skiff/internal/cli/sessioncli"
	"github.com/skiffcd/skiff/internal/kubeclient"
	"github.com/skiffcd/skiff/internal/source"
)

// appContext holds the flags every `skiff app` subcommand shares.
type appContext struct {
	kubeconfig string
	namespace  string

	// The API server's flags, named as argocd's global ones.
	core      bool
	server    string
	authToken string
	insecure  bool
	plainText bool
	session   sessionFlags
	flags     *pflag.FlagSet
}

// client connects to the cluster of --kubeconfig.
func (a *appContext) client() (client.Client, *rest.Config, error) {
	cfg, err := loadConfig(a.kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, err
	}
	return c, cfg, nil
}

// apiSession settles where the commands go: the API server of --server
// ($SKIFF_SERVER) or of the saved login, or nil for the cluster of the
// kubeconfig (--core, an explicit --kubeconfig, or no session saved).
func (a *appContext) apiSession() (*sessioncli.Config, error) {
	changed := func(name string) bool { return a.flags != nil && a.flags.Changed(name) }
	server, token := a.server, a.authToken
	if server == "" {
		server = os.Getenv("SKIFF_SERVER")
	}
	if token == "" {
		token = os.Getenv("SKIFF_AUTH_TOKEN")
	}
	if a.core {
		return nil, nil
	}
	if changed("kubeconfig") {
		if changed("server") {
			return nil, errors.New("--kubeconfig and --server exclude each other: give --core to use the kubeconfig")
		}
		return nil, nil
	}
	path, err := a.session.path()
	if err != nil {
		return nil, err
	}
	saved, err := sessioncli.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	cfg := saved
	if server != "" && server != saved.Server {
		cfg = &sessioncli.Config{Server: server}
	}
	if token != "" {
		cfg.Token = token
	}
	if cfg.Server == "" || cfg.Token == "" {
		if server != "" {
			return nil, fmt.Errorf("no session for %s: run skiff login %s, or give --auth-token", server, server)
		}
		return nil, nil
	}
	if changed("insecure") {
		cfg.Insecure = a.insecure
	}
	if changed("plaintext") {
		cfg.PlainText = a.plainText
	}
	return cfg, nil
}

// backend connects to the API server or to the cluster, as apiSession
// settles.
func (a *appContext) backend() (appcli.Backend, error) {
	cfg, err := a.apiSession()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		return &appcli.API{Client: sessioncli.NewClient(cfg)}, nil
	}
	c, rc, err := a.kube()
	if err != nil {
		return nil, err
	}
	return &appcli.Kube{
		Client: c, Config: rc, Namespace: a.namespace,
		RepoCredentials: source.Credentials{Password: os.Getenv("SKIFF_REPO_PASSWORD")},
	}, nil
}

// kube connects to the cluster of the kubeconfig, the way apiSession
// chose when it found no session; without --core or --kubeconfig the error
// names both ways.
func (a *appContext) kube() (client.Client, *rest.Config, error) {
	c, rc, err := a.client()
	if err != nil && !a.core && !a.flags.Changed("kubeconfig") {
		return nil, nil, fmt.Errorf("not logged in (skiff login SERVER) and %w", err)
	}
	return c, rc, err
}

// get connects and reads the Application name.
func (a *appContext) get(ctx context.Context, name string) (*v1alpha1.Application, error) {
	b, err := a.backend()
	if err != nil {
		return nil, err
	}
	return b.Get(ctx, name, "")
}

// addFlags registers the flags every `skiff app` subcommand shares.
func (a *appContext) addFlags(f *pflag.FlagSet) {
	a.addConnectionFlags(f)
	f.StringVarP(&a.namespace, "namespace", "N", "argocd", "namespace of the Applications with --core (argocd --app-namespace)")
}

// addConnectionFlags registers the flags that choose and reach the API
// server or the cluster, which `skiff app` and `skiff rollout` share.
func (a *appContext) addConnectionFlags(f *pflag.FlagSet) {
	a.flags = f
	f.StringVar(&a.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster); implies --core")
	f.BoolVar(&a.core, "core", false, "talk to the Kubernetes API of the kubeconfig, not to the API server")
	f.StringVar(&a.server, "server", "", "API server address (default $SKIFF_SERVER, else the one of skiff login)")
	f.StringVar(&a.authToken, "auth-token", "", "session token (default $SKIFF_AUTH_TOKEN, else the one of skiff login)")
	f.BoolVar(&a.insecure, "insecure", false, "do not check the API server's TLS certificate")
	f.BoolVar(&a.plainText, "plaintext", false, "use HTTP to reach the API server")
	f.StringVar(&a.session.configPath, "config", "", "file that keeps the session (default $XDG_CONFIG_HOME/skiff/config)")
}

func newAppCommand() *cobra.Command {
	a := &appContext{}
	cmd := &cobra.Command{
		Use:   "app",
		Short: "Manage Applications, like `argocd app`, through the API server or the Kubernetes API",
		Long: `Manage Applications through the API server of the session saved by
` + "`skiff login`" + ` (or of --server and --auth-token), as argocd does; with --core,
an explicit --kubeconfig, or without a saved session, through the Kubernetes
API of the kubeconfig.`,
		Args: cobra.NoArgs,
	}
	a.addFlags(cmd.PersistentFlags())
	cmd.AddCommand(
		newAppCreateCommand(a), newAppListCommand(a), newAppGetCommand(a), newAppSyncCommand(a),
		newAppWaitCommand(a), newAppDiffCommand(a), newAppManifestsCommand(a), newAppHistoryCommand(a),
		newAppRollbackCommand(a), newAppDeleteCommand(a), newAppTerminateCommand(a), newAppConfirmDeletionCommand(a), newAppSetCommand(a),
		newAppActionsCommand(a),
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
