package fault

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestEvaluateExpectedDuplicates: a negative control expecting one
// duplicate passes only when the reconciler AND the journal both see
// exactly one; seeing none, or only one of the two seeing it, or two,
// fails. A 429 before the send that went through is no duplicate.
func TestEvaluateExpectedDuplicates(t *testing.T) {
	sc := mustParse(t, strings.Replace(minimal, "  outcomes: {SENT: 1}\n", "  duplicates: 1\n  outcomes: {SENT: 1}\n", 1))
	recs := []records.Record{{Seq: 1, RefKey: "k1", Outcome: outcome.Sent}}
	once := []vendormock.JournalEntry{{RefKey: "k1", Status: 200}}
	twice := []vendormock.JournalEntry{{RefKey: "k1", Status: 200}, {RefKey: "k1", Status: 200}}
	limited := []vendormock.JournalEntry{{RefKey: "k1", Status: 429}, {RefKey: "k1", Status: 200}}
	byOutcome := map[outcome.Outcome]int{outcome.Sent: 1}
	dupViolation := []reconcile.Violation{{RefKey: "k1", Rule: reconcile.RuleDuplicate, Detail: "reached the vendor 2 times"}}
	seen := &reconcile.Report{OK: false, Checks: []string{reconcile.CheckJournal}, Duplicates: 1, DuplicateRefKeys: []string{"k1"}, ByOutcome: byOutcome, Violations: dupViolation}
	unseen := &reconcile.Report{OK: true, Checks: []string{reconcile.CheckJournal}, ByOutcome: byOutcome}
	tests := []struct {
		name     string
		rep      *reconcile.Report
		journal  []vendormock.JournalEntry
		wantPass bool
		wantFail string
	}{
		{"seen by both", seen, twice, true, ""},
		{"seen by neither", unseen, once, false, "reconciler: 0 refkeys reached the vendor more than once, want 1"},
		{"reconciler only", seen, once, false, "journal: 0 refkeys sent more than once (no 4xx answer), want 1"},
		{"journal only", unseen, twice, false, "reconciler: 0 refkeys"},
		{"a 429 is no duplicate", unseen, limited, false, "journal: 0 refkeys"},
		{"two instead of one", &reconcile.Report{OK: false, Checks: seen.Checks, Duplicates: 2, ByOutcome: byOutcome, Violations: dupViolation},
			append(twice, vendormock.JournalEntry{RefKey: "k2", Status: 200}, vendormock.JournalEntry{RefKey: "k2", Status: 200}), false, "want 1"},
		{"another violation still fails", &reconcile.Report{OK: false, Checks: seen.Checks, Duplicates: 1, ByOutcome: byOutcome,
			Violations: append(dupViolation, reconcile.Violation{RefKey: "k1", Rule: reconcile.RuleRoute, Detail: "wrong queue"})}, twice, false, "route k1: wrong queue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := evaluate(sc, tt.rep, recs, tt.journal, nil, nil)
			if v.Pass != tt.wantPass {
				t.Errorf("Pass = %v; want %v (failures %q)", v.Pass, tt.wantPass, v.Failures)
			}
			if tt.wantFail != "" && !strings.Contains(strings.Join(v.Failures, "|"), tt.wantFail) {
				t.Errorf("failures %q; want one containing %q", v.Failures, tt.wantFail)
			}
			if v.Expected.Duplicates != 1 {
				t.Errorf("Expected.Duplicates = %d; want 1", v.Expected.Duplicates)
			}
		})
	}
	// The default is 0: the same duplicate fails a scenario that does not
	// plant it.
	v := evaluate(mustParse(t, minimal), seen, recs, twice, nil, nil)
	if v.Pass || v.JournalDuplicates != 1 {
		t.Errorf("default expectation: Pass %v, journal duplicates %d; want a failure seeing 1", v.Pass, v.JournalDuplicates)
	}
}

// TestParseWorkersAndReplicaSteps: the workers section and the replica
// steps parse with their defaults, and mistakes name the field and what
// is allowed.
func TestParseWorkersAndReplicaSteps(t *testing.T) {
	withWorkers := strings.Replace(minimal, "steps:\n", "workers: {count: 2, ledger: postgres}\nsteps:\n  - kill_worker: {}\n  - add_worker: {}\n  - recreate_worker: {replica: worker-2}\n  - restart_broker: {}\n", 1)
	sc := mustParse(t, withWorkers)
	if w := sc.Workers; w == nil || w.Count != 2 || w.Ledger != "postgres" || w.QueueType != "classic" || !w.SAC() {
		t.Fatalf("workers = %+v; want 2 replicas, postgres, classic, single active consumer", sc.Workers)
	}
	if sc.Steps[0].KillWorker == nil || sc.Steps[1].AddWorker == nil || sc.Steps[2].RecreateWorker.Replica != "worker-2" || sc.Steps[3].RestartBroker == nil {
		t.Fatalf("steps = %+v", sc.Steps)
	}
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"bad ledger", strings.Replace(withWorkers, "ledger: postgres", "ledger: sqlite", 1), []string{"workers.ledger", "sqlite", "bbolt, postgres"}},
		{"bad queue type", strings.Replace(withWorkers, "ledger: postgres", "queue_type: stream", 1), []string{"workers.queue_type", "classic, quorum"}},
		{"too many", strings.Replace(withWorkers, "count: 2", "count: 9", 1), []string{"workers.count", "1..5"}},
		{"replica step without workers", strings.Replace(minimal, "steps:\n", "steps:\n  - kill_worker: {replica: active}\n", 1), []string{"steps[0].kill_worker", "needs a workers section"}},
		{"bad replica", strings.Replace(withWorkers, "replica: worker-2", "replica: pod-2", 1), []string{"steps[2].recreate_worker.replica", "active or a replica id"}},
		{"restart_worker with workers", strings.Replace(withWorkers, "  - restart_broker: {}\n", "  - restart_worker: {}\n", 1), []string{"restart_worker", "not with a workers section"}},
		{"negative duplicates", strings.Replace(minimal, "  outcomes:", "  duplicates: -1\n  outcomes:", 1), []string{"expect.duplicates", "want 0..1000"}},
		{"bad refkey prefix", strings.Replace(minimal, "steps:\n", "workload: {refkey_prefix: RL_}\nsteps:\n", 1), []string{"workload.refkey_prefix", "a-z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("Parse: no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestRetryGaps(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	rec := func(key string, o outcome.Outcome, start, end time.Duration) records.Record {
		return records.Record{RefKey: key, Outcome: o, Start: t0.Add(start), End: t0.Add(end)}
	}
	tests := []struct {
		name string
		recs []records.Record
		want string // "" = no failure
	}{
		{"retried after the delay", []records.Record{rec("a", outcome.NotSent, 0, time.Second), rec("a", outcome.Sent, 3*time.Second, 3100*time.Millisecond)}, ""},
		{"retried too early", []records.Record{rec("a", outcome.NotSent, 0, time.Second), rec("a", outcome.Sent, 1500*time.Millisecond, 2*time.Second)}, "a retried 500ms after NOT_SENT, want >= 2s"},
		{"End written after routing, inside the slack", []records.Record{rec("a", outcome.NotSent, 0, time.Second), rec("a", outcome.Sent, 2812*time.Millisecond, 3*time.Second)}, ""},
		{"early by more than the slack", []records.Record{rec("a", outcome.NotSent, 0, time.Second), rec("a", outcome.Sent, 2700*time.Millisecond, 3*time.Second)}, "a retried 1.7s after NOT_SENT, want >= 2s"},
		{"never retried", []records.Record{rec("a", outcome.Sent, 0, time.Second)}, "no NOT_SENT record was retried"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(retryGaps(tt.recs, 2*time.Second), "|")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("retryGaps = %q; want %q", got, tt.want)
			}
		})
	}
}

// TestCatalogNegativeControls: the catalog keeps its negative controls,
// each planting exactly one duplicate, and the scenarios of the deployment
// they contrast with; no other scenario expects a duplicate.
func TestCatalogNegativeControls(t *testing.T) {
	scs, err := LoadCatalog(filepath.Join("..", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	controls := map[string]bool{"no-sac-crash": true, "ledger-lost-bbolt": true, "stream-reset-h2-replay": true, "reports-incomplete-resend": true}
	want := []string{"no-sac-crash", "ledger-lost-bbolt", "sigkill-standby", "rolling-deploy", "ledger-lost-postgres",
		"broker-restart-quorum", "refkey-reused", "rate-limited-429", "stream-reset-h2-replay", "stream-reset-h2",
		"reports-incomplete-resend", "reports-past-horizon"}
	byName := map[string]*Scenario{}
	for _, sc := range scs {
		byName[sc.Name] = sc
	}
	for _, name := range want {
		if byName[name] == nil {
			t.Errorf("catalog lacks %s", name)
		}
	}
	for _, sc := range scs {
		switch {
		case controls[sc.Name] && sc.Expect.Duplicates != 1:
			t.Errorf("%s: expect.duplicates %d; a negative control plants exactly 1", sc.Name, sc.Expect.Duplicates)
		case !controls[sc.Name] && sc.Expect.Duplicates != 0:
			t.Errorf("%s: expect.duplicates %d; only the negative controls expect one", sc.Name, sc.Expect.Duplicates)
		}
	}
	if sc := byName["no-sac-crash"]; sc != nil && (sc.Workers == nil || sc.Workers.SAC() || sc.Workers.Count < 2 || sc.Workers.Ledger != "bbolt") {
		t.Errorf("no-sac-crash: workers %+v; want 2+ replicas on bbolt without single active consumer", sc.Workers)
	}
	// The HTTP/2 pair differ only in the unsafe switch: the guard is what
	// keeps stream-reset-h2 at 0.
	if a, b := byName["stream-reset-h2"], byName["stream-reset-h2-replay"]; a != nil && b != nil &&
		(a.Client.UnsafeAllowTransportReplay || !b.Client.UnsafeAllowTransportReplay || a.Server.StreamReset == nil ||
			b.Server.StreamReset == nil || *a.Server.StreamReset != *b.Server.StreamReset) {
		t.Errorf("stream-reset-h2 and its control: want the same stream_reset, the unsafe switch only on the control")
	}
	// The horizon pair: the same lost report, told complete (re-sent: the
	// planted duplicate) and not complete (left UNKNOWN, 0 duplicates).
	if a, b := byName["reports-past-horizon"], byName["reports-incomplete-resend"]; a != nil && b != nil &&
		(a.Server.Reports == nil || b.Server.Reports == nil || a.Server.Reports.Complete == nil || *a.Server.Reports.Complete ||
			b.Server.Reports.Complete == nil || !*b.Server.Reports.Complete || a.Server.Reports.DropEvery == 0 || b.Server.Reports.DropEvery == 0) {
		t.Errorf("reports-past-horizon and its control: want lost reports in both, complete false on the first, true on the control")
	}
	if sc := byName["sigkill-standby"]; sc != nil && (sc.Workers == nil || !sc.Workers.SAC() || sc.Workers.Ledger != "postgres") {
		t.Errorf("sigkill-standby: workers %+v; want single active consumer on the postgres ledger", sc.Workers)
	}
}
