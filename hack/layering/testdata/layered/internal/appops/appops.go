// Package appops stands for an operations package.
package appops

import "example.com/layered/internal/util"

// Sync is an operation.
var Sync = util.Name
