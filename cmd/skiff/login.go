package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/skiffcd/skiff/internal/cli/sessioncli"
)

// sessionFlags are the flags of the commands that use the saved session.
type sessionFlags struct {
	configPath string
}

func (s *sessionFlags) path() (string, error) {
	if s.configPath != "" {
		return s.configPath, nil
	}
	return sessioncli.DefaultConfigPath()
}

// load reads the saved session; it must hold a token.
func (s *sessionFlags) load() (string, *sessioncli.Config, error) {
	path, err := s.path()
	if err != nil {
		return "", nil, err
	}
	cfg, err := sessioncli.LoadConfig(path)
	if err != nil {
		return "", nil, err
	}
	if cfg.Token == "" {
		return "", nil, errors.New("not logged in: run skiff login first")
	}
	return path, cfg, nil
}

func (s *sessionFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.configPath, "config", "", "file that keeps the session (default $XDG_CONFIG_HOME/skiff/config)")
}

// readSecret asks for a secret on a terminal; off a terminal it must come
// from a flag.
func readSecret(in io.Reader, errOut io.Writer, prompt, flag string) (string, error) {
	f, ok := in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return "", fmt.Errorf("give %s (no terminal to ask on)", flag)
	}
	fmt.Fprint(errOut, prompt)
	b, err := term.ReadPassword(int(f.Fd()))
	fmt.Fprintln(errOut)
	return string(b), err
}

func newLoginCommand() *cobra.Command {
	var (
		s                   sessionFlags
		username, password  string
		insecure, plainText bool
	)
	cmd := &cobra.Command{
		Use:   "login SERVER",
		Short: "Log in to a Skiff API server, like `argocd login`",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := s.path()
			if err != nil {
				return err
			}
			if password == "" {
				if password, err = readSecret(cmd.InOrStdin(), cmd.ErrOrStderr(), "Password: ", "--password"); err != nil {
					return err
				}
			}
			cfg := &sessioncli.Config{Server: args[0], Insecure: insecure, PlainText: plainText}
			if err := sessioncli.NewClient(cfg).Login(cmd.Context(), username, password); err != nil {
				return err
			}
			if err := cfg.Save(path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "'%s' logged in successfully\n", username)
			return nil
		},
	}
	s.add(cmd)
	f := cmd.Flags()
	f.StringVar(&username, "username", "admin", "user name")
	f.StringVar(&password, "password", "", "password (asked for on a terminal when left out)")
	f.BoolVar(&insecure, "insecure-skip-tls-verify", false, "do not check the server's TLS certificate (a self-signed one)")
	f.BoolVar(&plainText, "plaintext", false, "use HTTP, for a server run with --insecure")
	return cmd
}

func newLogoutCommand() *cobra.Command {
	var s sessionFlags
	cmd := &cobra.Command{
		Use:   "logout",
		Short: "End the saved session",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, cfg, err := s.load()
			if err != nil {
				return err
			}
			logoutErr := sessioncli.NewClient(cfg).Logout(cmd.Context())
			// The token is forgotten even when the server could not be reached.
			if err := cfg.Save(path); err != nil {
				return err
			}
			if logoutErr != nil {
				return logoutErr
			}
			fmt.Fprintf(cmd.OutOrStdout(), "logged out from '%s'\n", cfg.Server)
			return nil
		},
	}
	s.add(cmd)
	return cmd
}

func newAccountCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "account", Short: "Manage the logged-in account"}
	var (
		s             sessionFlags
		current, next string
	)
	update := &cobra.Command{
		Use:   "update-password",
		Short: "Change the password of the logged-in account, like `argocd account update-password`",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, cfg, err := s.load()
			if err != nil {
				return err
			}
			if current == "" {
				if current, err = readSecret(cmd.InOrStdin(), cmd.ErrOrStderr(), "Current password: ", "--current-password"); err != nil {
					return err
				}
			}
			if next == "" {
				if next, err = readSecret(cmd.InOrStdin(), cmd.ErrOrStderr(), "New password: ", "--new-password"); err != nil {
					return err
				}
			}
			if err := sessioncli.NewClient(cfg).UpdatePassword(cmd.Context(), current, next); err != nil {
				return err
			}
			if err := cfg.Save(path); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Password updated")
			return nil
		},
	}
	s.add(update)
	update.Flags().StringVar(&current, "current-password", "", "the current password (asked for on a terminal when left out)")
	update.Flags().StringVar(&next, "new-password", "", "the new password, 8 to 72 characters (asked for on a terminal when left out)")
	cmd.AddCommand(update)
	return cmd
}
