package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/pageload"
)

// pageloadHelp follows usage in `lab help`.
const pageloadHelp = `
The page-load experiment (./run.sh pageload [N="10 50 100"] [RTT=50] [RUNS=5]
[API_DELAY_MS=2000] [OUT=dir]): study C of docs/studies.md in headless Chromium:
pages of N small images and a backend-bound page over HTTP/1.1 and HTTP/2,
nginx through Toxiproxy; page times from the pages' own Navigation and
Resource Timing, connections from nginx's log (./run.sh pageload help).
`

// pageloadKeys are pageload's keys, in usage order.
var pageloadKeys = []ownKey[pageload.Config]{
	{name: "N", help: "small images per page, one page each (study C: 10, 50 and 100); the backend-bound page is always loaded too",
		allowed: fmt.Sprintf("distinct whole numbers, each 1..%d, separated by spaces or commas", pageload.MaxResources),
		show:    strconv.Quote(strings.Trim(fmt.Sprint(pageload.DefaultResources), "[]")),
		set: func(c *pageload.Config, v string) (err error) {
			c.Resources, err = parseWholeList(v, 1, pageload.MaxResources)
			return err
		}},
	{name: "RTT", help: "round trip Toxiproxy adds between Chromium and nginx, ms (study C gives none; a new connection also pays one RTT for the TCP handshake)",
		allowed: "a whole number 0..500", show: strconv.Itoa(pageload.DefaultRTTMS),
		set: func(c *pageload.Config, v string) (err error) { c.RTTMS, err = parseInt(v, 0, 500); return }},
	{name: "RUNS", help: "loads of each page over each protocol, each in a new browser context",
		allowed: fmt.Sprintf("a whole number %d..100", pageload.MinRuns), show: strconv.Itoa(pageload.DefaultRuns),
		set: func(c *pageload.Config, v string) (err error) {
			c.Runs, err = parseInt(v, pageload.MinRuns, 100)
			return
		}},
	{name: "API_DELAY_MS", help: "WireMock's delay on the backend-bound page's one API call, ms (study C's backend-bound page took 2.08 s)",
		allowed: "a whole number 0..30000", show: strconv.Itoa(pageload.DefaultAPIDelayMS),
		set: func(c *pageload.Config, v string) (err error) { c.APIDelayMS, err = parseInt(v, 0, 30_000); return }},
	{name: "OUT", help: "folder of summary.md, pageload.json, load-*.json and charts/ (results/pageload is the committed one); without it a new folder under results/runs/",
		allowed: "a new or empty folder, or one an earlier run made (it carries " + outdir.Marker + "), holding no other command's results",
		show:    "<results/runs/<run id>>",
		set: func(c *pageload.Config, v string) error {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("empty path")
			}
			c.Out = v
			return nil
		}},
}

func pageloadKeyNames() []string { return ownKeyNames(pageloadKeys) }

// parsePageloadArgs builds pageload's config from KEY=VALUE words, then
// the environment for keys no word set (parseOwnWords), and returns where
// each key came from. Errors are *UsageError (exit 2, nothing started):
// parseOwnWords's, or an OUT the lab did not make or that holds another
// command's results.
func parsePageloadArgs(args []string, getenv func(string) string) (pageload.Config, map[string]string, error) {
	cfg := pageload.DefaultConfig()
	sources, err := parseOwnWords("./run.sh pageload", pageloadKeys, &cfg, args, getenv)
	if err != nil {
		return cfg, nil, err
	}
	if src, ok := sources["OUT"]; ok {
		if err := outdir.Check(cfg.Out); err != nil {
			return cfg, nil, &UsageError{Key: "OUT", Value: cfg.Out, Source: src, Msg: err.Error()}
		}
		if err := checkOutKind(cfg.Out, pageloadForeignKinds); err != nil {
			return cfg, nil, &UsageError{Key: "OUT", Value: cfg.Out, Source: src, Msg: err.Error()}
		}
	}
	return cfg, sources, nil
}

// runPageload is `lab pageload`: the keys checked (exit 2 before
// anything starts), the images and session read, then pageload.Run into
// OUT or a new folder under results/runs.
func runPageload(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, sources, err := parsePageloadArgs(args, getenv)
	if err != nil {
		return err
	}
	var env bench.Config
	if err := labEnvironment(&env, getenv); err != nil {
		return err
	}
	cfg.Images, cfg.Session = env.Images, env.Session
	cfg.Provenance = newProvenance(time.Now(), "pageload", args, pageloadKeyNames(), getenv, cfg.Images)
	_, perRun := sources["OUT"]
	perRun = !perRun
	if perRun {
		cfg.Out, cfg.Provenance.RunID = outdir.NewRunDir(cfg.Provenance.RunID)
		announceRunDir(stdout, cfg.Out)
	}
	return finishRun(stdout, perRun, cfg.Out, cfg.Provenance.RunID, pageload.Run(ctx, cfg, stdout))
}

// pageloadUsage is `./run.sh pageload help`.
func pageloadUsage(w io.Writer) error {
	var b strings.Builder
	def := pageload.DefaultConfig()
	loads := len(pageload.Plan(def.Resources, def.Runs))
	fmt.Fprintf(&b, `./run.sh pageload [KEY=VALUE...]: the page-load experiment (docs/pageload.md),
study C of docs/studies.md. nginx serves a page of N small images for each N,
and a page whose one API call waits API_DELAY_MS in WireMock, over HTTPS from
two server blocks, one offering HTTP/1.1 only and one HTTP/2 (ALPN), through
Toxiproxy at RTT; headless Chromium loads every page RUNS times over each,
each load in a new browser context with the cache disabled. The page time is
the page's own Navigation Timing (loadEventEnd - startTime; the backend page:
its API call's Resource Timing responseEnd); nginx's access log counts the
connections. Writes OUT/summary.md (median and spread per page and protocol
beside study C's figures, the verdict lines), OUT/pageload.json, one
OUT/load-<id>.json per load, OUT/charts/. The defaults make %d loads, about
2 minutes with the start. Needs Docker, the lab's images and Chromium
(run.sh installs Debian's chromium when missing).

Judged (exit 1 when one fails): HTTP/2 faster than HTTP/1.1 at the largest N;
1 connection per HTTP/2 load against several per HTTP/1.1 load; the backend
page's two medians within noise; and that every load was complete, on its
protocol and on fresh connections. Exit 2: a bad key, nothing started.

Every key can also be set in the environment; a word wins.

Keys, each shown with its default:
`, loads)
	writeOwnKeys(&b, pageloadKeys)
	b.WriteString("\nExample: ./run.sh pageload OUT=results/pageload\n")
	_, err := io.WriteString(w, b.String())
	return err
}
