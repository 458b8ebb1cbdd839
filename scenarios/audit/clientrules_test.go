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
		{"planted: an idle timeout above the keep-alive (OkHttp's 300 s)", "java-okhttp", func(*Inputs) {}, "idle-timeout", Fail, "3 ms: idle timeout 300.00 s >= keep-alive 75 s"},
		{"planted: no idle timeout at all (urllib3's pool)", "python-session", func(*Inputs) {}, "idle-timeout", Fail, "no idle timeout (kept until the server closes it)"},
		{"no idle timeout at all (Apache's pool)", "java-apache", func(*Inputs) {}, "idle-timeout", Fail, "no idle timeout"},
		{"httpx's 5 s passes", "python-httpx", func(*Inputs) {}, "idle-timeout", Pass, "3 ms: idle timeout 5.00 s < keep-alive 75 s"},
		{"a client per send keeps none", "node-got", func(*Inputs) {}, "idle-timeout", Pass, "keeps no idle connection"},
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
