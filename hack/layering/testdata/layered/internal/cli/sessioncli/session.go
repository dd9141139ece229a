// Package sessioncli stands for a CLI package.
package sessioncli

// Token is the session.
var Token = "t"
