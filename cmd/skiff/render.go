package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/mask"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/source"
)

func newRenderCommand() *cobra.Command {
	var (
		src         v1alpha1.ApplicationSource
		helmSets    []string
		valueFiles  []string
		releaseName string
		namespace   string
		cacheDir    string
		username    string
		insecure    bool
		showSecrets bool
	)
	cmd := &cobra.Command{
		Use:   "render --repo URL [--revision REV] [--path P | --chart NAME]",
		Short: "Print the manifests a source renders to, like `argocd app manifests`",
		Long: `Fetch a git repository (or a chart from a Helm repository) and print the
manifests it renders to, chosen and rendered as the server does. Secret values
are masked unless --show-secrets is given. The password for --username is read
from $SKIFF_REPO_PASSWORD.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if src.RepoURL == "" {
				return fmt.Errorf("--repo is required")
			}
			if len(helmSets) > 0 || len(valueFiles) > 0 || releaseName != "" {
				src.Helm = &v1alpha1.ApplicationSourceHelm{ValueFiles: valueFiles, ReleaseName: releaseName}
				for _, set := range helmSets {
					name, value, ok := strings.Cut(set, "=")
					if !ok {
						return fmt.Errorf("--helm-set %q: want name=value", set)
					}
					src.Helm.Parameters = append(src.Helm.Parameters, v1alpha1.HelmParameter{Name: name, Value: value})
				}
			}
			creds := source.Credentials{Username: username, Password: os.Getenv("SKIFF_REPO_PASSWORD"), Insecure: insecure}
			server, err := reposerver.NewInDir(cacheDir, reposerver.Options{Credentials: reposerver.StaticCredentials(creds)})
			if err != nil {
				return err
			}
			appName := filepath.Base(filepath.Clean("/" + src.Path))
			if src.Chart != "" {
				appName = src.Chart
			}
			resp, err := server.Manifests(cmd.Context(), reposerver.Request{
				AppName: appName, Namespace: namespace, Sources: []v1alpha1.ApplicationSource{src},
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, m := range resp.Manifests {
				obj := m.Object
				if !showSecrets {
					obj = mask.Secret(obj)
				}
				data, err := yaml.Marshal(obj.Object)
				if err != nil {
					return fmt.Errorf("printing %s: %w", m.File, err)
				}
				fmt.Fprintf(out, "---\n# Source: %s\n%s", m.File, data)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "rendered %d objects at revision %s\n", len(resp.Manifests), strings.Join(resp.Revisions, ","))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&src.RepoURL, "repo", "", "git repository URL (https://, ssh://, file://) or Helm repository URL with --chart")
	f.StringVar(&src.TargetRevision, "revision", "HEAD", "branch, tag, commit SHA or HEAD; a chart version or range with --chart")
	f.StringVar(&src.Path, "path", "", "directory inside the repository")
	f.StringVar(&src.Chart, "chart", "", "chart name in a Helm repository")
	f.StringArrayVar(&helmSets, "helm-set", nil, "Helm parameter name=value (repeatable)")
	f.StringArrayVar(&valueFiles, "values", nil, "Helm value file, relative to the chart (repeatable)")
	f.StringVar(&releaseName, "release-name", "", "Helm release name (default: the last path element or the chart name)")
	f.StringVar(&namespace, "dest-namespace", "default", "destination namespace")
	f.StringVar(&cacheDir, "cache-dir", "", "where repositories and charts are cached (default $XDG_CACHE_HOME/skiff or $HOME/.cache/skiff)")
	f.StringVar(&username, "username", "", "repository username (password from $SKIFF_REPO_PASSWORD)")
	f.BoolVar(&insecure, "insecure-skip-tls-verify", false, "do not verify the repository's TLS certificate")
	f.BoolVar(&showSecrets, "show-secrets", false, "print Secret values instead of masking them")
	return cmd
}
