// Package browser opens a page in headless Chromium, driven through the
// DevTools protocol by chromedp, and tells what a person would see of it:
// the errors its console shows, its size, what its scripts compute, and a
// screenshot. The tests of the HTML reports use it; Chromium is Debian's
// package (hack/tools.sh chromium).
package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// EnvExecutable names the browser to use instead of the first of
// chromium, chromium-browser and google-chrome on the PATH.
const EnvExecutable = "FARGATEKIT_CHROMIUM"

// Executable returns the path of the browser, or an error saying how to
// install one.
func Executable() (string, error) {
	if p := os.Getenv(EnvExecutable); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium on the PATH: install it with hack/tools.sh chromium (Debian's package), or name it in " + EnvExecutable)
}

// Browser is a headless Chromium.
type Browser struct {
	ctx    context.Context
	cancel func()
}

// Start starts the browser; Close stops it.
func Start(ctx context.Context) (*Browser, error) {
	exe, err := Executable()
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // root in CI, where Chromium's sandbox refuses to start
		chromedp.Flag("disable-gpu", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[int]("1")); err != nil { // starts it
		cancelBrowser()
		cancelAlloc()
		return nil, fmt.Errorf("starting %s: %w", exe, err)
	}
	return &Browser{ctx: bctx, cancel: func() { cancelBrowser(); cancelAlloc() }}, nil
}

// Close stops the browser.
func (b *Browser) Close() { b.cancel() }

// View is how a page is shown: the viewport's width and height in CSS
// pixels, and dark mode.
type View struct {
	Width, Height int64
	Dark          bool
}

// Page is a file opened in a tab of its own.
type Page struct {
	ctx    context.Context
	cancel func()

	mu     sync.Mutex
	errors []string
}

// Open opens the file at path in a new tab shown as v, and waits until it is
// loaded. The tab records what its console reports as errors: console.error,
// uncaught exceptions, and the browser's own errors (a resource that fails to
// load, a blocked request).
func (b *Browser) Open(path string, v View) (*Page, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	tctx, cancel := chromedp.NewContext(b.ctx)
	p := &Page{ctx: tctx, cancel: cancel}
	if err := chromedp.Listen(tctx, p.record); err != nil {
		cancel()
		return nil, fmt.Errorf("opening a tab: %w", err)
	}
	scheme := "light"
	if v.Dark {
		scheme = "dark"
	}
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			if _, err := chromedp.Call(ctx, runtime.Enable, struct{}{}); err != nil {
				return err
			}
			_, err := chromedp.Call(ctx, log.Enable, struct{}{})
			return err
		}),
		chromedp.EmulateViewport(v.Width, v.Height),
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
			return err
		}),
		chromedp.Navigate("file://" + abs),
		chromedp.WaitReady("body"),
	}
	if err := chromedp.Do(tctx, steps...); err != nil {
		cancel()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return p, nil
}

// record keeps the events that are errors. It runs on the tab's reading
// goroutine, so it only appends.
func (p *Page) record(ev any) {
	var msg string
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		var parts []string
		for _, a := range e.Args {
			parts = append(parts, strings.TrimSpace(a.Description+" "+string(a.Value)))
		}
		msg = "console.error: " + strings.Join(parts, " ")
	case *runtime.EventExceptionThrown:
		msg = "uncaught: " + e.ExceptionDetails.Text
		if x := e.ExceptionDetails.Exception; x != nil {
			msg += " " + x.Description
		}
	case *log.EventEntryAdded:
		if e.Entry.Level != log.EntryLevelError {
			return
		}
		msg = string(e.Entry.Source) + ": " + e.Entry.Text
	default:
		return
	}
	p.mu.Lock()
	p.errors = append(p.errors, msg)
	p.mu.Unlock()
}

// Errors returns the errors the page's console showed so far.
func (p *Page) Errors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errors...)
}

// Eval evaluates a JavaScript expression in the page and decodes its value
// into T.
func Eval[T any](p *Page, expression string) (T, error) {
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expression))
	if err != nil {
		return v, fmt.Errorf("evaluating %s: %w", expression, err)
	}
	return v, nil
}

// Screenshot returns a PNG of the whole page.
func (p *Page) Screenshot() ([]byte, error) {
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return nil, fmt.Errorf("taking a screenshot: %w", err)
	}
	return png, nil
}

// Close closes the tab.
func (p *Page) Close() { p.cancel() }

// Problems returns what keeps a report page, shown as v, from reading well:
// console errors, a height outside 400-20,000 px, a page wider than the
// screen (it scrolls sideways), and charts without a text alternative
// (svg.chart whose aria-labelledby names no element with text).
func (p *Page) Problems(v View) ([]string, error) {
	out := p.Errors()
	height, err := Eval[int64](p, `document.documentElement.scrollHeight`)
	if err != nil {
		return nil, err
	}
	if height < 400 || height > 20000 {
		out = append(out, fmt.Sprintf("page height %d px at %d px wide, want 400-20,000", height, v.Width))
	}
	width, err := Eval[int64](p, `document.documentElement.scrollWidth`)
	if err != nil {
		return nil, err
	}
	if width > v.Width {
		out = append(out, fmt.Sprintf("page %d px wide on a screen of %d: it scrolls sideways", width, v.Width))
	}
	unlabelled, err := Eval[int](p, `Array.from(document.querySelectorAll("svg.chart")).filter(s =>
		!(s.getAttribute("aria-labelledby") || "").split(" ").every(id => document.getElementById(id) && document.getElementById(id).textContent.trim())).length`)
	if err != nil {
		return nil, err
	}
	if unlabelled > 0 {
		out = append(out, fmt.Sprintf("%d charts without a text alternative", unlabelled))
	}
	return out, nil
}

// Count returns how many elements match a CSS selector.
func (p *Page) Count(selector string) (int, error) {
	quoted, err := json.Marshal(selector)
	if err != nil {
		return 0, err
	}
	return Eval[int](p, "document.querySelectorAll("+string(quoted)+").length")
}

// SaveScreenshot writes a PNG of the whole page to path.
func (p *Page) SaveScreenshot(path string) error {
	png, err := p.Screenshot()
	if err != nil {
		return err
	}
	return os.WriteFile(path, png, 0o644)
}

// ForTest starts a browser for a test and stops it when the test ends. With
// no Chromium it fails the test when FARGATEKIT_INTEGRATION=required (make
// test, CI); otherwise it logs how to get one and returns nil, and the test
// leaves out what needs the browser.
func ForTest(t testing.TB) *Browser {
	t.Helper()
	if _, err := Executable(); err != nil {
		if os.Getenv("FARGATEKIT_INTEGRATION") == "required" {
			t.Fatal(err)
		}
		t.Logf("%v; make test runs the browser checks", err)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	b, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}
