// Package appcli stands for a CLI package on the operations.
package appcli

import (
	"example.com/layered/internal/appops"
	"example.com/layered/internal/cli/sessioncli"
)

// Sync is a command.
var Sync, Token = appops.Sync, sessioncli.Token
