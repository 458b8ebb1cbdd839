package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/fault"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// judged is a clean audit of a contract worker: two bench runs, the
// malformed scenario routing its three invalid messages to the
// dead-letter queue, and the idle race; tests plant one fault at a time.
func judged() Inputs {
	return Inputs{Worker: "java-shared", Profile: "alimtalk", KeepaliveS: 75,
		Bench: []results.Result{clientRun("java-shared", 3), clientRun("java-shared", 10)},
		Faults: []fault.Verdict{{Name: "malformed", Tool: "publisher", Pass: true,
			Observed: map[outcome.Outcome]int{outcome.Sent: 6, outcome.Invalid: 3},
			Reconcile: &reconcile.Report{OK: true, Published: 9, PublishedInvalid: 3, ClientReplayChecked: true,
				ByOutcome: map[outcome.Outcome]int{outcome.Sent: 6, outcome.Invalid: 3}}}},
		Race: &fault.IdleRaceResult{Scenario: RaceName, KeepaliveTimeoutMS: 75000, Pass: true,
			Rows: []fault.IdleRaceRow{{RTTMS: 3, Setting: "worker", Sends: 15}, {RTTMS: 10, Setting: "worker", Sends: 15}}}}
}

// negativeControl is a fault scenario that plants planted duplicates and
// in which the reconciler saw seen.
func negativeControl(name string, planted, seen int) fault.Verdict {
	return fault.Verdict{Name: name, Tool: "worker", Pass: planted == seen, Duplicates: seen, JournalDuplicates: seen,
		Expected: fault.Expected{Duplicates: planted}, Observed: map[outcome.Outcome]int{outcome.Sent: 2},
		Reconcile: &reconcile.Report{ClientReplayChecked: true}}
}

// lostFault is a fault scenario whose reconciler found refkey nowhere;
// journal is the trace of that refkey in the vendor's journal as the
// reconciler writes it ("no request", "1 request(s), statuses 200").
func lostFault(name, refkey, journal string) fault.Verdict {
	detail := "published 1 time(s), found nowhere; records: seq 3 DUPLICATE -> acked; 1 suppressed duplicate(s)"
	if journal != "" {
		detail += "; journal: " + journal
	}
	return fault.Verdict{Name: name, Tool: "broker", Lost: 1, Observed: map[outcome.Outcome]int{outcome.Sent: 1},
		Reconcile: &reconcile.Report{Lost: 1, LostIDs: []string{refkey}, ClientReplayChecked: true,
			Violations: []reconcile.Violation{{RefKey: refkey, Rule: reconcile.RuleLost, Detail: detail}}}}
}

// TestRulesJudgeWhatTheySay: each rule of issue 16 item 5 catches its
// planted fixture and says what it judged.
func TestRulesJudgeWhatTheySay(t *testing.T) {
	tests := []struct {
		name     string
		change   func(in *Inputs)
		id, want string
		evidence []string
		absent   []string
	}{
		// Duplicates beyond the negative controls.
		{"the negative controls' planted duplicates are expected", func(in *Inputs) {
			in.Faults = append(in.Faults, negativeControl("ledger-lost-bbolt", 1, 1), negativeControl("no-sac-crash", 1, 1))
		}, "duplicates", Pass,
			[]string{"0 outside the negative controls", "1 planted by ledger-lost-bbolt", "1 by no-sac-crash", "as expected"},
			[]string{"in all"}},
		{"planted: a negative control that caught nothing fails", func(in *Inputs) {
			in.Faults = append(in.Faults, negativeControl("no-sac-crash", 1, 0))
		}, "duplicates", Fail, []string{"no-sac-crash planted 1, the reconciler saw 0: the control caught nothing"}, nil},
		{"planted: a duplicate outside the negative controls fails", func(in *Inputs) {
			v := negativeControl("vendor-closes", 0, 1)
			v.Pass = false
			in.Faults = append(in.Faults, negativeControl("no-sac-crash", 1, 1), v)
		}, "duplicates", Fail, []string{"1 outside the negative controls", "fault vendor-closes: 1"}, nil},
		{"planted: a negative control's duplicate beyond its plant fails", func(in *Inputs) {
			in.Faults = append(in.Faults, negativeControl("no-sac-crash", 1, 2))
		}, "duplicates", Fail, []string{"1 outside the negative controls", "fault no-sac-crash: 1 beyond the 1 planted"}, nil},
		// A run the lab voided (the mock vendor late on its promise) counts
		// in no rule, and fails as its own fault, VOID; the same run not
		// void (the control) fails the duplicates rule.
		{"a void run's duplicates are not the worker's", func(in *Inputs) {
			v := negativeControl("reports-incomplete-resend", 1, 2)
			v.Void = "the mock vendor broke its promise: 1 report(s) first offered past the 4s horizon"
			in.Faults = append(in.Faults, v)
		}, "duplicates", Pass, []string{"0 outside the negative controls"}, []string{"reports-incomplete-resend"}},
		{"a void run fails as its own fault, VOID", func(in *Inputs) {
			v := negativeControl("reports-incomplete-resend", 1, 2)
			v.Void = "the mock vendor broke its promise: 1 report(s) first offered past the 4s horizon"
			in.Faults = append(in.Faults, v)
		}, "fault-reports-incomplete-resend", Fail, []string{"VOID, not judged: the mock vendor broke its promise"}, nil},
		{"control: the same run not void fails the duplicates rule", func(in *Inputs) {
			in.Faults = append(in.Faults, negativeControl("reports-incomplete-resend", 1, 2))
		}, "duplicates", Fail, []string{"fault reports-incomplete-resend: 1 beyond the 1 planted"}, nil},
		{"a bench duplicate fails", func(in *Inputs) { in.Bench[1].Reconcile.Duplicates = 1 }, "duplicates", Fail,
			[]string{"1 outside the negative controls", "bench 10 ms: 1"}, nil},

		// Lost, split by the vendor's journal.
		{"planted: the journal has it, the worker's records lost it", func(in *Inputs) {
			in.Faults = append(in.Faults, lostFault("broker-cut", "f-39b0-broker-cut-0002", "1 request(s), statuses 200"))
		}, "lost-records-missing", Fail, []string{"1 the vendor got", "broker-cut: f-39b0-broker-cut-0002 (journal: 1 request(s), statuses 200)"}, nil},
		{"the same loss is not one the vendor never got", func(in *Inputs) {
			in.Faults = append(in.Faults, lostFault("broker-cut", "f-39b0-broker-cut-0002", "1 request(s), statuses 200"))
		}, "lost-vendor-never-got", Pass, []string{"0 lost"}, nil},
		{"planted: no send in the journal: the vendor never got it", func(in *Inputs) {
			in.Faults = append(in.Faults, lostFault("broker-cut", "f-1-broker-cut-0001", "no request"))
		}, "lost-vendor-never-got", Fail, []string{"1 lost", "broker-cut: f-1-broker-cut-0001"}, nil},
		{"a loss the vendor never got is no records loss", func(in *Inputs) {
			in.Faults = append(in.Faults, lostFault("broker-cut", "f-1-broker-cut-0001", "no request"))
		}, "lost-records-missing", Pass, []string{"0 "}, nil},
		{"a loss without a journal trace fails both (not measured is never 0)", func(in *Inputs) {
			in.Faults = append(in.Faults, lostFault("broker-cut", "f-2-broker-cut-0001", ""))
		}, "lost-records-missing", Fail, []string{"1 not traced in the journal", "broker-cut: f-2-broker-cut-0001"}, nil},
		{"a bench loss counted without its violation is not traced", func(in *Inputs) { in.Bench[0].Reconcile.Lost = 1 }, "lost-vendor-never-got", Fail,
			[]string{"1 not traced in the journal", "bench 3 ms"}, nil},

		{"a fault's own row says which kind its loss is", func(in *Inputs) {
			in.Faults = append(in.Faults, lostFault("broker-cut", "f-39b0-broker-cut-0002", "1 request(s), statuses 200"))
		}, "fault-broker-cut", Fail, []string{"lost 1 (1 the worker's records miss, the journal has it)"}, nil},

		// Contract: malformed input is routed to the dead-letter queue.
		{"malformed input dead-lettered keeps the contract", func(*Inputs) {}, "contract", Pass,
			[]string{"malformed input routed: 3 invalid messages dead-lettered (fault malformed)"}, nil},
		{"planted: a worker that acks malformed messages as SENT breaks the contract", func(in *Inputs) {
			v := &in.Faults[0]
			v.Pass, v.Observed = false, map[outcome.Outcome]int{outcome.Sent: 9}
			v.Reconcile.ByOutcome = map[outcome.Outcome]int{outcome.Sent: 9}
			for _, k := range []string{"f-malformed-0002", "f-malformed-0005", "f-malformed-0008"} {
				v.Reconcile.Violations = append(v.Reconcile.Violations, reconcile.Violation{RefKey: k, Rule: reconcile.RuleInvalid,
					Detail: "invalid message acked as SENT (record seq 2), not dead-lettered"})
			}
		}, "contract", Fail, []string{"fault malformed: 3 of 3 invalid messages acked or misrouted", "f-malformed-0002: invalid message acked as SENT", "and 1 more"}, nil},
		{"the reference worker is judged on routing too", func(in *Inputs) {
			in.Worker = "go"
			in.Faults[0].Reconcile.Violations = []reconcile.Violation{{RefKey: "k", Rule: reconcile.RuleRoute, Detail: "record UNKNOWN in the failed queue"}}
		}, "contract", Fail, []string{"k: record UNKNOWN in the failed queue"}, nil},
		{"no malformed input published: routing untested, said so", func(in *Inputs) { in.Faults = nil }, "contract", Pass,
			[]string{"malformed input: not tested"}, nil},

		// No Go map syntax in evidence.
		{"a wait step's Go map is rewritten", func(in *Inputs) {
			in.Faults = append(in.Faults, fault.Verdict{Name: "sigterm-restart", Tool: "worker",
				Failures: []string{"steps[3]: wait timed out after 2m0s: want records>=0 outcomes>=map[SENT:200 UNKNOWN:1] journal>=0; have 200 records SENT 199, UNKNOWN 1"}})
		}, "fault-sigterm-restart", Fail, []string{"want records>=0, SENT>=200, UNKNOWN>=1, journal>=0; have"}, []string{"map["}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := judged()
			tt.change(&in)
			got := rule(t, Evaluate(in), tt.id)
			if got.Verdict != tt.want {
				t.Errorf("rule %s = %s %q; want %s", tt.id, got.Verdict, got.Evidence, tt.want)
			}
			for _, s := range tt.evidence {
				if !strings.Contains(got.Evidence, s) {
					t.Errorf("rule %s evidence %q lacks %q", tt.id, got.Evidence, s)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(got.Evidence, s) {
					t.Errorf("rule %s evidence %q contains %q", tt.id, got.Evidence, s)
				}
			}
		})
	}
	if rules := Evaluate(judged()); !Passed(rules) {
		t.Errorf("the clean inputs fail: %+v", rules)
	}
}

// TestFailuresFirst: the audit page opens with its failures, one line per
// failed rule with its evidence, before the rules table; a page with no
// failure says so in the same place.
func TestFailuresFirst(t *testing.T) {
	in := judged()
	in.Faults = append(in.Faults, lostFault("broker-cut", "f-39b0-broker-cut-0002", "1 request(s), statuses 200"))
	in.Bench[0].TCPConnections = 60
	rep := Report{Worker: in.Worker, Profile: in.Profile, Rules: Evaluate(in)}
	rep.Pass = Passed(rep.Rules)
	md := Markdown(rep)
	fails, table := strings.Index(md, "## Failures"), strings.Index(md, "## Rules")
	if fails < 0 || table < 0 || fails > table {
		t.Fatalf("audit.md: want ## Failures before ## Rules:\n%s", md)
	}
	block := md[fails:table]
	for _, want := range []string{
		"- Reuses its connection (connections per send): FAIL: one new connection per send at 3 ms: 60 connections for 60 sends",
		"- No sent notification missing from the worker's records",
		"- Fault broker-cut (broker): FAIL: ",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("failures block lacks %q:\n%s", want, block)
		}
	}
	if n := strings.Count(block, "\n- "); n != 3 {
		t.Errorf("failures block has %d lines; want 3 (one per failed rule):\n%s", n, block)
	}
	for _, line := range strings.Split(strings.TrimSpace(block), "\n")[1:] {
		if len(line) > 400 {
			t.Errorf("a failure line of %d characters is no one-liner: %q", len(line), line)
		}
	}
	clean := Report{Worker: "go", Profile: "alimtalk", Rules: []Rule{{ID: "tls-version", Name: "Negotiates TLS 1.3", Verdict: Pass}}, Pass: true}
	if md := Markdown(clean); !strings.Contains(md, "## Failures\n\nNone: every rule passed or does not apply.") {
		t.Errorf("a clean audit's failures block:\n%s", md)
	}
}

// TestContractRaceChartHasData: a contract worker's idle race has no idle
// timeout the lab knows (idle_conn_timeout_ms 0 in every row), so the
// idle race's chart (failures against the idle timeout, log scale) drew
// no point: the Node, Java and Python audits showed an empty chart. The
// audit draws its own, by RTT, with every lane's count.
func TestContractRaceChartHasData(t *testing.T) {
	dir := t.TempDir()
	in := judged()
	in.Race.Rows[1].Failures, in.Race.Rows[1].FailuresPer1000 = 1, 66.7
	if err := os.MkdirAll(filepath.Join(dir, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "charts", RaceName+".svg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fault.WriteIdleRaceChart(f, *in.Race); err != nil { // what the audit's run writes
		t.Fatal(err)
	}
	f.Close()
	rep, err := NewReport(dir, in, fixtureDate)
	if err != nil {
		t.Fatal(err)
	}
	var svg string
	for _, c := range rep.Charts {
		if c.File == "charts/"+RaceName+".svg" {
			svg = c.SVG
		}
	}
	for _, want := range []string{"RTT 3 ms", "RTT 10 ms", "0 of 15", "1 of 15", "java-shared"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the idle race chart lacks %q: it shows no data", want)
		}
	}
	if err := Write(dir, rep); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "charts", RaceName+".svg"))
	if err != nil || !strings.Contains(string(b), "1 of 15") {
		t.Errorf("charts/%s.svg (linked from audit.md) is not the chart with data: %v", RaceName, err)
	}
}
