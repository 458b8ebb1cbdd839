package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// scenarioNameRE is the syntax of a scenario name (scenarios/fault).
var scenarioNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// Allowed values of the enumerated keys, in the order usage prints them.
var (
	allowedModes     = results.AllModes
	allowedTLS       = []string{"1.2", "1.3"}
	allowedLabImages = []string{"official", "offline", "auto"}
	allowedStates    = []string{"tmpfs", "disk"}
	allowedOnOff     = []string{"off", "on"}
	allowedLedgers   = []string{vendormock.LedgerBbolt, vendormock.LedgerPostgres}
	allowedQueues    = []string{vendormock.QueueClassic, vendormock.QueueQuorum}
	allowedActive    = []string{bench.ActiveSingle, bench.ActiveCompeting}
	allowedRatePace  = []string{bench.RatePaceShare, bench.RatePaceOff}
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

// key is one known argument: its name, what it means, its default as
// printed, what it allows, and how it is applied to a bench.Config.
type key struct {
	name, help, def, allowed string
	set                      func(c *bench.Config, v string) error
}

// keys lists every argument in the order usage prints them: the bench's
// own, then the transport keys (transport.go).
var keys = slices.Concat(benchKeys, transportKeys)

// benchKeys are the bench's own keys.
var benchKeys = []key{
	{"COUNT", "measured sends per (mode, RTT)", strconv.Itoa(bench.DefaultCount), "a whole number >= 1",
		func(c *bench.Config, v string) (err error) { c.Count, err = parseInt(v, 1, 1<<31-1); return }},
	{"WARMUP", "warm-up sends before them, excluded from stats", strconv.Itoa(bench.DefaultWarmup), "a whole number >= 0",
		func(c *bench.Config, v string) (err error) { c.Warmup, err = parseInt(v, 0, 1<<31-1); return }},
	{"RTTS", "round trips added by Toxiproxy, ms; a list sweeps them (each point's COUNT and WARMUP are capped to about 60 s and 10 s of sends at the model's time per send, never below 20 and 5; the bench file records what was asked)", strconv.Quote(defaultRTTs()),
		fmt.Sprintf("whole ms, each 0..%d, separated by spaces or commas", bench.MaxRTTMS),
		func(c *bench.Config, v string) (err error) { c.RTTs, err = parseRTTs(v); return }},
	{"MODES", "HTTP client strategies to compare", strconv.Quote(defaultModes()),
		"one or more of " + strings.Join(allowedModes, ", ") + ", separated by spaces or commas",
		func(c *bench.Config, v string) (err error) { c.Modes, err = parseModes(v); return }},
	{"SERVER_DELAY_MS", "vendor think time (WireMock fixed delay on a send), ms", strconv.Itoa(bench.DefaultServerDelayMS),
		fmt.Sprintf("a whole number 0..%d", bench.MaxServerDelayMS),
		func(c *bench.Config, v string) (err error) {
			c.ServerDelayMS, err = parseInt(v, 0, bench.MaxServerDelayMS)
			return
		}},
	{"PER_REQUEST_TLS", "highest TLS version of the per-request client (the case's old engine spoke only 1.2)", bench.DefaultPerRequestTLS,
		"one of " + strings.Join(allowedTLS, ", "),
		func(c *bench.Config, v string) (err error) { c.PerRequestTLS, err = oneOf(v, allowedTLS); return }},
	{"OUT", "results directory", bench.DefaultOut, "a new or empty folder, or one an earlier run made (it carries " + outdir.Marker + ")",
		func(c *bench.Config, v string) error {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("empty path")
			}
			if err := outdir.Check(v); err != nil {
				return err
			}
			c.Out = v
			return nil
		}},
	{"LAB_IMAGES", "container images: pinned official ones, built offline, or official when available", bench.DefaultLabImages,
		"one of " + strings.Join(allowedLabImages, ", "),
		func(c *bench.Config, v string) (err error) { c.LabImages, err = oneOf(v, allowedLabImages); return }},
	{"KEEPALIVE_TIMEOUT", "nginx keepalive_timeout; the pooled client idles out one RTT and a margin before it", "<the profile's, 75s for alimtalk>",
		fmt.Sprintf("a duration %s..%s, e.g. 75s, 2m, or whole seconds", bench.MinKeepaliveTimeout, bench.MaxKeepaliveTimeout),
		func(c *bench.Config, v string) (err error) { c.KeepaliveTimeout, err = parseKeepalive(v); return }},
	{"PROFILE", "vendor profile directory (stubs, TLS policy, timeouts, host)", bench.DefaultProfile, "a directory path",
		func(c *bench.Config, v string) error {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("empty path")
			}
			// Load it now, so a missing or broken profile is a usage
			// error (exit 2) before anything starts.
			dir, err := bench.ResolveProfile(v)
			if err != nil {
				return err
			}
			if _, err := vendormock.LoadProfile(dir); err != nil {
				return err
			}
			c.Profile = v
			return nil
		}},
	{"WORKER_STATE", "where the worker's ledger and records live during a run: tmpfs (/dev/shm) keeps disk fsync cost out of the client comparison; disk measures it", bench.DefaultWorkerState,
		"one of " + strings.Join(allowedStates, ", "),
		func(c *bench.Config, v string) (err error) { c.WorkerState, err = oneOf(v, allowedStates); return }},
	{"SCENARIO", "run fault/race scenarios of scenarios/catalog instead of the bench (./run.sh list shows them); COUNT sets the idle race's sends per setting", "<none: the bench>",
		"a scenario name from ./run.sh list, or all",
		func(c *bench.Config, v string) error {
			if !scenarioNameRE.MatchString(v) {
				return fmt.Errorf("not a scenario name")
			}
			c.Scenario = v
			return nil
		}},
	{"MALFORMED", "malformed messages mixed evenly among the measured ones; each must end in the dead-letter queue with a reason", strconv.Itoa(bench.DefaultMalformed),
		"a whole number >= 0",
		func(c *bench.Config, v string) (err error) { c.Malformed, err = parseInt(v, 0, 1_000_000); return }},
	{"TCP_HANDSHAKE", "on: Toxiproxy's handshake toxic makes a new connection cost its TCP round trip, as a real network does; off: stock Toxiproxy, which delays data but not the TCP handshake (the case's own conditions, so off is the default)", bench.DefaultTCPHandshake,
		"one of " + strings.Join(allowedOnOff, ", "),
		func(c *bench.Config, v string) (err error) { c.TCPHandshake, err = oneOf(v, allowedOnOff); return }},
	{"BULK", "messages of the evening bulk run the summary projects (calculated from each run's p50 and rate) against the 20:50 Asia/Seoul send window close", strconv.Itoa(report.DefaultBulk),
		"a whole number 1..100000000",
		func(c *bench.Config, v string) (err error) { c.Bulk, err = parseInt(v, 1, 100_000_000); return }},
	{"WORKERS", "worker replicas of every run, on one queue under single active consumer (one handles everything, the others stand by); with more than 1, or another LEDGER or QUEUE_TYPE, each replica's /metrics is checked against the records",
		strconv.Itoa(bench.DefaultWorkers), fmt.Sprintf("a whole number 1..%d", bench.MaxWorkers),
		func(c *bench.Config, v string) (err error) {
			c.Workers, err = parseInt(v, 1, bench.MaxWorkers)
			return
		}},
	{"LEDGER", "the workers' ledger: bbolt (one file per replica, on its own volume) or postgres (one PostgreSQL database shared by every replica)", bench.DefaultLedger,
		"one of " + strings.Join(allowedLedgers, ", "),
		func(c *bench.Config, v string) (err error) { c.Ledger, err = oneOf(v, allowedLedgers); return }},
	{"QUEUE_TYPE", "RabbitMQ queue type of the worker's queues", bench.DefaultQueueType,
		"one of " + strings.Join(allowedQueues, ", "),
		func(c *bench.Config, v string) (err error) { c.QueueType, err = oneOf(v, allowedQueues); return }},
	{"BROKER_NODES", "RabbitMQ nodes: 1, or a cluster whose every node the workers are given (quorum queues spread over all of them; use QUEUE_TYPE=quorum)", "1",
		fmt.Sprintf("a whole number 1..%d", vendormock.MaxBrokerNodes),
		func(c *bench.Config, v string) (err error) {
			c.BrokerNodes, err = parseInt(v, 1, vendormock.MaxBrokerNodes)
			return
		}},
	{"ACTIVE", "how the replicas share the queue: single (single active consumer: one works, the others stand by; queue order kept) or competing (every replica consumes; no order between messages; needs LEDGER=postgres, docs/deployment.md)", bench.DefaultActive,
		"one of " + strings.Join(allowedActive, ", "),
		func(c *bench.Config, v string) (err error) { c.Active, err = oneOf(v, allowedActive); return }},
	{"RATE_LIMIT", "the vendor's sends per second for the whole account: nginx answers a send above it 429 with Retry-After, and each active worker paces at its share (0.95 x RATE_LIMIT / active workers); 0 = the profile's rate_limit (none in the lab's profiles)", "0",
		"a whole number 0..10000",
		func(c *bench.Config, v string) (err error) { c.RateLimit, err = parseInt(v, 0, 10_000); return }},
	{"RATE_PACE", "share: each active worker paces at its share of RATE_LIMIT; off: the workers do not pace (the negative control: nginx's 429s show)", bench.RatePaceShare,
		"one of " + strings.Join(allowedRatePace, ", "),
		func(c *bench.Config, v string) (err error) { c.RatePace, err = oneOf(v, allowedRatePace); return }},
	{"WORKER", "the worker under test (docs/worker-contract.md): the Go worker, a reference worker, or any image that follows the contract; any worker but go runs once per RTT instead of MODES",
		bench.DefaultWorker, "one of " + strings.Join(vendormock.WorkerNames(), ", "),
		func(c *bench.Config, v string) (err error) { c.Worker, err = parseWorker(v); return }},
	{"CPU_PROFILE", "write a Go CPU profile of each worker run to OUT/pprof/worker-<mode>-<rtt>ms.pprof", bench.DefaultCPUProfile,
		"one of " + strings.Join(allowedOnOff, ", "),
		func(c *bench.Config, v string) (err error) { c.CPUProfile, err = oneOf(v, allowedOnOff); return }},
}

// knownKeys returns the argument names parseKeys accepts, in usage order.
func knownKeys() []string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.name
	}
	return names
}

func lookupKey(name string) (key, bool) {
	for _, k := range keys {
		if k.name == name {
			return k, true
		}
	}
	return key{}, false
}

// parseKeys builds a bench.Config from KEY=VALUE words (args) and the environment
// (getenv, e.g. os.Getenv; nil reads nothing). Every key of usage is read
// from both; a word wins over the environment, an empty environment
// variable counts as unset. It returns a *UsageError for a word without
// '=', an unknown key in a word (the environment is only read for known
// keys), an invalid value from either source, or a KEEPALIVE_TIMEOUT too
// short for the largest RTT.
func parseKeys(args []string, getenv func(string) string) (bench.Config, error) {
	cfg := bench.DefaultConfig()
	words := map[string]string{}
	for _, a := range args {
		name, value, ok := strings.Cut(a, "=")
		if !ok {
			return bench.Config{}, &UsageError{Value: a, Source: "argument",
				Msg: "want KEY=VALUE with KEY one of " + strings.Join(knownKeys(), ", ")}
		}
		if _, known := lookupKey(name); !known {
			return bench.Config{}, &UsageError{Key: name, Value: value, Source: "argument",
				Msg: "unknown key; known keys: " + strings.Join(knownKeys(), ", ")}
		}
		words[name] = value // a later word for the same key wins
	}
	sources := map[string]string{}
	for _, k := range keys {
		value, source := words[k.name], "argument"
		if _, inWords := words[k.name]; !inWords {
			if getenv == nil {
				continue
			}
			if value, source = getenv(k.name), "environment"; value == "" {
				continue
			}
		}
		if err := k.set(&cfg, strings.TrimSpace(value)); err != nil {
			return bench.Config{}, &UsageError{Key: k.name, Value: value, Source: source,
				Msg: err.Error() + "; allowed: " + k.allowed}
		}
		sources[k.name] = source
	}
	if err := checkTransport(cfg, sources); err != nil {
		return bench.Config{}, err
	}
	if cfg.KeepaliveTimeout > 0 {
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
       ./run.sh audit WORKER=... PROFILE=...  audit a worker on a vendor profile (results/audit/)
       ./run.sh matrix [KEY=VALUE ...]  the published matrix (./run.sh matrix help)
       ./run.sh list                 list the scenarios, one line each
       ./run.sh test                 lint, unit and integration tests
       ./run.sh test-unit            lint and unit tests (no Docker)
       ./run.sh test-integration     integration tests (the real stack)
       ./run.sh lint                 gofmt, go vet, go mod tidy -diff, staticcheck
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
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s=%s\n      %s.\n      Allowed: %s.\n", k.name, k.def, k.help, k.allowed)
	}
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
