// Command tool wires every face together, as cmd/skiff does.
package main

import (
	"example.com/layered/internal/cli/appcli"
	"example.com/layered/internal/server"
)

func main() { _, _ = appcli.Sync, server.Serve }
