// Package ui stands for the web UI.
package ui

// Files are the UI's files.
var Files = "index.html"
