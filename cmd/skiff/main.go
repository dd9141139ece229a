// Command skiff is GitOps continuous delivery and progressive delivery for
// Kubernetes in one binary. This package only wires subcommands to the
// packages under internal/.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		if code, silent := silentExit(err); silent {
			os.Exit(code)
		}
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "skiff",
		Short:         "GitOps continuous delivery and progressive delivery for Kubernetes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCommand(), newServerCommand(), newRenderCommand(), newAppCommand(),
		newLoginCommand(), newLogoutCommand(), newAccountCommand(), newRolloutCommand(), newClusterCommand(), newApplicationSetCommand())
	return root
}
