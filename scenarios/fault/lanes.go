package fault

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"
)

// MaxLanes bounds Options.Lanes: each lane is a whole stack (RabbitMQ,
// nginx, WireMock, Toxiproxy, the worker, PostgreSQL when a scenario
// needs it) on the same machine.
const MaxLanes = 8

// stackLane is one stack of a run and the scenarios it runs, in catalog order:
// the fault scenarios of its broker size and, on a one-node stack, idle
// races after them. est is the sum of its scenarios' estimates.
type stackLane struct {
	name  string
	nodes int
	scs   []*Scenario
	est   time.Duration
}

// estimateFunc is how long a scenario is expected to take on a lane.
type estimateFunc func(*Scenario) time.Duration

// planLanes splits sel over at most n lanes (n < 1 counts as 1): every
// cluster size gets a lane of its own (its scenarios need that stack),
// and the one-node scenarios are spread over the lanes left (at least
// one) by their estimates, longest first, each to the lane with the least
// time so far (ties: the lower lane; equal estimates: catalog order).
// That is the longest-processing-time rule: a lane never ends more than a
// third after the best split. Within a lane the scenarios run in catalog
// order, fault scenarios before idle races. With n = 1 it is one lane per
// broker size, run one after the other as before lanes existed. Every
// scenario of sel lands in exactly one lane; empty lanes are dropped.
// est nil weighs every scenario the same (the split is then by count).
func planLanes(sel []*Scenario, n int, est estimateFunc) []stackLane {
	n = max(1, min(n, MaxLanes))
	if est == nil {
		est = func(*Scenario) time.Duration { return time.Second }
	}
	var lanes []stackLane
	for _, nodes := range brokerGroups(sel) {
		if nodes == 1 {
			continue
		}
		l := stackLane{name: fmt.Sprintf("cluster-%d", nodes), nodes: nodes}
		for _, sc := range sel {
			if sc.Kind == KindFault && sc.stackNodes() == nodes {
				l.scs = append(l.scs, sc)
				l.est += est(sc)
			}
		}
		lanes = append(lanes, l)
	}
	one := max(1, n-len(lanes))
	ones := make([]stackLane, one)
	for i := range ones {
		ones[i] = stackLane{name: fmt.Sprintf("lane-%d", i+1), nodes: 1}
	}
	var single []*Scenario
	for _, sc := range sel {
		if sc.stackNodes() == 1 {
			single = append(single, sc)
		}
	}
	byLength := slices.Clone(single)
	slices.SortStableFunc(byLength, func(a, b *Scenario) int { return cmp.Compare(est(b), est(a)) })
	at := map[*Scenario]int{}
	for _, sc := range byLength {
		k := 0
		for i := range ones {
			if ones[i].est < ones[k].est {
				k = i
			}
		}
		ones[k].est += est(sc)
		at[sc] = k
	}
	for _, kind := range []string{KindFault, KindIdleRace} {
		for _, sc := range single {
			if sc.Kind == kind {
				ones[at[sc]].scs = append(ones[at[sc]].scs, sc)
			}
		}
	}
	for _, l := range ones {
		if len(l.scs) > 0 {
			lanes = append(lanes, l)
		}
	}
	return lanes
}

// defaultEstimate weighs a fault scenario no earlier run has timed.
const defaultEstimate = 30 * time.Second

// laneEstimates returns planLanes' weights: a fault scenario's duration_s
// in past (an earlier run's faults.json; defaultEstimate when it is not
// there), and an idle race's own arithmetic, its lanes running side by
// side: the pauses between its bursts plus its sends one after the other
// at the slowest RTT and its server delay, plus 10 s to start a worker.
// count overrides the idle races' sends per lane as Options.Count does.
func laneEstimates(past map[string]time.Duration, count int) estimateFunc {
	return func(sc *Scenario) time.Duration {
		if r := sc.IdleRace; sc.Kind == KindIdleRace && r != nil {
			n := r.Count
			if count > 0 {
				n = count
			}
			bursts := (n + max(r.Burst, 1) - 1) / max(r.Burst, 1)
			pause := (r.PauseMin.D() + r.PauseMax.D()) / 2
			rtt := slices.Max(append([]int{0}, r.RTTsMS...))
			delay := 18
			if r.ServerDelayMS != nil {
				delay = *r.ServerDelayMS
			}
			return time.Duration(max(bursts-1, 0))*pause +
				time.Duration(n*(rtt+delay))*time.Millisecond + 10*time.Second
		}
		if d, ok := past[sc.Name]; ok && d > 0 {
			return d
		}
		return defaultEstimate
	}
}

// ReadDurations returns each fault's duration_s in the faults.json at
// path (an earlier run's), for planning lanes. A missing file is no
// durations and no error; an unreadable or malformed one is an error.
func ReadDurations(path string) (map[string]time.Duration, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f FaultsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ds := map[string]time.Duration{}
	for _, v := range f.Faults {
		if v.DurationS > 0 {
			ds[v.Name] = time.Duration(v.DurationS * float64(time.Second))
		}
	}
	return ds, nil
}

// lockedWriter serialises writes to W, so lanes' lines (each one Write
// through a lab.PrefixWriter) never interleave inside a line.
type lockedWriter struct {
	mu sync.Mutex
	W  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(b)
}
