package audit

import (
	"fmt"
	"io"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
)

// Estimates of the battery's steps, for the ETA of the progress lines
// (measured on a 2-core VM: a stack start about 10 s, a fault scenario
// about 20 s on average).
const (
	stackStart   = 15 * time.Second
	perScenario  = 20 * time.Second
	faultsCount  = 16 // fault scenarios of the catalog that apply to most workers
	reportTiming = 2 * time.Second
)

// progress prints "[audit] step i/3: what (elapsed, ETA)" lines.
type progress struct {
	w     io.Writer
	start time.Time
	i     int
	est   []time.Duration // remaining estimate at each step
}

func newProgress(w io.Writer, cfg bench.Config, keepalive time.Duration, raceCount, raceBurst int) *progress {

	bench := stackStart
	for _, rtt := range cfg.RTTs {
		per := time.Duration(cfg.ServerDelayMS+4*rtt+10) * time.Millisecond
		bench += time.Duration(len(cfg.RunModes())) * (5*time.Second + time.Duration(cfg.Count+cfg.Warmup)*per)
	}
	pauses := max(raceCount/max(raceBurst, 1)-1, 0)
	faults := stackStart + faultsCount*perScenario + time.Duration(pauses)*keepalive + 30*time.Second
	probes := stackStart + probesTiming(keepalive, cfg.AuditIdleLadder) + reportTiming
	return &progress{w: w, start: time.Now(), est: []time.Duration{bench + faults + probes, faults + probes, probes, reportTiming}}
}

// step prints the next step's line with the time so far and the ETA.
func (p *progress) step(name, what string) {
	eta := time.Duration(0)
	if p.i < len(p.est) {
		eta = p.est[p.i]
	}
	p.i++
	fmt.Fprintf(p.w, "[audit] step %d/%d: %s: %s (elapsed %s, ETA about %s)\n", p.i, len(p.est), name, what,
		time.Since(p.start).Round(time.Second), eta.Round(10*time.Second))
}

// done prints the total time.
func (p *progress) done() {
	fmt.Fprintf(p.w, "[audit] done in %s\n", time.Since(p.start).Round(time.Second))
}

// probesTiming is the probes' worst case: every rung of the idle ladder
// (it stops at the first new connection), the replay probe's lanes and
// the response probe's delay, each with a worker start.
func probesTiming(keepalive time.Duration, ladder []time.Duration) time.Duration {
	d := 3 * 10 * time.Second // worker starts
	for _, g := range IdleGaps(keepalive, ladder) {
		d += g
	}
	return d + 2*(ReplaySends*time.Second+ReplaySettle) + ResponseProbeDelay
}
