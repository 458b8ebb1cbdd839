package defaults

import (
	"errors"
	"strings"
	"testing"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// TestVerdict: a row says its connections in words, and a row nginx
// logged only part of says so before anything else.
func TestVerdict(t *testing.T) {
	row := func(calls, requests, conns int) Row {
		return Row{Calls: calls, Count: Count{Requests: requests, Connections: conns}}
	}
	for _, tc := range []struct {
		r    Row
		want string
	}{
		{row(200, 200, 1), "one connection"},
		{row(200, 200, 2), "2 connections"},
		{row(200, 200, 200), "one per call"},
		{row(200, 199, 1), "nginx logged 199 of 200 calls"},
	} {
		if got := verdict(tc.r); got != tc.want {
			t.Errorf("verdict(%+v) = %q, want %q", tc.r.Count, got, tc.want)
		}
	}
}

// TestSummaryAndChart: the summary carries each client's row with nginx's
// count and the study's figure, fetch's connection sequence, the wave's
// ratio to the reusing agent; the chart renders.
func TestSummaryAndChart(t *testing.T) {
	es := readFixture(t)
	r := Result{RTTMS: 50, Calls: 5, WaveCalls: 50, WaveInFlight: 10, TLSOffered: "TLSv1.2 TLSv1.3", KeepaliveTimeoutS: 75, ClientCPUs: 1}
	for _, c := range Sequential[:3] {
		row := Row{Client: c, Calls: 5, InFlight: 1, Count: CountCalls(es, c.Name), MedianMS: 60, P90MS: 70, Output: Output{WallMS: 300}}
		r.Sequential = append(r.Sequential, row)
	}
	r.Wave = []Row{
		{Client: Wave[0], Calls: 50, InFlight: 10, Output: Output{WallMS: 500}},
		{Client: Wave[1], Calls: 50, InFlight: 10, Output: Output{WallMS: 1000}},
	}
	s := Summary(r)
	for _, want := range []string{
		"| Node `fetch()` (undici) | 2 (new at call 2) | 2 of 200 |",
		"node-fetch: connection of each of the first 10 calls, in order of first use: 1 2 1 2 1 0 0 0 0 0.",
		"| Node `agent: false` | 0 | 1000 | 0.0 | 2.00x |",
		"Provenance: not recorded",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	svg, err := Chart(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), "<svg") || !strings.Contains(string(svg), "2 conn") {
		t.Errorf("chart is not an SVG with the connection labels: %.200s", svg)
	}
}

// TestSummaryVersionNotes: a run on a Node whose global agent keeps no
// connection says so beside study B's Node 23.5, with the count it caused;
// a Node 19+ run (keepAlive=true) gets no such note; every summary says
// how to re-render it.
func TestSummaryVersionNotes(t *testing.T) {
	row := func(version string, conns int) Result {
		return Result{Calls: 200, Sequential: []Row{{Client: Sequential[1], Calls: 200, Count: Count{Requests: 200, Connections: conns},
			Output: Output{Version: version}}}}
	}
	s := Summary(row("node v18.20.4, undici bundled (no process.versions.undici), https.globalAgent.keepAlive=false", 200))
	for _, want := range []string{
		"Node here is node v18.20.4, study B's 23.5",
		"opened 200 connections for 200 calls where study B's opened 1",
		"Debian's node-undici 5.15.0",
		"`./run.sh report results/client-defaults`",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	s = Summary(row("node v23.5.0, undici 7.1.0, https.globalAgent.keepAlive=true", 1))
	if strings.Contains(s, "Node here is") || strings.Contains(s, "node-undici") {
		t.Errorf("a Node 23 run got the Node 18 notes:\n%s", s)
	}
	if !strings.Contains(s, "./run.sh report") {
		t.Error("no re-render command")
	}
}
