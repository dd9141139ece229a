package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
	saved := make(chan struct{})
	go func() {
		defer close(saved)
		fetchProfile(context.Background(), hc, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, *profileSeconds), name)
	}()
	return func() { <-saved }
}

// saveProfile saves one of skiff server's profiles by name (heap, goroutine).
func saveProfile(addr, profile, name string) {
	if *profileDir == "" {
		return
	}
	fetchProfile(context.Background(), http.DefaultClient, "http://"+addr+"/debug/pprof/"+profile, name)
}

func fetchProfile(ctx context.Context, hc *http.Client, url, name string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Printf("profile %s: %v\n", name, err)
		return
	}
	resp, err := hc.Do(req)
	if err != nil {
		fmt.Printf("profile %s: %v\n", name, err)
		return
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		fmt.Printf("profile %s: %s: %.200s\n", name, resp.Status, buf.String())
		return
	}
	path := filepath.Join(*profileDir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		fmt.Printf("profile %s: %v\n", name, err)
		return
	}
	fmt.Printf("profile written: %s (%d bytes)\n", path, buf.Len())
}
