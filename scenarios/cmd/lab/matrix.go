package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/matrix"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// matrixKey is one argument of `lab matrix`.
type matrixKey struct {
	name, help, def, allowed string
	set                      func(c *matrix.Config, v string) error
}

// matrixKeys lists the matrix's arguments in the order usage prints them.
var matrixKeys = []matrixKey{
	{"RTT", "round trip added by Toxiproxy, ms (study A ran on loopback)", "0",
		fmt.Sprintf("a whole number 0..%d", bench.MaxRTTMS),
		func(c *matrix.Config, v string) (err error) {
			c.RTTMS, err = parseInt(v, 0, bench.MaxRTTMS)
			return
		}},
	{"COUNT", "measured sends per cell", strconv.Itoa(matrix.DefaultCount), "a whole number >= 1",
		func(c *matrix.Config, v string) (err error) { c.Count, err = parseInt(v, 1, 1<<31-1); return }},
	{"WARMUP", "warm-up sends per cell", strconv.Itoa(matrix.DefaultWarmup), "a whole number >= 0",
		func(c *matrix.Config, v string) (err error) { c.Warmup, err = parseInt(v, 0, 1<<31-1); return }},
	{"SCHEMES", "vendor schemes", `"http https mtls"`, "one or more of " + strings.Join(allowedSchemes, ", "),
		func(c *matrix.Config, v string) error {
			names, err := parseList(v, allowedSchemes)
			c.Schemes = nil
			for _, n := range names {
				c.Schemes = append(c.Schemes, vendormock.Scheme(n))
			}
			return err
		}},
	{"MODES", "client strategies", `"per-request pooled"`, "one or more of " + strings.Join(allowedModes, ", "),
		func(c *matrix.Config, v string) (err error) { c.Modes, err = parseModes(v); return }},
	{"CONCURRENCY", "sends in flight per cell", `"1 8 32"`, "whole numbers, each " + allowConcurrency(),
		func(c *matrix.Config, v string) (err error) {
			c.Concurrencies, err = parseConcurrencies(v)
			return
		}},
	{"DRIVERS", "direct: the client in a loop; worker: the whole worker", `"direct worker"`, "one or more of direct, worker",
		func(c *matrix.Config, v string) (err error) {
			c.Drivers, err = parseList(v, []string{results.DriverDirect, results.DriverWorker})
			return
		}},
	{"HTTP_VERSION", helpHTTPVersion, "1.1", strings.Join(allowedHTTPVersions, " or "),
		func(c *matrix.Config, v string) (err error) {
			c.HTTPVersion, err = parseHTTPVersion(v)
			return
		}},
	{"POOL_SIZE", helpPoolSize, "0", allowPoolSize,
		func(c *matrix.Config, v string) (err error) { c.PoolSize, err = parsePoolSize(v); return }},
	{"SERVER_DELAY_MS", "vendor think time, ms (study A: none)", "0", fmt.Sprintf("a whole number 0..%d", bench.MaxServerDelayMS),
		func(c *matrix.Config, v string) (err error) {
			c.ServerDelayMS, err = parseInt(v, 0, bench.MaxServerDelayMS)
			return
		}},
	{"PER_REQUEST_TLS", "highest TLS version of the per-request client (study A: Go's default)", "1.3", "1.2 or 1.3",
		func(c *matrix.Config, v string) (err error) {
			c.PerRequestTLS, err = oneOf(v, allowedTLS)
			return
		}},
	{"OUT", "results directory; without it each run writes a new folder " + outdir.RunsDir + "/<run id>/ (" + outdir.RunsDir + "/" + outdir.Latest + " links the newest); OUT=" + matrix.DefaultOut + " refreshes the committed reference", "<" + outdir.RunsDir + "/<run id>>", "a new or empty folder, or one an earlier run made (it carries " + outdir.Marker + ")",
		func(c *matrix.Config, v string) error {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("empty path")
			}
			if err := outdir.Check(v); err != nil {
				return err
			}
			c.Out = v
			return nil
		}},
}

// parseMatrixArgs builds a matrix.Config from KEY=VALUE words, then the
// environment for keys no word set. Errors are *UsageError.
func parseMatrixArgs(args []string, getenv func(string) string) (matrix.Config, error) {
	cfg := matrix.DefaultConfig()
	given := map[string]bool{}
	find := func(name string) (matrixKey, bool) {
		i := slices.IndexFunc(matrixKeys, func(k matrixKey) bool { return k.name == name })
		if i < 0 {
			return matrixKey{}, false
		}
		return matrixKeys[i], true
	}
	var names []string
	for _, k := range matrixKeys {
		names = append(names, k.name)
	}
	for _, a := range args {
		name, v, ok := strings.Cut(a, "=")
		if !ok {
			return cfg, &UsageError{Value: a, Source: "argument", Msg: "want KEY=VALUE; keys: " + strings.Join(names, ", ")}
		}
		k, ok := find(name)
		if !ok {
			return cfg, &UsageError{Key: name, Value: v, Source: "argument", Msg: "unknown key; keys: " + strings.Join(names, ", ")}
		}
		if err := k.set(&cfg, v); err != nil {
			return cfg, &UsageError{Key: name, Value: v, Source: "argument", Msg: err.Error() + "; allowed: " + k.allowed}
		}
		given[name] = true
	}
	for _, k := range matrixKeys {
		if v := getenv(k.name); v != "" && !given[k.name] {
			if err := k.set(&cfg, v); err != nil {
				return cfg, &UsageError{Key: k.name, Value: v, Source: "environment", Msg: err.Error() + "; allowed: " + k.allowed}
			}
		}
	}
	return cfg, nil
}

// matrixUsage prints the matrix's keys.
func matrixUsage(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`./run.sh matrix [KEY=VALUE...]: the published matrix (docs/studies.md, study A):
every scheme x client strategy x concurrency, with the client alone (DRIVER
direct) and the whole worker (worker), one JSON per cell, OUT/matrix.md with
study A's figures beside ours as ratios, and OUT/charts/.

`)
	for _, k := range matrixKeys {
		fmt.Fprintf(&b, "  %-16s %s (default %s; %s)\n", k.name, k.help, k.def, k.allowed)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// parseList reads one or more distinct values of allowed.
func parseList(v string, allowed []string) ([]string, error) {
	parts := fields(v)
	if len(parts) == 0 {
		return nil, fmt.Errorf("no value given")
	}
	var out []string
	for _, p := range parts {
		if _, err := oneOf(p, allowed); err != nil {
			return nil, err
		}
		if slices.Contains(out, p) {
			return nil, fmt.Errorf("%s given twice", p)
		}
		out = append(out, p)
	}
	return out, nil
}

// parseConcurrencies reads distinct concurrencies, each 1..MaxConcurrency.
func parseConcurrencies(v string) ([]int, error) {
	parts := fields(v)
	if len(parts) == 0 {
		return nil, fmt.Errorf("no concurrency given")
	}
	var out []int
	for _, p := range parts {
		n, err := parseConcurrency(p)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", p, err)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("concurrency %d given twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}
