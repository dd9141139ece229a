package server

import (
	"testing"

	"example.com/layered/internal/appops"
)

func TestServe(t *testing.T) { _ = appops.Sync }
