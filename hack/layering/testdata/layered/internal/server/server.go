// Package server stands for the API server.
package server

import (
	"example.com/layered/internal/appops"
	"example.com/layered/internal/server/ui"
)

// Serve is the server.
var Serve, UI = appops.Sync, ui.Files
