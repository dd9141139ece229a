package benchkit

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
)

// StartCPUProfile fetches base's /debug/pprof/profile of seconds in the
// background into dir/name (pprof has no "stop now": the profile covers
// the seconds from now) and returns the function that waits for it to be
// saved, to call after the phase's figures are taken.
func StartCPUProfile(hc *http.Client, base string, seconds int, dir, name string) (wait func()) {
	saved := make(chan struct{})
	go func() {
		defer close(saved)
		FetchProfile(context.Background(), hc, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, seconds), dir, name)
	}()
	return func() { <-saved }
}

// FetchProfile saves the profile at url into dir/name, and says so; a
// failure is printed, not returned: a missing profile does not end a
// benchmark.
func FetchProfile(ctx context.Context, hc *http.Client, url, dir, name string) {
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
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		fmt.Printf("profile %s: %v\n", name, err)
		return
	}
	fmt.Printf("profile written: %s (%d bytes)\n", path, buf.Len())
}
