package main

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// scenarioNameRE is the syntax of a scenario name (scenarios/fault).
var scenarioNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// Allowed values of the enumerated keys, in the order usage prints them.
var (
	allowedModes     = results.KnownModes
	allowedTLS       = []string{"1.2", "1.3"}
	allowedLabImages = []string{"official", "offline", "auto"}
	allowedStates    = []string{"tmpfs", "disk"}
	allowedOnOff     = []string{"off", "on"}
	allowedLedgers   = []string{vendormock.LedgerBbolt, vendormock.LedgerPostgres}
	allowedActive    = []string{bench.ActiveSingle, bench.ActiveCompeting}
	allowedRatePace  = []string{bench.RatePaceShare, bench.RatePaceOff}
	allowedQueues    = []string{vendormock.QueueClassic, vendormock.QueueQuorum}
)

// UsageError is the error of parseKeys: a word or environment variable the
// lab cannot use. Its message names the known keys (for an unknown key or a
// word without '=') or the allowed values (for an invalid value). Commands
// exit 2 on it and start nothing.
type UsageError struct {
	Key    string // the key at fault, "" for a word without '='
	Value  string // the value given
	Source string // "argument" or "environment"
	Msg    string // what is wrong and what is allowed
}

// Error returns "bad argument KEY=\"VALUE\": what is wrong; allowed: ...".
func (e *UsageError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("bad %s %q: %s", e.Source, e.Value, e.Msg)
	}
	return fmt.Sprintf("bad %s %s=%q: %s", e.Source, e.Key, e.Value, e.Msg)
}

// parseKeys builds a bench.Config from KEY=VALUE words (args) and the environment
// (getenv, e.g. os.Getenv; nil reads nothing). Every key of usage is read
// from both; a word wins over the environment, an empty environment
// variable counts as unset. It returns a *UsageError for a word without
// '=', an unknown key in a word (the environment is only read for known
// keys), an invalid value from either source, or a KEEPALIVE_TIMEOUT too
// short for the largest RTT.
func parseKeys(args []string, getenv func(string) string) (bench.Config, error) {
	all := defaultsOf(cmdRun)
	sources, err := parseWords(cmdRun, &all, args, getenv)
	if err != nil {
		return bench.Config{}, err
	}
	cfg := all.Config.Config
	if err := checkTransport(cfg, sources); err != nil {
		return bench.Config{}, err
	}
	if err := checkGaps(&cfg, sources); err != nil {
		return bench.Config{}, err
	}
	if cfg.KeepaliveTimeout > 0 && cfg.ClientIdle == 0 {
		maxRTT := time.Duration(slices.Max(cfg.RTTs)) * time.Millisecond
		if netmodel.IdleConnTimeout(cfg.KeepaliveTimeout, slices.Max(cfg.RTTs)) <= 0 {
			return bench.Config{}, &UsageError{Key: "KEEPALIVE_TIMEOUT", Value: cfg.KeepaliveTimeout.String(), Source: sources["KEEPALIVE_TIMEOUT"],
				Msg: fmt.Sprintf("leaves no idle time for the pooled client at RTT %s (needs more than RTT + %s)", maxRTT, netmodel.IdleConnMargin)}
		}
	}
	if cfg.Active == bench.ActiveCompeting && cfg.Ledger != vendormock.LedgerPostgres {
		return bench.Config{}, &UsageError{Key: "ACTIVE", Value: cfg.Active, Source: sources["ACTIVE"],
			Msg: "several active consumers each on its own bbolt ledger can send one message twice (the worker refuses it); use LEDGER=postgres"}
	}
	if err := checkWorker(cfg, sources["WORKER"]); err != nil {
		return bench.Config{}, err
	}
	if err := precheck(cfg, sources); err != nil {
		return bench.Config{}, err
	}
	return cfg, nil
}

// Usage writes what every key means, its default and what it allows, for
// `./run.sh --help` and `lab help`.
func usage(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`Usage: ./run.sh [KEY=VALUE ...]     run the lab (lab run)
       ./run.sh SCENARIO=<name|all>  run fault/race scenarios (scenarios/catalog)
       ./run.sh audit [WORKER=go] [PROFILE=alimtalk]  audit a worker on a vendor profile (about 9 min)
       ./run.sh audit-clients [PROFILE=alimtalk]  audit every third-party client (about 50 min; FIXED=1: their fixes too)
       ./run.sh audit-probes OUT=<an audit's folder>  the audit's probes alone, for an audit written before them (2-6 min)
       ./run.sh contract-check WORKER=image:NAME  check an image against docs/worker-contract.md, each gap named (about 1 min)
       ./run.sh matrix [KEY=VALUE ...]  the published matrix (./run.sh matrix help)
       ./run.sh scale [KEY=VALUE ...]   the scale benchmark (./run.sh scale help)
       ./run.sh simulate [SEEDS=N] [SEED=s] [TEETH=1] [OUT=dir]
                                     the deterministic simulator, no Docker (./run.sh simulate help)
       ./run.sh pageload [N="10 50 100"] [RTT=50] [RUNS=5] [OUT=dir]
                                     HTTP/1.1 vs HTTP/2 page loads in headless Chromium (./run.sh pageload help)
       ./run.sh report OUT           re-render a results folder offline (no Docker)
       ./run.sh list                 list the scenarios, one line each
       ./run.sh test                 lint, unit and integration tests
       ./run.sh test-unit            lint and unit tests (no Docker)
       ./run.sh test-integration     integration tests (the real stack)
       ./run.sh lint                 gofmt, go vet, go mod tidy -diff, staticcheck
       ./run.sh mutate [PKG ...]     mutation testing of the core packages (slow)
       ./run.sh --version            the lab's commit
       ./run.sh --help               this text

Measures a per-request HTTP client against a shared pooled keep-alive client:
for each RTT and each mode, WARMUP+COUNT notifications go through RabbitMQ to
the worker (1 CPU), which POSTs them (over HTTPS: SCHEME) through Toxiproxy and nginx to a
WireMock vendor. Results: OUT/bench-<mode>-<rtt>ms.json, OUT/nginx/,
OUT/summary.md, OUT/charts/.

Every key can also be set in the environment; a word wins over the
environment. An unknown key or an invalid value exits 2 and starts nothing.

`)
	b.WriteString("Keys, each shown with its default:\n")
	writeKeys(&b, cmdRun)
	b.WriteString(`
Example: ./run.sh COUNT=1000 RTTS="3 10" MODES="per-request pooled"
RTT sweep on a real network's handshake (7-10 min):
         ./run.sh RTTS="1 3 10 50 150 380" COUNT=200 TCP_HANDSHAKE=on OUT=results/sweep
The Node study's settings (docs/studies.md, study B):
         ./run.sh RTTS="1 3 10 50 150 380" COUNT=200 TCP_HANDSHAKE=on SERVER_DELAY_MS=0 PER_REQUEST_TLS=1.3 OUT=results/sweep-node
`)
	_, err := io.WriteString(w, b.String())
	return err
}

func parseInt(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("not a whole number")
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d is out of range", n)
	}
	return n, nil
}

// fields splits on spaces and commas.
func fields(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
}

func parseRTTs(v string) ([]int, error) {
	parts := fields(v)
	if len(parts) == 0 {
		return nil, fmt.Errorf("no RTT given")
	}
	rtts := make([]int, 0, len(parts))
	for _, p := range parts {
		n, err := parseInt(p, 0, bench.MaxRTTMS)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", p, err)
		}
		if slices.Contains(rtts, n) {
			return nil, fmt.Errorf("RTT %d given twice", n)
		}
		rtts = append(rtts, n)
	}
	return rtts, nil
}

func parseModes(v string) ([]string, error) {
	parts := fields(v)
	if len(parts) == 0 {
		return nil, fmt.Errorf("no mode given")
	}
	modes := make([]string, 0, len(parts))
	for _, p := range parts {
		if _, err := oneOf(p, allowedModes); err != nil {
			return nil, err
		}
		if slices.Contains(modes, p) {
			return nil, fmt.Errorf("mode %s given twice", p)
		}
		modes = append(modes, p)
	}
	return modes, nil
}

func oneOf(v string, allowed []string) (string, error) {
	if !slices.Contains(allowed, v) {
		return "", fmt.Errorf("%q is not allowed", v)
	}
	return v, nil
}

// parseKeepalive reads an nginx-style time: whole seconds ("75") or a Go
// duration ("75s", "2m", "1m30s").
func parseKeepalive(v string) (time.Duration, error) {
	var d time.Duration
	if n, err := strconv.Atoi(v); err == nil {
		d = time.Duration(n) * time.Second
	} else if d, err = time.ParseDuration(v); err != nil {
		return 0, fmt.Errorf("not a duration")
	}
	if d < bench.MinKeepaliveTimeout || d > bench.MaxKeepaliveTimeout {
		return 0, fmt.Errorf("%s is out of range", d)
	}
	return d, nil
}

// defaultRTTs is the default of RTTS as a word would write it.
func defaultRTTs() string {
	var parts []string
	for _, r := range bench.DefaultConfig().RTTs {
		parts = append(parts, strconv.Itoa(r))
	}
	return strings.Join(parts, " ")
}

// defaultModes is the default of MODES as a word would write it.
func defaultModes() string { return strings.Join(bench.DefaultConfig().Modes, " ") }

// maxThresholdP99MS bounds THRESHOLD_P99_MS (an hour).
const maxThresholdP99MS = 3_600_000

// parsePositiveMS reads THRESHOLD_P99_MS: a decimal number of ms in
// (0, maxThresholdP99MS].
func parsePositiveMS(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("not a number")
	}
	if f <= 0 || f > maxThresholdP99MS {
		return 0, fmt.Errorf("%g is out of range", f)
	}
	return f, nil
}
