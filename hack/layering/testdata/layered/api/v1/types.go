// Package v1 stands for the API types.
package v1

// App is a type.
type App struct{ Name string }
