// Package browser drives Skiff's web UI in headless Chromium against a real
// control plane and the whole server run in-process.
package browser

import (
	"testing"

	"github.com/chromedp/chromedp"
)

func TestChromedpLinked(t *testing.T) {
	_ = chromedp.NewExecAllocator
}
