package pageload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// EnsureChromium is the script that installs Debian's chromium; run.sh
// runs it before ./run.sh pageload.
const EnsureChromium = "vendormock/images/ensure-chromium.sh"

// FindChromium returns the path of chromium (or chromium-browser) on PATH.
// Errors name EnsureChromium.
func FindChromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("find chromium: none on PATH: run %s (Debian's chromium package)", EnsureChromium)
}

// BrowserOptions configure NewBrowser.
type BrowserOptions struct {
	ExecPath string // Chromium's binary (FindChromium)
	// Host is the site's name, mapped to 127.0.0.1 with
	// --host-resolver-rules (no DNS lookup: study C's variance came from
	// DNS, which it removed by pinning the address).
	Host string
	// SPKIHash is base64(SHA-256(SPKI)) of the run's CA
	// (pagesite.Site.CASPKIHash), given as
	// --ignore-certificate-errors-spki-list: Chromium accepts a chain
	// holding that key and no other unknown one. It needs --user-data-dir,
	// which NewBrowser sets to a fresh folder. Never
	// --ignore-certificate-errors.
	SPKIHash string
	// NetNS, when not "", is a network namespace (pagesite.Site.NetNS)
	// Chromium runs in, through nsenter (needs root): there the page
	// site's proxies are on 127.0.0.1 and no interface changes under
	// Chromium. "" runs it in the host's.
	NetNS string
}

// Browser is one headless Chromium process; each Load runs in a browser
// context of its own.
type Browser struct {
	ctx     context.Context
	cancel  func()
	dataDir string
	// Version is Chromium's product string, e.g. "Chrome/156.0.8078.114".
	Version string
}

// NewBrowser starts headless Chromium with a fresh user-data-dir, the
// run's CA trusted by its SPKI hash and Host mapped to 127.0.0.1. Errors:
// the user-data-dir, Chromium not starting.
func NewBrowser(ctx context.Context, o BrowserOptions) (*Browser, error) {
	base, err := os.MkdirTemp("", "lab-pageload-chromium-")
	if err != nil {
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	dir := filepath.Join(base, "profile")
	exe := o.ExecPath
	if o.NetNS != "" {
		if exe, err = nsenterWrapper(dir, o.NetNS, o.ExecPath); err != nil {
			_ = os.RemoveAll(base)
			return nil, err
		}
	}
	// chromedp talks to Chromium over a pipe (--remote-debugging-pipe),
	// which crosses the namespace.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(dir),
		chromedp.Flag("ignore-certificate-errors-spki-list", o.SPKIHash),
		chromedp.Flag("host-resolver-rules", "MAP "+o.Host+" 127.0.0.1"),
		// No QUIC (nginx offers none) and no speculative connections.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,NetworkPrediction"),
	)
	actx, acancel := chromedp.NewExecAllocator(context.WithoutCancel(ctx), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	b := &Browser{ctx: bctx, dataDir: base, cancel: func() { bcancel(); acancel() }}
	v, err := chromedp.CallBrowser(bctx, browser.GetVersion, cdp.Empty{})
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("start chromium %s: %w", o.ExecPath, err)
	}
	b.Version = v.Product
	return b, nil
}

// nsenterWrapper writes dir/../chromium-netns, a script that runs exe in
// the network namespace ns, and returns its path. Errors: no nsenter on
// PATH, the file system's.
func nsenterWrapper(dir, ns, exe string) (string, error) {
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return "", fmt.Errorf("start chromium in the page site's network namespace: no nsenter (util-linux): %w", err)
	}
	path := filepath.Join(filepath.Dir(dir), "chromium-netns")
	script := "#!/bin/sh\nexec " + nsenter + " --net=" + ns + " -- " + exe + " \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		return "", fmt.Errorf("write chromium wrapper: %w", err)
	}
	return path, nil
}

// ErrLoadTimeout is returned (wrapped) by Load when the page did not
// finish within its timeout.
var ErrLoadTimeout = errors.New("page load timed out")

// Load opens url in a new browser context (its own connections and cache,
// disposed afterwards, so every load opens fresh connections), with the
// cache disabled (Network.setCacheDisabled), waits until ReadyScript is
// true and returns TimingScript's JSON. Errors: navigation (a certificate
// Chromium does not trust fails here), ErrLoadTimeout, the browser's.
func (b *Browser) Load(ctx context.Context, url string, timeout time.Duration) (string, error) {
	tctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	// The target exists before the timeout starts: its creation is not
	// part of the load.
	if err := chromedp.Do(tctx); err != nil {
		return "", fmt.Errorf("open browser context: %w", err)
	}
	lctx, lcancel := context.WithTimeout(tctx, timeout)
	defer lcancel()
	stop := context.AfterFunc(ctx, lcancel)
	defer stop()
	if _, err := chromedp.Call(lctx, network.Enable, network.EnableParams{}); err != nil {
		return "", fmt.Errorf("enable network domain: %w", err)
	}
	if _, err := chromedp.Call(lctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		return "", fmt.Errorf("disable cache: %w", err)
	}
	err := chromedp.Do(lctx, chromedp.Navigate(url))
	if err == nil {
		_, err = chromedp.Run(lctx, chromedp.Poll[bool](ReadyScript, chromedp.WithPollingInterval(20*time.Millisecond)))
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return "", fmt.Errorf("load %s: %w (%s): %w", url, ErrLoadTimeout, timeout, err)
		}
		return "", fmt.Errorf("load %s: %w", url, err)
	}
	s, err := chromedp.Run(lctx, chromedp.Evaluate[string](TimingScript))
	if err != nil {
		return "", fmt.Errorf("read page timing: %w", err)
	}
	return s, nil
}

// Close stops Chromium and removes its user-data-dir.
func (b *Browser) Close() {
	b.cancel()
	_ = os.RemoveAll(b.dataDir)
}
