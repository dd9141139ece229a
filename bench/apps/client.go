package main

import (
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/bench/internal/benchkit"
)

func newClient(cfg *rest.Config) (client.WithWatch, error) { return benchkit.NewClient(cfg) }

// forEach runs fn(0..n-1) with inFlight calls at a time and returns the first error.
func forEach(n int, fn func(i int) error) error { return benchkit.ForEach(n, inFlight, fn) }
