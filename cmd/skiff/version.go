package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skiffcd/skiff/internal/version"
)

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Kubernetes client version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := version.Get()
			out := cmd.OutOrStdout()
			switch output {
			case "json":
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			case "":
				fmt.Fprintf(out, "skiff: %s\n  Commit: %s\n  GoVersion: %s\n  KubernetesClient: %s\n",
					info.Version, info.Commit, info.GoVersion, info.KubeClient)
				return nil
			default:
				return fmt.Errorf("unknown output format %q (want json or nothing)", output)
			}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return cmd
}
