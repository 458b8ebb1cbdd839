package pageload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/vendormock/pagesite"
)

// Defaults of ./run.sh pageload (docs/pageload.md). Study C gives no RTT;
// 50 ms is the RTT of study B's resumption and curl figures
// (docs/studies.md) and a plausible one to a server in the same region.
const (
	DefaultRTTMS      = 50
	DefaultRuns       = 5
	DefaultAPIDelayMS = 2000 // study C's backend-bound page took 2.08 s
	// MinRuns is the fewest loads per cell a measuring run takes
	// (issue 28: at least five); tests call Run with fewer.
	MinRuns = 5
	// MaxResources bounds N: Chromium's Resource Timing buffer holds 250
	// entries by default, and nginx's h2 streams are 128 at once.
	MaxResources = 200
)

// DefaultResources are study C's page sizes.
var DefaultResources = []int{10, 50, 100}

// Config is one run of the experiment.
type Config struct {
	Resources  []int // images per page, each 1..MaxResources, distinct
	RTTMS      int   // round trip Toxiproxy adds, ms
	Runs       int   // loads per page and protocol
	APIDelayMS int   // WireMock's delay on the backend page's API call, ms
	Out        string
	// LoadTimeout bounds one load; 0 = 60 s.
	LoadTimeout time.Duration
	Images      vendormock.Images
	Session     string
	Provenance  *results.Provenance
	// Chromium is the browser's binary; "" = FindChromium.
	Chromium string
}

// DefaultConfig is ./run.sh pageload without keys.
func DefaultConfig() Config {
	return Config{Resources: slices.Clone(DefaultResources), RTTMS: DefaultRTTMS, Runs: DefaultRuns, APIDelayMS: DefaultAPIDelayMS}
}

// Plan is the loads of a run in the order Run makes them: run by run,
// each page (image pages by resources, then the backend page), h1 then h2
// in odd runs and h2 then h1 in even ones.
func Plan(resources []int, runs int) []Load {
	ns := slices.Sorted(slices.Values(resources))
	var out []Load
	for r := 1; r <= runs; r++ {
		protos := []string{ProtoH1, ProtoH2}
		if r%2 == 0 {
			protos = []string{ProtoH2, ProtoH1}
		}
		pages := make([]Load, 0, len(ns)+1)
		for _, n := range ns {
			pages = append(pages, Load{Page: PageName(n), Resources: n})
		}
		pages = append(pages, Load{Page: BackendPage})
		for _, pg := range pages {
			for _, p := range protos {
				l := pg
				l.Proto, l.Run = p, r
				l.ID = fmt.Sprintf("r%d-%s-%s", r, l.Page, p)
				out = append(out, l)
			}
		}
	}
	return out
}

// ErrJudged is returned (wrapped) by Run when a check failed; the files
// are written.
var ErrJudged = errors.New("page-load checks failed")

// Run runs the experiment into cfg.Out (claimed with outdir.Claim): pages
// written, the page site started, the RTT set and checked, Chromium
// started, one warm-up load per protocol, then Plan's loads with a
// progress line each, load-<id>.json each, and the summary, charts and
// verdict lines (w). It returns ErrJudged (wrapped) when a check failed,
// ctx's error when interrupted (the site and the browser are removed),
// or the stack's or the browser's error.
func Run(ctx context.Context, cfg Config, w io.Writer) (err error) {
	t0 := time.Now()
	if cfg.LoadTimeout == 0 {
		cfg.LoadTimeout = 60 * time.Second
	}
	if len(cfg.Resources) == 0 || cfg.Runs < 1 {
		return fmt.Errorf("pageload: want resources and runs >= 1")
	}
	runID := ""
	if cfg.Provenance != nil {
		runID = cfg.Provenance.RunID
	}
	if err := outdir.Claim(cfg.Out, runID); err != nil {
		return err
	}
	exe := cfg.Chromium
	if exe == "" {
		if exe, err = FindChromium(); err != nil {
			return err
		}
	}
	work, err := os.MkdirTemp("", "lab-pageload-")
	if err != nil {
		return fmt.Errorf("pageload: %w", err)
	}
	defer os.RemoveAll(work)
	maxN := slices.Max(cfg.Resources)
	imgBytes, err := WritePages(filepath.Join(work, "www"), cfg.Resources)
	if err != nil {
		return err
	}
	plan := Plan(cfg.Resources, cfg.Runs)
	fmt.Fprintf(w, "pageload: pages of %s images and the backend page, %d runs each over HTTP/1.1 and HTTP/2 at %d ms RTT: %d loads; results into %s/\n",
		joinInts(cfg.Resources), cfg.Runs, cfg.RTTMS, len(plan), cfg.Out)
	site, err := pagesite.Start(ctx, pagesite.Options{Images: cfg.Images, Root: filepath.Join(work, "www"),
		WorkDir: filepath.Join(work, "site"), APIDelayMS: cfg.APIDelayMS, Session: cfg.Session, Log: w})
	if err != nil {
		return fmt.Errorf("pageload: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, site.Close(cctx))
	}()
	if err := site.SetRTT(cfg.RTTMS); err != nil {
		return fmt.Errorf("pageload: %w", err)
	}
	setup := Setup{RTTMS: cfg.RTTMS, Runs: cfg.Runs, Resources: slices.Sorted(slices.Values(cfg.Resources)),
		APIDelayMS: cfg.APIDelayMS, ImageBytes: imgBytes, Images: maxN, Nginx: cfg.Images.Nginx}
	if v, err := site.NginxVersion(ctx); err == nil {
		setup.Nginx = v + " (" + cfg.Images.Nginx + ")"
	} else {
		fmt.Fprintf(w, "pageload: warning: %v\n", err)
	}
	for _, addr := range []string{site.H1Addr, site.H2Addr} {
		rt, err := site.ProbeRTT(ctx, addr)
		if err != nil {
			return fmt.Errorf("pageload: %w", err)
		}
		if rt < time.Duration(cfg.RTTMS)*time.Millisecond {
			return fmt.Errorf("pageload: %w: probe round trip %s < rtt %d ms", vendormock.ErrRTTNotApplied, rt, cfg.RTTMS)
		}
		setup.ProbeMS = append(setup.ProbeMS, float64(rt.Microseconds())/1000)
	}
	fmt.Fprintf(w, "pageload: round trip through Toxiproxy %.1f ms (h1) and %.1f ms (h2) at rtt %d ms\n", setup.ProbeMS[0], setup.ProbeMS[1], cfg.RTTMS)
	bopts := BrowserOptions{ExecPath: exe, Host: site.Host, SPKIHash: site.CASPKIHash}
	addrs := map[string]string{ProtoH1: site.H1Addr, ProtoH2: site.H2Addr}
	if ns, nerr := site.NetNS(ctx); nerr == nil && os.Geteuid() == 0 {
		bopts.NetNS, setup.NetNS = ns, true
		addrs = map[string]string{ProtoH1: pagesite.InsideAddr(pagesite.PortH1), ProtoH2: pagesite.InsideAddr(pagesite.PortH2)}
	} else {
		fmt.Fprintf(w, "pageload: warning: Chromium runs on the host through Docker's published ports (not root or no namespace: %v); a Docker network created meanwhile can abort a load with ERR_NETWORK_CHANGED (it is retried)\n", nerr)
	}
	br, err := NewBrowser(ctx, bopts)
	if err != nil {
		return fmt.Errorf("pageload: %w", err)
	}
	defer br.Close()
	setup.Chromium = br.Version
	urlOf := func(l Load) string {
		_, port, _ := net.SplitHostPort(addrs[l.Proto])
		return fmt.Sprintf("https://%s:%s/run/%s/%s.html", site.Host, port, l.ID, l.Page)
	}
	for _, p := range []string{ProtoH1, ProtoH2} {
		warm := Load{ID: "warmup-" + p, Page: PageName(slices.Min(cfg.Resources)), Proto: p}
		if _, err := br.Load(ctx, urlOf(warm), cfg.LoadTimeout); err != nil {
			return fmt.Errorf("pageload: warm-up load over %s: %w", p, err)
		}
	}
	fmt.Fprintf(w, "pageload: %s ready (%s); one warm-up load per protocol done\n", br.Version, map[bool]string{true: "in Toxiproxy's network namespace", false: "on the host"}[setup.NetNS])
	var loads []Load
	for i, l := range plan {
		l.Provenance, l.URL = cfg.Provenance, urlOf(l)
		l = loadOne(ctx, br, site, l, cfg.LoadTimeout)
		if ctx.Err() != nil {
			return fmt.Errorf("pageload: %w", ctx.Err())
		}
		if err := WriteLoad(cfg.Out, l); err != nil {
			return err
		}
		loads = append(loads, l)
		fmt.Fprintln(w, progressLine(i+1, len(plan), l, time.Since(t0)))
	}
	cells := Summarize(loads)
	checks := Judge(loads, cells, maxN)
	setup.ElapsedS = time.Since(t0).Seconds()
	sum := Summary{Provenance: cfg.Provenance, Setup: setup, Cells: cells, Checks: checks, Pass: Passed(checks)}
	if err := WriteReport(cfg.Out, sum); err != nil {
		return err
	}
	for _, c := range checks {
		fmt.Fprintln(w, c.VerdictLine())
	}
	if !sum.Pass {
		return fmt.Errorf("pageload: %w: see %s", ErrJudged, filepath.Join(cfg.Out, SummaryMD))
	}
	fmt.Fprintf(w, "verdict: pass: all %d checks passed, %s\n", len(checks), filepath.Join(cfg.Out, SummaryMD))
	return nil
}

// loadOne loads l (up to three attempts), then waits until nginx logged
// its requests (or 5 s passed) and fills l's times and server view.
func loadOne(ctx context.Context, br *Browser, site *pagesite.Site, l Load, timeout time.Duration) Load {
	var js string
	var err error
	base := l.ID
	for attempt := 1; attempt <= 3; attempt++ {
		l.Attempts = attempt
		if attempt > 1 {
			// A retry gets an id of its own, so nginx's lines of the
			// failed attempt stay apart.
			l.ID = fmt.Sprintf("%s-a%d", base, attempt)
			l.URL = replaceRunID(l.URL, l.ID)
		}
		if js, err = br.Load(ctx, l.URL, timeout); err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		l.Error = err.Error()
		return l
	}
	t, err := ParseTiming(js)
	if err != nil {
		l.Error = err.Error()
		return l
	}
	l.Timing, l.Times = t, t.Times()
	deadline := time.Now().Add(5 * time.Second)
	for {
		lines, err := pagesite.ReadAccessLog(site.AccessLogPath)
		if err != nil {
			l.Error = err.Error()
			return l
		}
		l.Server = ServerViewOf(lines, l.ID)
		if l.Server.Requests >= l.WantRequests() || time.Now().After(deadline) {
			return l
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replaceRunID puts id as the /run/<id>/ segment of url.
func replaceRunID(url, id string) string {
	before, rest, ok := strings.Cut(url, "/run/")
	if !ok {
		return url
	}
	_, path, _ := strings.Cut(rest, "/")
	return before + "/run/" + id + "/" + path
}

// progressLine is one load's progress line.
func progressLine(done, total int, l Load, elapsed time.Duration) string {
	eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done)).Round(time.Second)
	what := fmt.Sprintf("%s ms, %d connection(s)", ms(l.Times.CompleteMS), l.Server.Connections)
	if l.Error != "" {
		what = "FAILED: " + l.Error
	}
	return fmt.Sprintf("[pageload] %d/%d run %d %-8s %s: %s (ETA %s)", done, total, l.Run, l.Page, l.Proto, what, eta)
}
