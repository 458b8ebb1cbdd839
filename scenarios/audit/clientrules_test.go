package audit

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/fault"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// clientRun is a clean bench run of a third-party client's worker: one
// connection, every send reached nginx once, the replay count measured.
func clientRun(worker string, rtt int) results.Result {
	return results.Result{Worker: worker, Mode: "pooled", RTTMS: rtt, TCPConnections: 1, SendRequests: 60, JournalCount: 60,
		ClientReused: 59, TLSVersions: map[string]int{"TLSv1.3": 60}, Outcomes: map[outcome.Outcome]int{outcome.Sent: 60},
		LatencyMS: results.Latency{P50: 20, P99: 40, Max: 45},
		Reconcile: &reconcile.Report{ClientReplayChecked: true, ByOutcome: map[outcome.Outcome]int{outcome.Sent: 60}}}
}

// TestClientRules: each rule about what a third-party client does catches
// its planted behaviour (the negative control) and passes the clean run.
func TestClientRules(t *testing.T) {
	tests := []struct {
		name     string
		worker   string
		change   func(in *Inputs)
		id, want string
		evidence string
	}{
		{"no replay passes", "java-okhttp", func(*Inputs) {}, "client-replay", Pass, "0 outside the negative controls in 3 runs"},
		{"planted: the client sent a POST twice on its own (bench)", "java-okhttp", func(in *Inputs) {
			in.Bench[0].Reconcile.Duplicates, in.Bench[0].Reconcile.ClientReplays = 1, 1
			in.Bench[0].Reconcile.ClientReplayRefKeys = []string{"r-7"}
		}, "client-replay", Fail, "bench 3 ms: 1 (r-7)"},
		{"planted: the client sent a POST twice on its own (fault)", "java-okhttp", func(in *Inputs) {
			in.Faults[0].Reconcile.ClientReplays, in.Faults[0].Reconcile.ClientReplayRefKeys = 1, []string{"f-vendor-closes-0002"}
		}, "client-replay", Fail, "fault vendor-closes: 1 (f-vendor-closes-0002)"},
		// The go-alimtalk audit of 2026-12-02 failed on exactly this: the
		// replays planted by ledger-lost-bbolt, no-sac-crash and
		// stream-reset-h2-replay counted against the worker.
		{"a negative control's planted replay is expected", "go", func(in *Inputs) {
			in.Faults[0].Expected.Duplicates = 1
			in.Faults[0].Reconcile.ClientReplays, in.Faults[0].Reconcile.ClientReplayRefKeys = 1, []string{"f-vendor-closes-0002"}
		}, "client-replay", Pass, "planted by the negative controls, as expected: 1 by vendor-closes"},
		{"planted: a replay beyond the negative control's", "go", func(in *Inputs) {
			in.Faults[0].Expected.Duplicates = 1
			in.Faults[0].Reconcile.ClientReplays, in.Faults[0].Reconcile.ClientReplayRefKeys = 2, []string{"f-vendor-closes-0002", "f-vendor-closes-0003"}
		}, "client-replay", Fail, "fault vendor-closes: 1 (f-vendor-closes-0002"},
		{"results without the count are not measured", "java-okhttp", func(in *Inputs) {
			for i := range in.Bench {
				in.Bench[i].Reconcile.ClientReplayChecked = false
			}
			in.Faults = nil
		}, "client-replay", NA, "not measured"},
		{"no stall passes", "java-apache", func(*Inputs) {}, "pool-stall", Pass, "3 ms: 60 sends handled, 60 reached nginx, slowest 45 ms"},
		{"planted: a pool that stops handing out connections", "java-apache", func(in *Inputs) {
			in.Bench[1].Outcomes = map[outcome.Outcome]int{outcome.Sent: 55, outcome.Unknown: 5}
			in.Bench[1].SendRequests, in.Bench[1].LatencyMS.Max = 55, 10000
		}, "pool-stall", Fail, "10 ms: 60 sends handled, 55 reached nginx, slowest 10000 ms; 5 never reached nginx (NOT_SENT 0, UNKNOWN 5); a send took 10000 ms >= 1000 ms"},
		{"a fast NOT_SENT that never reached nginx is no stall", "java-okhttp", func(in *Inputs) {
			in.Bench[0].Outcomes = map[outcome.Outcome]int{outcome.Sent: 60, outcome.NotSent: 1}
		}, "pool-stall", Pass, "3 ms: 61 sends handled, 60 reached nginx, slowest 45 ms; 1 never reached nginx (NOT_SENT 1, UNKNOWN 0)"},
		{"planted: a client that never reuses a connection", "python-session", func(in *Inputs) {
			for i := range in.Bench {
				in.Bench[i].TCPConnections, in.Bench[i].ClientReused = 60, 0
			}
		}, "connections-per-send", Fail, "one new connection per send at 3 ms: 60 connections for 60 sends"},
		// A planted replaying client is caught by the replay probe alone,
		// with no catalog fault provoking it (the faults and the bench
		// saw nothing).
		{"planted: a replay only the probe provokes", "java-okhttp", func(in *Inputs) {
			in.Probes = &Probes{Replay: &ReplayMeasure{Every: 2, Lanes: []ReplayLane{{Lane: "the client's choice",
				Resets: map[string]int{"HTTP/2": 2}, Keys: []ReplayKey{{RefKey: "p-1-replay0-1", Requests: 1}, {RefKey: "p-1-replay0-2", Requests: 2, AgainAfterMS: 4}},
				Replayed: []string{"p-1-replay0-2"}}}}}
		}, "client-replay", Fail, "replay probe the client's choice: 2 send(s) of 2 refkeys reset after the vendor accepted them (2 over HTTP/2); SENT AGAIN: p-1-replay0-2 2 times, again after 4 ms"},
		{"a probe that provoked nothing is shown, not counted", "java-okhttp", func(in *Inputs) {
			in.Probes = &Probes{Replay: &ReplayMeasure{Lanes: []ReplayLane{{Lane: "the client's choice", Unknown: "the proxy reset none of its sends: nothing provoked"}}}}
		}, "client-replay", Pass, "replay probe the client's choice: unknown (the proxy reset none"},
		// The idle rule judges the probe's measure, never the stated
		// library default (shown beside it).
		{"planted: a connection reused after 80 s idle (OkHttp's 300 s pool)", "java-okhttp", func(in *Inputs) {
			in.Probes = &Probes{Idle: &IdleMeasure{Reuse: true, ReusedUpToS: 80.1}}
		}, "idle-timeout", Fail, "measured: none up to 80.1 s (reused a connection idle 80.1 s); reused a connection idle 80.1 s >= keep-alive 75 s - RTT 10 ms = 74.99 s; stated: 300 s (okhttp3.ConnectionPool()"},
		{"planted: no idle timeout at all (urllib3's pool)", "python-session", func(in *Inputs) {
			in.Probes = &Probes{Idle: &IdleMeasure{Reuse: true, ReusedUpToS: 80.1}}
		}, "idle-timeout", Fail, "stated: no idle timeout (urllib3's pool has no idle timeout (workers/python/README.md)): agrees"},
		{"httpx's measured 5 s passes", "python-httpx", func(in *Inputs) {
			v := 8.05
			in.Probes = &Probes{Idle: &IdleMeasure{Reuse: true, ReusedUpToS: 4.03, NewFromS: &v}}
		}, "idle-timeout", Pass, "a new connection after 8.05 s < keep-alive 75 s"},
		{"planted: a stated 5 s the client does not keep", "python-httpx", func(in *Inputs) {
			in.Probes = &Probes{Idle: &IdleMeasure{Reuse: true, ReusedUpToS: 80.1}}
		}, "idle-timeout", Fail, "stated: 5 s (httpx Limits keepalive_expiry=5.0 (workers/python/README.md)): DISAGREES with the measure"},
		{"a stated default alone judges nothing", "java-okhttp", func(*Inputs) {}, "idle-timeout", NA, "measured: not measured (no idle probe in this audit); stated: 300 s"},
		{"a client per send keeps none", "node-got", func(in *Inputs) {
			v := 0.05
			in.Probes = &Probes{Idle: &IdleMeasure{NewFromS: &v}}
		}, "idle-timeout", Pass, "keeps no idle connection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Inputs{Worker: tt.worker, Profile: "alimtalk", KeepaliveS: 75,
				Bench: []results.Result{clientRun(tt.worker, 3), clientRun(tt.worker, 10)},
				Faults: []fault.Verdict{{Name: "vendor-closes", Tool: "toxiproxy", Pass: true,
					Reconcile: &reconcile.Report{ClientReplayChecked: true}}}}
			tt.change(&in)
			got := rule(t, Evaluate(in), tt.id)
			if got.Verdict != tt.want || !strings.Contains(got.Evidence, tt.evidence) {
				t.Errorf("rule %s = %s %q; want %s with %q", tt.id, got.Verdict, got.Evidence, tt.want, tt.evidence)
			}
		})
	}
}
