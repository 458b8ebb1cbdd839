package audit

import (
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// nginxLatency returns the p50 and p99 in ms of nginx's $request_time of
// the run's measured send POSTs (the first r.Warmup sends by nginx's
// $msec left out, as the worker's own figures leave them out), from the
// access log slice the bench saved (results.Result.AccessLog, relative to
// dir): the vendor side's view beside the worker's own latency. nginx's time runs from the
// request's first byte to the answer's last, so it leaves out the
// client's connect and TLS handshake and one one-way trip. -1, -1 when the
// slice or the send path is missing or has no send (shown "not seen").
func nginxLatency(dir string, r results.Result, sendPath string) (p50, p99 float64) {
	if dir == "" || r.AccessLog == "" || sendPath == "" {
		return -1, -1
	}
	f, err := os.Open(filepath.Join(dir, r.AccessLog))
	if err != nil {
		return -1, -1
	}
	defer f.Close()
	entries, err := vendormock.ParseAccessLog(f)
	if err != nil {
		return -1, -1
	}
	sends := sendEntries(entries, sendPath)
	slices.SortStableFunc(sends, func(a, b vendormock.AccessEntry) int { return a.Time.Compare(b.Time) })
	if r.Warmup > 0 && len(sends) > r.Warmup {
		sends = sends[r.Warmup:]
	}
	var ms []float64
	for _, e := range sends {
		ms = append(ms, e.RequestTime*1000)
	}
	if len(ms) == 0 {
		return -1, -1
	}
	slices.Sort(ms)
	return nearestRank(ms, 0.50), nearestRank(ms, 0.99)
}

// nearestRank is the nearest-rank percentile q of sorted values.
func nearestRank(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// msCell prints ms with one decimal, or "not seen" for -1.
func msCell(v float64) string {
	if v < 0 {
		return "not seen"
	}
	return fmtS(math.Round(v*10) / 10)
}
