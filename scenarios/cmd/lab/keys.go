package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/audit"
	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/matrix"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/scenarios/scale"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// command is a set of the commands that read keys: run (with check and
// audit, which take run's keys), matrix and scale.
type command uint8

const (
	cmdRun    command = 1 << iota // lab run, check, audit, audit-check, report (BULK)
	cmdMatrix                     // lab matrix, matrix-check
	cmdScale                      // lab scale, scale-check
	cmdBoth   = cmdRun | cmdMatrix
	cmdAll    = cmdRun | cmdMatrix | cmdScale
)

// name is the command's name in messages (the first of a set).
func (c command) name() string {
	switch {
	case c&cmdRun != 0:
		return "run"
	case c&cmdMatrix != 0:
		return "matrix"
	}
	return "scale"
}

// key is one KEY=VALUE knob of the lab: its one name for every command
// that takes it, what it means and allows, the default as a word writes
// it (from the command's default config), and how a value is applied.
// The keys set a scale.Config: the matrix's Config (the bench's Config,
// everything run and audit take and every cell's settings, plus the
// matrix's own lists) plus the scale benchmark's lists.
type key struct {
	name string
	// old is a name the matrix took before the keys were one table (RTT,
	// SCHEMES); the matrix still reads it, usage names it.
	old string
	// in is the commands that take the key; one those of them where a
	// list-valued key takes exactly one value (RTTS in the matrix, SCHEME
	// and CONCURRENCY in a run).
	in, one       command
	help, allowed string
	// allowedOne is what the key allows where it takes one value ("" =
	// allowed).
	allowedOne string
	// show is the default as a word writes it, from the command's
	// default config.
	show func(c *scale.Config) string
	set  func(c *scale.Config, v string) error
}

// allowedFor is what k allows in cmd.
func (k key) allowedFor(cmd command) string {
	if k.one&cmd != 0 && k.allowedOne != "" {
		return k.allowedOne
	}
	return k.allowed
}

// fixed shows a default that no config field holds as a value.
func fixed(s string) func(*scale.Config) string { return func(*scale.Config) string { return s } }

// spaced joins values as a word writes a list ("3 10"), quoted when it
// holds a space.
func spaced[T any](vs []T) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprint(v)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strconv.Quote(strings.Join(parts, " "))
}

// keys is the lab's one table of knobs, for run, audit and the matrix,
// in the order usage prints them. A new knob is one entry here (and, for
// the Go worker, a field of bench.Config.WorkerKnobs it sets).
var keys = []key{
	{name: "COUNT", in: cmdAll, help: "measured sends per (mode, RTT); in the matrix, per cell; in scale, the most of any point (POINT_S sizes each)", allowed: "a whole number >= 1",
		show: func(c *scale.Config) string { return strconv.Itoa(c.Count) },
		set:  func(c *scale.Config, v string) (err error) { c.Count, err = parseInt(v, 1, 1<<31-1); return }},
	{name: "WARMUP", in: cmdAll, help: "warm-up sends before them, excluded from stats", allowed: "a whole number >= 0",
		show: func(c *scale.Config) string { return strconv.Itoa(c.Warmup) },
		set:  func(c *scale.Config, v string) (err error) { c.Warmup, err = parseInt(v, 0, 1<<31-1); return }},
	{name: "RTTS", old: "RTT", in: cmdAll, one: cmdMatrix | cmdScale,
		help:       "round trips added by Toxiproxy, ms; a list sweeps them (each point's COUNT and WARMUP are capped to about 60 s and 10 s of sends at the model's time per send, never below 20 and 5; the bench file records what was asked); the matrix and scale run at one (study A ran on loopback)",
		allowed:    fmt.Sprintf("whole ms, each 0..%d, separated by spaces or commas", bench.MaxRTTMS),
		allowedOne: fmt.Sprintf("whole ms, 0..%d", bench.MaxRTTMS),
		show:       func(c *scale.Config) string { return spaced(c.RTTs) },
		set:        func(c *scale.Config, v string) (err error) { c.RTTs, err = parseRTTs(v); return }},
	{name: "MODES", in: cmdBoth, help: "HTTP client strategies to compare",
		allowed: "one or more of " + strings.Join(allowedModes, ", ") + ", separated by spaces or commas",
		show:    func(c *scale.Config) string { return spaced(c.Modes) },
		set:     func(c *scale.Config, v string) (err error) { c.Modes, err = parseModes(v); return }},
	{name: "SERVER_DELAY_MS", in: cmdAll, help: "vendor think time (WireMock fixed delay on a send), ms; in scale, the grid's (CASE_DELAY_MS the case series')",
		allowed: fmt.Sprintf("a whole number 0..%d", bench.MaxServerDelayMS),
		show:    func(c *scale.Config) string { return strconv.Itoa(c.ServerDelayMS) },
		set: func(c *scale.Config, v string) (err error) {
			c.ServerDelayMS, err = parseInt(v, 0, bench.MaxServerDelayMS)
			return
		}},
	{name: "PER_REQUEST_TLS", in: cmdBoth, help: "highest TLS version of the per-request client (the case's old engine spoke only 1.2; study A used Go's default)",
		allowed: "one of " + strings.Join(allowedTLS, ", "),
		show:    func(c *scale.Config) string { return c.PerRequestTLS },
		set:     func(c *scale.Config, v string) (err error) { c.PerRequestTLS, err = oneOf(v, allowedTLS); return }},
	{name: "OUT", in: cmdAll, help: "results directory; without it each run writes a new folder " + outdir.RunsDir + "/<run id>/ (" + outdir.RunsDir + "/" + outdir.Latest + " links the newest); OUT=" + bench.DefaultOut + " refreshes the committed reference (" + matrix.DefaultOut + " the matrix's, " + scale.DefaultOut + " the scale run's)",
		allowed: "a new or empty folder, or one an earlier run made (it carries " + outdir.Marker + ")",
		show:    fixed("<" + outdir.RunsDir + "/<run id>>"),
		set: func(c *scale.Config, v string) error {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("empty path")
			}
			if err := outdir.Check(v); err != nil {
				return err
			}
			c.Out = v
			return nil
		}},
	{name: "LAB_IMAGES", in: cmdRun, help: "container images: pinned official ones, built offline, or official when available",
		allowed: "one of " + strings.Join(allowedLabImages, ", "),
		show:    func(c *scale.Config) string { return c.LabImages },
		set:     func(c *scale.Config, v string) (err error) { c.LabImages, err = oneOf(v, allowedLabImages); return }},
	{name: "KEEPALIVE_TIMEOUT", in: cmdRun, help: "nginx keepalive_timeout; the pooled client idles out one RTT and a margin before it",
		allowed: fmt.Sprintf("a duration %s..%s, e.g. 75s, 2m, or whole seconds", bench.MinKeepaliveTimeout, bench.MaxKeepaliveTimeout),
		show:    fixed("<the profile's, 75s for alimtalk>"),
		set:     func(c *scale.Config, v string) (err error) { c.KeepaliveTimeout, err = parseKeepalive(v); return }},
	{name: "PROFILE", in: cmdRun | cmdScale, help: "vendor profile directory (stubs, TLS policy, timeouts, host)", allowed: "a profile name (alimtalk, sms: vendormock/profiles/<name>) or a directory path",
		show: func(c *scale.Config) string { return c.Profile },
		set: func(c *scale.Config, v string) error {
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
	{name: "WORKER_STATE", in: cmdRun | cmdScale, help: "where the worker's ledger and records live during a run: tmpfs (/dev/shm) keeps disk fsync cost out of the client comparison; disk measures it (the matrix keeps them on disk)",
		allowed: "one of " + strings.Join(allowedStates, ", "),
		show:    func(c *scale.Config) string { return c.WorkerState },
		set:     func(c *scale.Config, v string) (err error) { c.WorkerState, err = oneOf(v, allowedStates); return }},
	{name: "SCENARIO", in: cmdRun, help: "run fault/race scenarios of scenarios/catalog instead of the bench (./run.sh list shows them); COUNT sets the idle race's sends per setting",
		allowed: "a scenario name from ./run.sh list, or all",
		show:    fixed("<none: the bench>"),
		set: func(c *scale.Config, v string) error {
			if !scenarioNameRE.MatchString(v) {
				return fmt.Errorf("not a scenario name")
			}
			c.Scenario = v
			return nil
		}},
	{name: "LANES", in: cmdRun, help: "with SCENARIO=all, how many stacks run the scenarios side by side (each cluster size takes one; the one-node scenarios share the rest); 1 runs them one after the other",
		allowed: "a whole number 1..8",
		show:    func(c *scale.Config) string { return strconv.Itoa(c.Lanes) },
		set:     func(c *scale.Config, v string) (err error) { c.Lanes, err = parseInt(v, 1, 8); return }},
	{name: "MALFORMED", in: cmdRun, help: "malformed messages mixed evenly among the measured ones; each must end in the dead-letter queue with a reason",
		allowed: "a whole number >= 0",
		show:    func(c *scale.Config) string { return strconv.Itoa(c.Malformed) },
		set:     func(c *scale.Config, v string) (err error) { c.Malformed, err = parseInt(v, 0, 1_000_000); return }},
	{name: "TCP_HANDSHAKE", in: cmdRun, help: "on: Toxiproxy's handshake toxic makes a new connection cost its TCP round trip, as a real network does; off: stock Toxiproxy, which delays data but not the TCP handshake (the case's own conditions, so off is the default)",
		allowed: "one of " + strings.Join(allowedOnOff, ", "),
		show:    func(c *scale.Config) string { return c.TCPHandshake },
		set:     func(c *scale.Config, v string) (err error) { c.TCPHandshake, err = oneOf(v, allowedOnOff); return }},
	{name: "TLS_RESUMPTION", in: cmdRun, help: "on: nginx keeps a TLS session cache and issues session tickets, so a client that keeps its sessions (MODES per-request-resume) resumes them; off: the profile's setting (off in the lab's profiles, as in the case: every new connection pays a full handshake)",
		allowed: "one of " + strings.Join(allowedOnOff, ", "),
		show:    func(c *scale.Config) string { return cmp.Or(c.TLSResumption, "off") },
		set:     func(c *scale.Config, v string) (err error) { c.TLSResumption, err = oneOf(v, allowedOnOff); return }},
	{name: "BULK", in: cmdRun, help: "messages of the evening bulk run the summary projects (calculated from each run's p50 and rate) against the 20:50 Asia/Seoul send window close",
		allowed: "a whole number 1..100000000",
		show:    func(c *scale.Config) string { return strconv.Itoa(c.Bulk) },
		set:     func(c *scale.Config, v string) (err error) { c.Bulk, err = parseInt(v, 1, 100_000_000); return }},
	{name: "WORKERS", in: cmdRun | cmdScale, one: cmdRun, help: "worker replicas of every run, on one queue under single active consumer (one handles everything, the others stand by; ACTIVE=competing makes them all active); with more than 1, or another LEDGER or QUEUE_TYPE, each replica's /metrics is checked against the records; scale runs a list of active-worker counts (competing consumers, shared PostgreSQL ledger)",
		allowed:    fmt.Sprintf("whole numbers, each 1..%d, separated by spaces or commas", bench.MaxWorkers),
		allowedOne: fmt.Sprintf("a whole number 1..%d", bench.MaxWorkers),
		show: func(c *scale.Config) string {
			if len(c.WorkerCounts) > 0 {
				return spaced(c.WorkerCounts)
			}
			return strconv.Itoa(c.Workers)
		},
		set: func(c *scale.Config, v string) (err error) {
			if c.WorkerCounts, err = parseWholeList(v, 1, bench.MaxWorkers); err == nil {
				c.Workers = c.WorkerCounts[0]
			}
			return err
		}},
	{name: "LEDGER", in: cmdRun | cmdScale, help: "the workers' ledger: bbolt (one file per replica, on its own volume) or postgres (one PostgreSQL database shared by every replica); in scale, the worker points' (bbolt only with WORKERS=1: the case's one worker)",
		allowed: "one of " + strings.Join(allowedLedgers, ", "),
		show:    func(c *scale.Config) string { return c.Ledger },
		set:     func(c *scale.Config, v string) (err error) { c.Ledger, err = oneOf(v, allowedLedgers); return }},
	{name: "QUEUE_TYPE", in: cmdRun, help: "RabbitMQ queue type of the worker's queues",
		allowed: "one of " + strings.Join(allowedQueues, ", "),
		show:    func(c *scale.Config) string { return c.QueueType },
		set:     func(c *scale.Config, v string) (err error) { c.QueueType, err = oneOf(v, allowedQueues); return }},
	{name: "ACTIVE", in: cmdRun, help: "how the replicas share the queue: single (single active consumer: one works, the others stand by; queue order kept) or competing (every replica consumes; no order between messages; needs LEDGER=postgres, docs/deployment.md)",
		allowed: "one of " + strings.Join(allowedActive, ", "),
		show:    func(c *scale.Config) string { return c.Active },
		set:     func(c *scale.Config, v string) (err error) { c.Active, err = oneOf(v, allowedActive); return }},
	{name: "RATE_LIMIT", in: cmdRun | cmdScale, help: "the vendor's sends per second for the whole account: nginx answers a send above it 429 with Retry-After, and each active worker paces at its share (0.95 x RATE_LIMIT / active workers); 0 = the profile's rate_limit (none in the lab's profiles)",
		allowed: "a whole number 0..10000",
		show:    func(c *scale.Config) string { return strconv.Itoa(c.RateLimit) },
		set:     func(c *scale.Config, v string) (err error) { c.RateLimit, err = parseInt(v, 0, 10_000); return }},
	{name: "RATE_PACE", in: cmdRun | cmdScale, help: "share: each active worker paces at its share of RATE_LIMIT; off: the workers do not pace (the negative control: nginx's 429s show)",
		allowed: "one of " + strings.Join(allowedRatePace, ", "),
		show:    func(c *scale.Config) string { return c.RatePace },
		set:     func(c *scale.Config, v string) (err error) { c.RatePace, err = oneOf(v, allowedRatePace); return }},
	{name: "BROKER_NODES", in: cmdRun, help: "RabbitMQ nodes: 1, or a cluster whose every node the workers are given (quorum queues spread over all of them; use QUEUE_TYPE=quorum)",
		allowed: fmt.Sprintf("a whole number 1..%d", vendormock.MaxBrokerNodes),
		show:    func(c *scale.Config) string { return strconv.Itoa(max(c.BrokerNodes, 1)) },
		set: func(c *scale.Config, v string) (err error) {
			c.BrokerNodes, err = parseInt(v, 1, vendormock.MaxBrokerNodes)
			return
		}},
	{name: "WORKER", in: cmdRun, help: "the worker under test (docs/worker-contract.md): the Go worker, a reference worker, or any image that follows the contract; any worker but go runs once per RTT instead of MODES",
		allowed: "one of " + strings.Join(vendormock.WorkerNames(), ", "),
		show:    func(c *scale.Config) string { return c.Worker },
		set:     func(c *scale.Config, v string) (err error) { c.Worker, err = parseWorker(v); return }},
	{name: "CPU_PROFILE", in: cmdRun | cmdScale, help: "write a Go CPU profile of each worker run to OUT/pprof/worker-<mode>-<rtt>ms.pprof; in scale, of each worker point's replicas (OUT/pprof/<point>-<mode>-<rtt>ms-<replica>.pprof), and the summary splits the worker's CPU per send by where it went",
		allowed: "one of " + strings.Join(allowedOnOff, ", "),
		show:    func(c *scale.Config) string { return c.CPUProfile },
		set:     func(c *scale.Config, v string) (err error) { c.CPUProfile, err = oneOf(v, allowedOnOff); return }},
	{name: "FIXED", in: cmdRun, help: "audit-clients only (run and audit refuse it): 1 also audits each client's fixed variant (<client>-fixed, docs/auditing.md#fixed-variants) after the defaults",
		allowed: "0 or 1", show: func(c *scale.Config) string { return map[bool]string{false: "0", true: "1"}[c.AuditFixed] },
		set: func(c *scale.Config, v string) (err error) {
			n, err := parseInt(v, 0, 1)
			c.AuditFixed = n == 1
			return err
		}},
	{name: "IDLE_LADDER", in: cmdRun, help: "audit and audit-clients only: the idle probe's pauses below the vendor's keep-alive, s (the probe adds 0, the keep-alive minus 0.5 s and plus 5 s, and stops at the first new connection; docs/auditing.md#the-probes)",
		allowed: "seconds, each more than 0 and at most 3600, separated by commas",
		show: func(c *scale.Config) string {
			if c.AuditIdleLadder == nil {
				return "1,2,4,8,16,32"
			}
			var p []string
			for _, d := range c.AuditIdleLadder {
				p = append(p, strconv.FormatFloat(d.Seconds(), 'f', -1, 64))
			}
			return strings.Join(p, ",")
		},
		set: func(c *scale.Config, v string) (err error) { c.AuditIdleLadder, err = audit.ParseIdleLadder(v); return }},
	// The thresholds (docs/running.md, "Verdict and thresholds").
	{name: "THRESHOLD_P99_MS", in: cmdRun, help: "fail the command (exit 1) when a run's p99 send latency is above this many ms; OUT/verdict.json lists every check",
		allowed: fmt.Sprintf("a number of ms, more than 0 and at most %d", maxThresholdP99MS),
		show:    fixed("<none>"),
		set:     func(c *scale.Config, v string) (err error) { c.Thresholds.P99MS, err = parsePositiveMS(v); return }},
	{name: "THRESHOLD_CONNECTIONS", in: cmdRun, help: "fail the command (exit 1) when a run's TCP connections carrying sends (per run, warm-up included: the summary's TCP conns) are more than this",
		allowed: "a whole number >= 1",
		show:    fixed("<none>"),
		set: func(c *scale.Config, v string) (err error) {
			c.Thresholds.Connections, err = parseInt(v, 1, 1<<31-1)
			return
		}},
	{name: "SCHEME", old: "SCHEMES", in: cmdBoth, one: cmdRun,
		help:    "how the worker reaches nginx: plain HTTP, HTTPS (the case's), or HTTPS with a client certificate from the run's CA (mtls); the matrix runs a list",
		allowed: "one or more of " + strings.Join(allowedSchemes, ", "), allowedOne: "one of " + strings.Join(allowedSchemes, ", "),
		show: func(c *scale.Config) string { return spaced(schemesOf(c)) },
		set: func(c *scale.Config, v string) error {
			names, err := parseList(v, allowedSchemes)
			if err != nil {
				return err
			}
			c.Schemes = nil
			for _, n := range names {
				c.Schemes = append(c.Schemes, vendormock.Scheme(n))
			}
			c.Scheme = names[0]
			return nil
		}},
	{name: "CONCURRENCY", in: cmdAll, one: cmdRun,
		help:    "messages each worker handles at once (sends in flight; the prefetch is one more); above 1 the queue order is not kept; the matrix and scale run a list",
		allowed: "whole numbers, each " + strings.TrimPrefix(allowConcurrency(), "a whole number ") + ", separated by spaces or commas", allowedOne: allowConcurrency(),
		show: func(c *scale.Config) string { return spaced(concurrenciesOf(c)) },
		set: func(c *scale.Config, v string) (err error) {
			if c.Concurrencies, err = parseConcurrencies(v); err == nil {
				c.Concurrency = c.Concurrencies[0]
			}
			return err
		}},
	{name: "HTTP_VERSION", in: cmdAll, help: "HTTP version offered (2: h2 through ALPN, TLS schemes only)",
		allowed: "1.1 or 2; 2 needs SCHEME https or mtls",
		show:    func(c *scale.Config) string { return c.HTTPVersion },
		set: func(c *scale.Config, v string) (err error) {
			c.HTTPVersion, err = oneOf(v, allowedHTTPVersions)
			return
		}},
	{name: "POOL_SIZE", in: cmdAll, help: "pooled idle connections per host; 0 = the concurrency (2 = Go's default, the pitfall)",
		allowed: fmt.Sprintf("a whole number 0..%d", maxPoolSize),
		show:    func(c *scale.Config) string { return strconv.Itoa(c.PoolSize) },
		set:     func(c *scale.Config, v string) (err error) { c.PoolSize, err = parseInt(v, 0, maxPoolSize); return }},
	{name: "UPSTREAM_KEEPALIVE", in: cmdMatrix, help: "nginx's keep-alive to WireMock behind it: off opens a new upstream connection per request, study A's fifth pitfall (the cells count nginx's TIME_WAIT towards WireMock)",
		allowed: "one of " + strings.Join(allowedOnOff, ", "),
		show:    func(c *scale.Config) string { return c.UpstreamKeepalive },
		set:     func(c *scale.Config, v string) (err error) { c.UpstreamKeepalive, err = oneOf(v, allowedOnOff); return }},
	{name: "DRIVERS", in: cmdMatrix | cmdScale, help: "direct: the client in a loop; worker: the whole worker",
		allowed: "one or more of " + results.DriverDirect + ", " + results.DriverWorker,
		show:    func(c *scale.Config) string { return spaced(c.Drivers) },
		set: func(c *scale.Config, v string) (err error) {
			c.Drivers, err = parseList(v, []string{results.DriverDirect, results.DriverWorker})
			return
		}},
	// The scale benchmark's own (docs/running.md#the-scale-benchmark).
	{name: "CASE_DELAY_MS", in: cmdScale, help: "think time of scale's case series (every CONCURRENCY, the bare client and one worker), ms; off = no case series",
		allowed: fmt.Sprintf("a whole number 0..%d, or off", bench.MaxServerDelayMS),
		show: func(c *scale.Config) string {
			if c.CaseDelayMS == scale.CaseOff {
				return "off"
			}
			return strconv.Itoa(c.CaseDelayMS)
		},
		set: func(c *scale.Config, v string) (err error) {
			if v == "off" {
				c.CaseDelayMS = scale.CaseOff
				return nil
			}
			c.CaseDelayMS, err = parseInt(v, 0, bench.MaxServerDelayMS)
			return
		}},
	{name: "POINT_S", in: cmdScale, help: "seconds each scale point aims at: its sends are that long at the model's rate for its concurrency and workers (capped by the machine's and the rate limit's), never below 50 nor above COUNT",
		allowed: fmt.Sprintf("a whole number 1..%d", scale.MaxPointS),
		show:    func(c *scale.Config) string { return strconv.Itoa(c.PointS) },
		set:     func(c *scale.Config, v string) (err error) { c.PointS, err = parseInt(v, 1, scale.MaxPointS); return }},
	{name: "REPEATS", in: cmdScale, help: repeatsHelp, allowed: repeatsAllowed, show: showRepeats, set: setRepeats},
	{name: "UPSTREAM_POOL", in: cmdScale, help: upstreamPoolHelp, allowed: upstreamPoolAllowed, show: showUpstreamPool, set: setUpstreamPool},
	{name: "SOAK_S", in: cmdScale, help: "length of scale's memory run (one worker at the largest CONCURRENCY, its RSS sampled every second; the check wants at least 300 s), s; 0 = none",
		allowed: fmt.Sprintf("a whole number 0..%d", scale.MaxSoakS),
		show:    func(c *scale.Config) string { return strconv.Itoa(c.SoakS) },
		set:     func(c *scale.Config, v string) (err error) { c.SoakS, err = parseInt(v, 0, scale.MaxSoakS); return }},
}

// The keys of traffic with gaps (gapkeys.go) follow KEEPALIVE_TIMEOUT.
func init() {
	i := slices.IndexFunc(keys, func(k key) bool { return k.name == "KEEPALIVE_TIMEOUT" })
	keys = slices.Insert(keys, i+1, gapKeys...)
}

// schemesOf is the matrix's schemes, or the run's one.
func schemesOf(c *scale.Config) []vendormock.Scheme {
	if len(c.Schemes) > 0 {
		return c.Schemes
	}
	return []vendormock.Scheme{vendormock.Scheme(c.Scheme)}
}

// concurrenciesOf is the matrix's concurrencies, or the run's one.
func concurrenciesOf(c *scale.Config) []int {
	if len(c.Concurrencies) > 0 {
		return c.Concurrencies
	}
	return []int{c.Concurrency}
}

// defaultsOf is the config cmd starts from before any key: the bench's
// defaults for run (no matrix or scale lists), study A's matrix for
// matrix, issue 17's grid for scale.
func defaultsOf(cmd command) scale.Config {
	switch cmd {
	case cmdMatrix:
		return scale.Config{Config: matrix.DefaultConfig()}
	case cmdScale:
		return scale.DefaultConfig()
	}
	return scale.Config{Config: matrix.Config{Config: bench.DefaultConfig()}}
}

// keysOf returns the keys cmd takes, in usage order.
func keysOf(cmd command) []key {
	var out []key
	for _, k := range keys {
		if k.in&cmd != 0 {
			out = append(out, k)
		}
	}
	return out
}

// namesOf returns the names of the keys cmd takes, in usage order.
func namesOf(cmd command) []string {
	var names []string
	for _, k := range keysOf(cmd) {
		names = append(names, k.name)
	}
	return names
}

// lookup finds the key a word's name means for cmd: its name, or for the
// matrix its old name. ok is false for a name no key has; a key of
// another command is returned with ok true (the caller refuses it).
func lookup(cmd command, name string) (key, bool) {
	i := slices.IndexFunc(keys, func(k key) bool { return k.name == name || (cmd == cmdMatrix && k.old != "" && k.old == name) })
	if i < 0 {
		return key{}, false
	}
	return keys[i], true
}

// runShCommands are ./run.sh's commands (its usage lines, args.go), named
// when a first word is neither one of them nor KEY=VALUE.
const runShCommands = "audit, audit-clients, audit-probes, contract-check, matrix, scale, simulate, pageload, report, list, test, test-unit, test-integration, lint, mutate, --version, --help"

// parseWords applies the keys of cmd to cfg from KEY=VALUE words (args)
// and the environment (getenv; nil reads nothing): a word wins over the
// environment, an empty variable counts as unset, values are trimmed. It
// returns where each applied key came from ("argument" or "environment"),
// or a *UsageError: a word without '=', a name no key has (naming the
// known keys), a key of another command (naming cmd's keys), a list
// where cmd takes one value, or an invalid value (naming what is
// allowed).
func parseWords(cmd command, cfg *scale.Config, args []string, getenv func(string) string) (map[string]string, error) {
	known := strings.Join(namesOf(cmd), ", ")
	words := map[string]string{}
	for _, a := range args {
		name, value, ok := strings.Cut(a, "=")
		if !ok {
			msg := "want KEY=VALUE with KEY one of " + known
			if cmd&cmdRun != 0 && !strings.ContainsAny(a, " /.") {
				// ./run.sh's first word: a command it does not have.
				msg = "not a command of ./run.sh (" + runShCommands + ") nor a KEY=VALUE word; keys: " + known
				if near := nearestCommand(a); near == a {
					msg = "the command goes first: ./run.sh " + a + " KEY=VALUE...; commands: " + runShCommands
				} else if near != "" {
					msg = "not a command of ./run.sh; did you mean " + near + "? commands: " + runShCommands + "; keys: " + known
				}
			}
			return nil, &UsageError{Value: a, Source: "argument", Msg: msg}
		}
		k, ok := lookup(cmd, name)
		switch {
		case !ok:
			msg := "unknown key; known keys: " + known
			if isSimKey(name) {
				msg = "a key of ./run.sh simulate, not of lab " + cmd.name() + "; known keys: " + known
			} else if near := nearestKey(name, namesOf(cmd)); near != "" {
				msg = "unknown key; did you mean " + near + "? known keys: " + known
			}
			return nil, &UsageError{Key: name, Value: value, Source: "argument", Msg: msg}
		case k.in&cmd == 0:
			return nil, &UsageError{Key: name, Value: value, Source: "argument",
				Msg: fmt.Sprintf("a key of lab %s, not of lab %s; known keys: %s", (k.in &^ cmd).name(), cmd.name(), known)}
		}
		words[k.name] = value // a later word for the same key wins
	}
	sources := map[string]string{}
	for _, k := range keysOf(cmd) {
		value, source := words[k.name], "argument"
		if _, inWords := words[k.name]; !inWords {
			if getenv == nil {
				continue
			}
			source = "environment"
			if value = getenv(k.name); value == "" && cmd == cmdMatrix && k.old != "" {
				value = getenv(k.old)
			}
			if value == "" {
				continue
			}
		}
		v := strings.TrimSpace(value)
		if k.one&cmd != 0 && len(fields(v)) > 1 {
			return nil, &UsageError{Key: k.name, Value: value, Source: source,
				Msg: fmt.Sprintf("lab %s takes one value of this key; allowed: %s", cmd.name(), k.allowedFor(cmd))}
		}
		if err := k.set(cfg, v); err != nil {
			return nil, &UsageError{Key: k.name, Value: value, Source: source, Msg: err.Error() + "; allowed: " + k.allowedFor(cmd)}
		}
		sources[k.name] = source
	}
	if src, ok := sources["OUT"]; ok {
		if err := checkOutKind(cfg.Out, foreignKinds[cmd]); err != nil {
			return nil, &UsageError{Key: "OUT", Value: cfg.Out, Source: src, Msg: err.Error()}
		}
	}
	return sources, nil
}
