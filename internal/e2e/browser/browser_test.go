package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skiffcd/skiff/internal/testwait"
)

// page is one Chromium tab on the Skiff server.
type page struct {
	t   *testing.T
	ctx context.Context

	mu         sync.Mutex
	exceptions []string // uncaught JavaScript errors and CSP violations fail the test
}

// newPage starts a headless Chromium with a fresh profile, stopped when the
// test ends, at the given window size.
func newPage(t *testing.T, width, height int) *page {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		// Containers often have a small /dev/shm; Chromium then crashes tabs.
		chromedp.Flag("disable-dev-shm-usage", true),
		// Which puts its shared memory files under TMPDIR, where they
		// outlive the browser unless the test's own directory holds them.
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	p := &page{t: t, ctx: ctx}
	// The first Run starts the browser; it must not carry a timeout (it
	// would stop the browser), so a watchdog bounds it instead.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			cancel()
			cancelAlloc()
			t.Fatalf("starting chromium: %v", err)
		}
	case <-time.After(60 * time.Second):
		cancel()
		cancelAlloc()
		t.Fatal("chromium did not start within 60s")
	}
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			switch {
			case m.IsException():
				p.mu.Lock()
				p.exceptions = append(p.exceptions, m.Text)
				p.mu.Unlock()
			case strings.Contains(m.Text, "Content Security Policy"):
				// The UI must work under its own CSP: a violation is a bug.
				p.mu.Lock()
				p.exceptions = append(p.exceptions, m.Text)
				p.mu.Unlock()
			case m.Type == chromedp.ConsoleError && strings.Contains(m.Text, "status of 401"):
				// Expected: the UI asks for the session before logging in.
			case m.Type == chromedp.ConsoleError:
				// CSP violations and failed requests (a 404 of an API the
				// server lacks is expected: the UI says "not available").
				t.Logf("browser console: %s %s", m.Text, m.URL)
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		<-done
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, e := range p.exceptions {
			t.Errorf("in the browser: %s", e)
		}
	})
	return p
}

// tid selects by data-testid.
func tid(id string) string { return `[data-testid="` + id + `"]` }

// run runs actions within timeout; a failure saves a screenshot and fails the test.
func (p *page) run(timeout time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.fail("%s: %v", what, err)
	}
}

func (p *page) fail(format string, args ...any) {
	p.t.Helper()
	p.screenshot("failure")
	p.t.Fatalf(format, args...)
}

func (p *page) open(path string) {
	p.t.Helper()
	p.run(30*time.Second, "open "+path, chromedp.Navigate(env.url+path))
}

// click clicks sel once visible. A live update may replace the element
// between finding and clicking it: that is retried, a few times at most.
func (p *page) click(sel string) {
	p.t.Helper()
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
		err = chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
		cancel()
		if err == nil || !strings.Contains(err.Error(), "Could not find node") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		p.fail("click %s: %v", sel, err)
	}
}

func (p *page) visible(sel string, timeout time.Duration) {
	p.t.Helper()
	p.run(timeout, "wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
}

func (p *page) typeInto(sel, text string) {
	p.t.Helper()
	p.run(30*time.Second, "type into "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), text))
}

// eval evaluates a JavaScript expression.
func eval[T any](p *page, js string) (T, error) {
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](js))
}

// until polls a JavaScript condition every 250 ms for at most timeout.
func (p *page) until(what, js string, timeout time.Duration) {
	p.t.Helper()
	err := testwait.Until(p.ctx, what, func() error {
		ok, err := eval[bool](p, "Boolean("+js+")")
		if err == nil && !ok {
			return errors.New("false in the page")
		}
		return err
	}, testwait.Timeout(timeout), testwait.Interval(250*time.Millisecond))
	if err != nil {
		p.fail("%v", err)
	}
}

// attrIs is a condition: the element's attribute has the value.
func attrIs(sel, attr, value string) string {
	return fmt.Sprintf(`document.querySelector(%s)?.getAttribute(%s) === %s`, jsString(sel), jsString(attr), jsString(value))
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// exists reports whether sel matches an element now.
func (p *page) exists(sel string) bool {
	p.t.Helper()
	ok, err := eval[bool](p, fmt.Sprintf(`document.querySelector(%s) !== null`, jsString(sel)))
	if err != nil {
		p.fail("query %s: %v", sel, err)
	}
	return ok
}

// text is the element's text content.
func (p *page) text(sel string) string {
	p.t.Helper()
	s, err := eval[string](p, fmt.Sprintf(`document.querySelector(%s)?.textContent ?? ""`, jsString(sel)))
	if err != nil {
		p.fail("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// markNoReload sets a flag a page reload would lose; checkNoReload asserts it is still set.
func (p *page) markNoReload() {
	p.t.Helper()
	if _, err := eval[bool](p, `window.__skiffTestNoReload = true`); err != nil {
		p.fail("marking the page: %v", err)
	}
}

func (p *page) checkNoReload() {
	p.t.Helper()
	ok, err := eval[bool](p, `window.__skiffTestNoReload === true`)
	if err != nil || !ok {
		p.fail("the page reloaded (or the check failed: %v)", err)
	}
}

// screenshot saves the whole page as a PNG among the test artifacts.
func (p *page) screenshot(stage string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Errorf("screenshot %s: %v", stage, err)
		return
	}
	path := screenshotName(p.t, stage)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Errorf("screenshot %s: %v", stage, err)
		return
	}
	p.t.Logf("screenshot: %s", path)
}

// login signs in through the login form and waits to leave it.
func (p *page) login(user, password string) {
	p.t.Helper()
	p.open("/applications")
	p.visible("#login-username", 30*time.Second)
	p.typeInto("#login-username", user)
	p.typeInto("#login-password", password)
	p.click("#login-submit")
	p.until("the login to complete", `location.pathname !== "/login" && document.querySelector('[data-testid="current-user"]') !== null`, 20*time.Second)
}

// viewport resizes the page as a phone's (touch, device scale 3).
func (p *page) viewport(width, height int64) {
	p.t.Helper()
	p.run(10*time.Second, "set the viewport", chromedp.EmulateViewport(width, height, chromedp.EmulateScale(3), chromedp.EmulateMobile))
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// disabled reports whether the element is a disabled control.
func (p *page) disabled(sel string) bool {
	p.t.Helper()
	ok, err := eval[bool](p, fmt.Sprintf(`document.querySelector(%s)?.disabled === true`, jsString(sel)))
	if err != nil {
		p.fail("query %s: %v", sel, err)
	}
	return ok
}

// clearInput empties a text field as a user would, so the page sees an input event.
func (p *page) clearInput(sel string) {
	p.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%s); e.value = ""; e.dispatchEvent(new Event("input", {bubbles: true})); return true; })()`, jsString(sel))
	if _, err := eval[bool](p, js); err != nil {
		p.fail("clear %s: %v", sel, err)
	}
}

// count is how many elements match sel.
func (p *page) count(sel string) int {
	p.t.Helper()
	n, err := eval[int](p, fmt.Sprintf(`document.querySelectorAll(%s).length`, jsString(sel)))
	if err != nil {
		p.fail("count %s: %v", sel, err)
	}
	return n
}

// hasClass reports whether the element has the CSS class.
func (p *page) hasClass(sel, class string) bool {
	p.t.Helper()
	ok, err := eval[bool](p, fmt.Sprintf(`document.querySelector(%s)?.classList.contains(%s) === true`, jsString(sel), jsString(class)))
	if err != nil {
		p.fail("class of %s: %v", sel, err)
	}
	return ok
}
