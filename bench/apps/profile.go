package main

import (
	"context"
	"net/http"
	"strings"

	"github.com/skiffcd/skiff/bench/internal/benchkit"
)

// startCPUProfile starts a CPU profile of skiff server lasting
// -profile-seconds from the start of a phase (pprof has no "stop now") and
// returns the function that waits for it to be saved, called after the
// phase's figures are taken.
func startCPUProfile(addr, name string) (wait func()) {
	return startProfileAt(http.DefaultClient, "http://"+addr, name)
}

// startAPIServerCPUProfile is startCPUProfile for kube-apiserver, which
// the triggered refresh keeps busier than skiff.
func startAPIServerCPUProfile(m *apiMetrics, name string) (wait func()) {
	hc := *m.client
	hc.Timeout = 0 // the profile takes -profile-seconds
	return startProfileAt(&hc, strings.TrimSuffix(m.url, "/metrics"), name)
}

// startProfileAt fetches base's /debug/pprof/profile in the background.
func startProfileAt(hc *http.Client, base, name string) (wait func()) {
	if *profileDir == "" {
		return func() {}
	}
	return benchkit.StartCPUProfile(hc, base, *profileSeconds, *profileDir, name)
}

// saveProfile saves one of skiff server's profiles by name (heap, goroutine).
func saveProfile(addr, profile, name string) {
	if *profileDir == "" {
		return
	}
	benchkit.FetchProfile(context.Background(), http.DefaultClient, "http://"+addr+"/debug/pprof/"+profile, *profileDir, name)
}
