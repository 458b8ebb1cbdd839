package audit

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ensureChromium is the script that installs Debian's chromium
// (./run.sh test runs it).
const ensureChromium = "vendormock/images/ensure-chromium.sh"

// chromiumPath returns the headless browser, or fails the test naming the
// script that installs it: the page's test never skips.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatalf("no chromium on PATH: run %s (Debian's chromium package; ./run.sh test does it)", ensureChromium)
	return ""
}

// pageCheck is what the browser saw of a page.
type pageCheck struct {
	errors  []string // console errors, uncaught exceptions, log entries of level error
	svgs    int      // <svg> elements with a non-zero rendered size
	rules   int      // rows of the rules table
	verdict string   // text of #verdict
	// firstH2 is the text of the page's first section heading;
	// failuresFirst is 1 when the failures block (#failures or #findings)
	// comes before the rules table and starts within the first screen;
	// failureItems counts its lines.
	firstH2       string
	failuresFirst int
	failureItems  int
	png           []byte // full-page screenshot
	loadedOK      bool
}

// openPage loads path in headless Chromium and collects console errors,
// what rendered and a screenshot.
func openPage(t *testing.T, path string) pageCheck {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath(t)), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	var (
		mu  sync.Mutex
		got pageCheck
	)
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				got.errors = append(got.errors, "console."+string(e.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			got.errors = append(got.errors, "uncaught: "+e.ExceptionDetails.Text+" "+exceptionText(e.ExceptionDetails))
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				got.errors = append(got.errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable the log domain: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitReady("body"),
		chromedp.Sleep(300*time.Millisecond)); err != nil { // late console messages
		t.Fatalf("open %s in chromium: %v", path, err)
	}
	eval := func(js string) int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatalf("evaluate %q: %v", js, err)
		}
		return n
	}
	svgs := eval(`Array.from(document.querySelectorAll("svg")).filter(s => { const r = s.getBoundingClientRect(); return r.width > 0 && r.height > 0 }).length`)
	rules := eval(`document.querySelectorAll("#rules tbody tr").length`)
	verdict, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("verdict") || {}).textContent || ""`))
	if err != nil {
		t.Fatalf("read the verdict: %v", err)
	}
	firstH2, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("h2") || {}).textContent || ""`))
	if err != nil {
		t.Fatalf("read the first heading: %v", err)
	}
	failuresFirst := eval(`(() => {
		const f = document.getElementById("failures") || document.getElementById("findings");
		const r = document.getElementById("rules");
		if (!f || !r) return 0;
		const before = f.compareDocumentPosition(r) & Node.DOCUMENT_POSITION_FOLLOWING;
		return before && f.getBoundingClientRect().top < window.innerHeight ? 1 : 0;
	})()`)
	failureItems := eval(`document.querySelectorAll("#failures li, #findings li").length`)
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	got.svgs, got.rules, got.verdict, got.png, got.loadedOK = svgs, rules, verdict, png, true
	got.firstH2, got.failuresFirst, got.failureItems = firstH2, failuresFirst, failureItems
	return got
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil || d.Exception == nil {
		return ""
	}
	return d.Exception.Description
}

// TestAuditPageRendersInChromium opens the golden audit's audit.html in
// headless Chromium: it renders (six charts with a size, every rule's
// row, the verdict), the screenshot is a real image, and the console has
// no error. The negative control is a page with a script error, which
// must be caught.
func TestAuditPageRendersInChromium(t *testing.T) {
	dir, rep := buildFixture(t)
	got := openPage(t, filepath.Join(dir, HTMLFile))
	if len(got.errors) > 0 {
		t.Errorf("console errors on audit.html: %q", got.errors)
	}
	if got.svgs != len(rep.Charts) || got.svgs == 0 {
		t.Errorf("%d charts rendered with a size; want %d", got.svgs, len(rep.Charts))
	}
	if got.rules != len(rep.Rules) {
		t.Errorf("%d rule rows rendered; want %d", got.rules, len(rep.Rules))
	}
	if !strings.Contains(got.verdict, "FAILS the audit") {
		t.Errorf("verdict %q; want the fixture's FAILS", got.verdict)
	}
	failed := 0
	for _, r := range rep.Rules {
		if r.Verdict == Fail {
			failed++
		}
	}
	if got.firstH2 != "Failures" || got.failuresFirst != 1 || got.failureItems != failed || failed == 0 {
		t.Errorf("first heading %q, failures first %d, %d failure lines; want \"Failures\" first, in the first screen, before the rules table, one line per failed rule (%d)",
			got.firstH2, got.failuresFirst, got.failureItems, failed)
	}
	if len(got.png) < 10_000 || !bytes.HasPrefix(got.png, []byte("\xff\xd8")) {
		t.Errorf("screenshot of %d bytes is not a JPEG of a rendered page", len(got.png))
	}
	shot := filepath.Join(dir, "audit.jpg")
	if err := os.WriteFile(shot, got.png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s (%d bytes), %d charts, %d rules", shot, len(got.png), got.svgs, got.rules)

	t.Run("negative control: failures below the rules table are caught", func(t *testing.T) {
		late := filepath.Join(t.TempDir(), "late.html")
		page := `<!DOCTYPE html><html><head><title>x</title></head><body><h2>Rules</h2><table id="rules"><tbody><tr><td>r</td></tr></tbody></table>` +
			`<h2>Failures</h2><ul id="failures"><li>r: FAIL</li></ul></body></html>`
		if err := os.WriteFile(late, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := openPage(t, late); got.failuresFirst != 0 || got.firstH2 != "Rules" {
			t.Errorf("failures after the rules table read as first (%d, first heading %q)", got.failuresFirst, got.firstH2)
		}
	})

	t.Run("negative control: a script error is caught", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.html")
		page := `<!DOCTYPE html><html><head><title>x</title></head><body><p id="verdict">x</p><script>console.error("boom"); undefinedFunction();</script></body></html>`
		if err := os.WriteFile(bad, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		got := openPage(t, bad)
		if got.failuresFirst != 0 {
			t.Errorf("a page without a failures block counts as failures first")
		}
		joined := strings.Join(got.errors, "\n")
		for _, want := range []string{"console.error", "uncaught"} {
			if !strings.Contains(joined, want) {
				t.Errorf("errors %q lack %q", got.errors, want)
			}
		}
	})
}

// TestClientsPageRendersInChromium opens the clients' comparison page in
// headless Chromium: no console error, one rules row per audit of a
// default (the fixed variant's audit is not a client of its own), a real
// screenshot.
func TestClientsPageRendersInChromium(t *testing.T) {
	parent := t.TempDir()
	plantClientAudit(t, parent, "node-got-alimtalk", "node-got")
	plantClientAudit(t, parent, "node-axios-alimtalk", "node-axios")
	plantClientAudit(t, parent, "node-got-fixed-alimtalk", "node-got-fixed")
	c, err := Compare(parent)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteComparison(parent, c); err != nil {
		t.Fatal(err)
	}
	got := openPage(t, filepath.Join(parent, ClientsHTML))
	if len(got.errors) > 0 {
		t.Errorf("console errors on clients.html: %q", got.errors)
	}
	if got.rules != 2 {
		t.Errorf("%d rows in the rules table; want 2 (one per audit)", got.rules)
	}
	if got.firstH2 != "Failures first" || got.failuresFirst != 1 || got.failureItems != 2 {
		t.Errorf("first heading %q, failures first %d, %d lines; want the failures block first, one line per audit (2)", got.firstH2, got.failuresFirst, got.failureItems)
	}
	if len(got.png) < 10_000 || !bytes.HasPrefix(got.png, []byte("\xff\xd8")) {
		t.Errorf("screenshot of %d bytes is not a JPEG of a rendered page", len(got.png))
	}
}
