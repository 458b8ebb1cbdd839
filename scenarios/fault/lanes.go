package fault

import (
	"fmt"
	"io"
	"sync"
)

// MaxLanes bounds Options.Lanes: each lane is a whole stack (RabbitMQ,
// nginx, WireMock, Toxiproxy, the worker, PostgreSQL when a scenario
// needs it) on the same machine.
const MaxLanes = 8

// stackLane is one stack of a run and the scenarios it runs, in catalog order:
// the fault scenarios of its broker size and, on a one-node stack, idle
// races after them.
type stackLane struct {
	name  string
	nodes int
	scs   []*Scenario
}

// planLanes splits sel over at most n lanes (n < 1 counts as 1): every
// cluster size gets a lane of its own (its scenarios need that stack),
// and the one-node scenarios are dealt round-robin, in catalog order,
// over the lanes left (at least one), fault scenarios first, then the
// idle races. With n = 1 it is one lane per broker size, run one after
// the other as before lanes existed. Every scenario of sel lands in
// exactly one lane; empty lanes are dropped.
func planLanes(sel []*Scenario, n int) []stackLane {
	n = max(1, min(n, MaxLanes))
	var lanes []stackLane
	for _, nodes := range brokerGroups(sel) {
		if nodes == 1 {
			continue
		}
		l := stackLane{name: fmt.Sprintf("cluster-%d", nodes), nodes: nodes}
		for _, sc := range sel {
			if sc.Kind == KindFault && sc.stackNodes() == nodes {
				l.scs = append(l.scs, sc)
			}
		}
		lanes = append(lanes, l)
	}
	one := max(1, n-len(lanes))
	ones := make([]stackLane, one)
	for i := range ones {
		ones[i] = stackLane{name: fmt.Sprintf("lane-%d", i+1), nodes: 1}
	}
	k := 0
	for _, kind := range []string{KindFault, KindIdleRace} {
		for _, sc := range sel {
			if sc.Kind == kind && sc.stackNodes() == 1 {
				ones[k%one].scs = append(ones[k%one].scs, sc)
				k++
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
