package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// ErrThreshold is wrapped by the error of Run when a run crossed one of
// the optional thresholds (Thresholds): the command exits 1 after writing
// every result file, the summary and verdict.json.
var ErrThreshold = errors.New("threshold crossed")

// Thresholds are the optional limits a bench run is judged by, like k6's
// thresholds (docs/running.md, "Verdict and thresholds"). The zero value
// judges nothing but delivery.
type Thresholds struct {
	// P99MS is THRESHOLD_P99_MS: every run's p99 send latency (the
	// worker's httptrace total over its measured sends) must be at most
	// this many ms; 0 = not judged.
	P99MS float64
	// Connections is THRESHOLD_CONNECTIONS: every run's TCP connections
	// carrying sends (nginx's distinct $connection over POST /v3/message,
	// warm-up included: the summary's "TCP conns") must be at most this,
	// per run in total, not per send; 0 = not judged.
	Connections int
}

// Judge returns the checks of rs, evidence relative to OUT: per run, the delivery check (the reconciler's lost
// plus duplicated messages, limit 0; -1 and a fail when not reconciled),
// then each threshold of th that is set.
func Judge(rs []results.Result, th Thresholds) []results.Check {
	var cs []results.Check
	for _, r := range rs {
		run := runLabel(r)
		file := results.ResultFile(r)
		d := results.Check{Name: "delivery", Run: run, Unit: "messages", Evidence: file}
		switch rec := r.Reconcile; {
		case rec == nil:
			d.Value, d.Detail = -1, "not reconciled: nothing shows 0 lost and 0 duplicates"
		default:
			d.Value = float64(rec.Lost + rec.Duplicates)
			d.Pass = rec.OK && d.Value == 0
			if !d.Pass {
				d.Detail = fmt.Sprintf("%d lost, %d duplicated, %d broken invariant(s)", rec.Lost, rec.Duplicates, len(rec.Violations))
			}
		}
		cs = append(cs, d)
		if th.P99MS > 0 {
			cs = append(cs, results.Check{Name: "THRESHOLD_P99_MS", Run: run, Value: r.LatencyMS.P99, Limit: th.P99MS,
				Unit: "ms", Pass: r.LatencyMS.P99 <= th.P99MS, Evidence: file})
		}
		if th.Connections > 0 {
			cs = append(cs, results.Check{Name: "THRESHOLD_CONNECTIONS", Run: run, Value: float64(r.TCPConnections),
				Limit: float64(th.Connections), Unit: "connections", Pass: r.TCPConnections <= th.Connections, Evidence: file})
		}
	}
	return cs
}

// runLabel is "<mode> at <rtt> ms", then the transport's file suffix
// when it is not the default ("pooled at 3 ms (-mtls-c8)").
func runLabel(r results.Result) string {
	s := fmt.Sprintf("%s at %d ms", r.Mode, r.RTTMS)
	t := results.Transport{Scheme: vendormock.Scheme(r.Scheme), Concurrency: r.Concurrency, HTTPVersion: r.HTTPVersion, PoolSize: r.PoolSize}
	if suffix := t.FileSuffix(r.Mode); suffix != "" {
		s += " (" + strings.TrimPrefix(suffix, "-") + ")"
	}
	return s
}

// tenths formats v rounded to 0.1 as the summary prints it ("100.8",
// "1050"); verdict.json keeps the exact value.
func tenths(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// ThresholdError prints one line per threshold check of v that failed to
// w, the last one naming the threshold, the value and the result file
// under out, and returns an error wrapping ErrThreshold that says the
// same; nil when every threshold held (delivery is DeliveryError's).
func ThresholdError(w io.Writer, out string, v results.Verdict) error {
	var lines []string
	for _, c := range v.Checks {
		if c.Pass || c.Name == "delivery" {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s=%g crossed: %s: %s %s > %g (%s)",
			c.Name, c.Limit, c.Run, tenths(c.Value), c.Unit, c.Limit, filepath.Join(out, c.Evidence)))
	}
	if len(lines) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nFAIL: %d threshold check(s) failed (verdict in %s):\n", len(lines), filepath.Join(out, results.VerdictFile))
	for _, l := range lines {
		fmt.Fprintf(w, "  FAIL threshold %s\n", l)
	}
	return fmt.Errorf("%w: %s", ErrThreshold, strings.Join(lines, "; "))
}
