package main

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/scale"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Bounds of CLIENT_IDLE (case time, before TIME_SCALE).
const (
	minClientIdle = 100 * time.Millisecond
	maxClientIdle = time.Hour
)

// gapKeys are the keys of traffic with gaps (docs/studies.md, "The case's
// production traffic"): ARRIVALS, CLIENT_IDLE, TIME_SCALE.
var gapKeys = []key{
	{name: "ARRIVALS", in: cmdRun, help: "how the measured messages arrive: back-to-back (all published before the worker starts, the case's load test) or paced while the worker runs: poisson:<mean gap> (exponential gaps, seeded: the same in every run), fixed:<gap>, file:<path> (one gap a line, repeated when COUNT is larger); the summary splits latency by the gap since the previous send (one Go worker only)",
		allowed: "back-to-back, poisson:<gap>, fixed:<gap> or file:<path>; a gap is a duration (45s, 750ms) or whole seconds, at most " + bench.MaxArrivalGap.String(),
		show:    fixed(bench.ArrivalsBackToBack),
		set: func(c *scale.Config, v string) (err error) {
			c.Arrivals, err = bench.ParseArrivals(v)
			return err
		}},
	{name: "CLIENT_IDLE", in: cmdRun, help: "the pooled client's idle timeout, in the case's time (TIME_SCALE divides it); it must stay one RTT and 1 s below nginx's keepalive_timeout, scaled alike (the case's JDK client: 30s)",
		allowed: fmt.Sprintf("a duration %s..%s, e.g. 30s, or whole seconds", minClientIdle, maxClientIdle),
		show:    fixed("<keepalive_timeout - RTT - 1s>"),
		set: func(c *scale.Config, v string) error {
			d, err := parseDurationOrSeconds(v)
			if err != nil {
				return err
			}
			if d < minClientIdle || d > maxClientIdle {
				return fmt.Errorf("%s is out of range", d)
			}
			c.ClientIdle = d
			return nil
		}},
	{name: "TIME_SCALE", in: cmdRun, help: "divide every ARRIVALS gap, CLIENT_IDLE and nginx's keepalive_timeout by this, so gaps of tens of seconds take minutes; the summary states the factor and gives gaps in the case's time",
		allowed: fmt.Sprintf("a whole number 1..%d", bench.MaxTimeScale),
		show:    fixed("1"),
		set: func(c *scale.Config, v string) (err error) {
			c.TimeScale, err = parseInt(v, 1, bench.MaxTimeScale)
			return
		}},
}

// parseDurationOrSeconds reads a Go duration or whole seconds.
func parseDurationOrSeconds(v string) (time.Duration, error) {
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("not a duration")
	}
	return d, nil
}

// checkGaps refuses paced ARRIVALS where they cannot run (a scenario,
// replicas, a contract worker) and divides nginx's keepalive_timeout by
// TIME_SCALE (the profile's when KEEPALIVE_TIMEOUT is not given; the
// value before is kept in CaseKeepalive); then CLIENT_IDLE, scaled, must
// sit one RTT and netmodel.IdleConnMargin below it.
func checkGaps(cfg *bench.Config, sources map[string]string) error {
	if cfg.Arrivals.Paced() {
		bad := func(why string) error {
			return &UsageError{Key: "ARRIVALS", Value: cfg.Arrivals.Spec, Source: sources["ARRIVALS"], Msg: why + "; allowed: back-to-back with it"}
		}
		switch {
		case cfg.Scenario != "":
			return bad("a scenario sets its own arrivals")
		case cfg.Replicated():
			return bad("paced arrivals run one Go worker (WORKERS=1, the default LEDGER, QUEUE_TYPE, ACTIVE, BROKER_NODES, no RATE_LIMIT)")
		case cfg.ContractWorker():
			return bad("paced arrivals run the Go worker (WORKER=go)")
		}
	}
	factor := cfg.TimeScaleOr1()
	ka := cfg.KeepaliveTimeout
	if ka == 0 && (factor > 1 || cfg.ClientIdle > 0) {
		dir, err := bench.ResolveProfile(cfg.Profile)
		if err != nil {
			return &UsageError{Key: "PROFILE", Value: cfg.Profile, Source: sources["PROFILE"], Msg: err.Error()}
		}
		p, err := vendormock.LoadProfile(dir)
		if err != nil {
			return &UsageError{Key: "PROFILE", Value: cfg.Profile, Source: sources["PROFILE"], Msg: err.Error()}
		}
		ka = p.Nginx.KeepaliveTimeout
	}
	if factor > 1 {
		cfg.CaseKeepalive = ka
		cfg.KeepaliveTimeout = ka / time.Duration(factor)
	}
	if cfg.ClientIdle > 0 && ka > 0 {
		maxRTT := slices.Max(cfg.RTTs)
		scaledKA := ka / time.Duration(factor)
		if limit := netmodel.IdleConnTimeout(scaledKA, maxRTT); cfg.ClientIdle/time.Duration(factor) > limit {
			return &UsageError{Key: "CLIENT_IDLE", Value: cfg.ClientIdle.String(), Source: sources["CLIENT_IDLE"],
				Msg: fmt.Sprintf("is %s in the run (TIME_SCALE=%d), above nginx's keepalive_timeout %s minus RTT %d ms and %s: the vendor would close first (the idle race); use at most %s",
					cfg.ClientIdle/time.Duration(factor), factor, scaledKA, maxRTT, netmodel.IdleConnMargin, max(limit*time.Duration(factor), 0))}
		}
	}
	return nil
}
