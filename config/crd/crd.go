// Package crd embeds the CustomResourceDefinitions generated from api/v1alpha1
// by controller-gen (`make generate`), so the binary can install them.
package crd

import "embed"

// Bases holds bases/*.yaml, one CRD per file.
//
//go:embed bases/*.yaml
var Bases embed.FS
