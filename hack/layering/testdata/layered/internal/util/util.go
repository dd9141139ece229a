// Package util stands for a shared package no rule covers.
package util

import v1 "example.com/layered/api/v1"

// Name is a helper.
func Name(a v1.App) string { return a.Name }
