// Package application stands for a controller.
package application

import v1 "example.com/layered/api/v1"

// Reconcile is the controller.
func Reconcile(a v1.App) string { return a.Name }
