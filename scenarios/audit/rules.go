package audit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/fault"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// Verdict words of a rule.
const (
	Pass = "PASS"
	Fail = "FAIL"
	NA   = "N/A" // the rule does not apply (a scenario not applicable, a figure not run)
)

// Rule is one line of the audit: what is checked, the verdict, the
// evidence (figures with their units) and where the evidence comes from.
type Rule struct {
	ID       string `json:"id"`       // short stable name, e.g. "connections-per-send"
	Name     string `json:"name"`     // the rule in words
	Verdict  string `json:"verdict"`  // Pass, Fail or NA
	Evidence string `json:"evidence"` // the figures that decided it
	Source   string `json:"source"`   // where they come from
	// Summary is the evidence in one line (counts, scenario names) for
	// the failures block; "" when Evidence is short enough (Rule.summary).
	Summary string `json:"summary,omitempty"`
}

// Inputs are the result files of one audit: the bench runs
// (bench-*.json), the fault verdicts (faults.json), the scenarios left
// out, and the idle race.
type Inputs struct {
	Worker  string // WORKER value audited
	Profile string // the profile's name
	// Dir is the audit folder the files were read from (Load): the bench
	// runs' nginx log slices are read from it; "" = not read (shown "not
	// seen").
	Dir           string
	KeepaliveS    float64
	Bench         []results.Result
	Faults        []fault.Verdict
	NotApplicable []fault.NotApplicable
	Race          *fault.IdleRaceResult
	// Probes is what the probes measured (probes.json); nil when the
	// audit ran without them (folders written before they existed).
	Probes *Probes
	// Errors are steps of the battery that failed to run (a bench that
	// could not finish, a stack that did not start), one sentence each.
	Errors []string
}

// ConnectionsPerSendMax is the most connections per send a client that
// reuses its connection may open in the bench (no idle pause there: one
// or two connections for a few hundred sends; docs/case.md#production-worker).
const ConnectionsPerSendMax = 0.05

// OneConnectionPerSend is the ratio from which the audit says "one new
// connection per send": the case's per-request engine
// (docs/case.md#published-table: 1,050 connections for 1,050 sends).
const OneConnectionPerSend = 0.9

// workerRuns returns the bench runs of the worker under test (not the Go
// baseline beside a contract worker).
func (in Inputs) workerRuns() []results.Result {
	var out []results.Result
	for _, r := range in.Bench {
		if r.Worker == in.Worker || (r.Worker == "" && in.Worker == vendormock.WorkerGo) {
			out = append(out, r)
		}
	}
	return out
}

// Evaluate returns the audit's rules, in report order.
func Evaluate(in Inputs) []Rule {
	all := in.Faults
	in = withoutVoid(in)
	runs := in.workerRuns()
	var rules []Rule
	add := func(r Rule) { rules = append(rules, r) }
	for _, e := range in.Errors {
		add(Rule{ID: "battery", Name: "The battery ran", Verdict: Fail, Evidence: e, Source: "lab"})
	}
	add(contractRule(in, runs))
	add(connectionsRule(runs))
	add(tlsRule(runs))
	add(idleRule(in, runs))
	add(burstRule(in.Probes))
	add(replayRule(in, runs))
	add(clientReplayRule(in, runs))
	add(poolStallRule(runs))
	add(selfReportRule(in, runs))
	add(duplicatesRule(in, runs))
	never, records := lostRules(in, runs)
	add(never)
	add(records)
	for _, v := range all {
		add(faultRule(v))
	}
	for _, n := range in.NotApplicable {
		add(Rule{ID: "fault-" + n.Name, Name: "Fault " + n.Name, Verdict: NA, Evidence: "not applicable: " + n.Reason, Source: "scenarios/catalog"})
	}
	return rules
}

func connectionsRule(runs []results.Result) Rule {
	r := Rule{ID: "connections-per-send", Name: "Reuses its connection (connections per send)", Source: "nginx access log ($connection)"}
	if len(runs) == 0 {
		r.Verdict, r.Evidence = NA, "no bench run"
		return r
	}
	r.Verdict = Pass
	var ev []string
	for _, run := range runs {
		if run.SendRequests == 0 {
			r.Verdict = Fail
			ev = append(ev, fmt.Sprintf("%d ms: no send reached nginx", run.RTTMS))
			continue
		}
		ratio := float64(run.TCPConnections) / float64(run.SendRequests)
		line := fmt.Sprintf("%d ms: %d connections for %d sends (%.3f per send)", run.RTTMS, run.TCPConnections, run.SendRequests, ratio)
		switch {
		case ratio >= OneConnectionPerSend:
			r.Verdict = Fail
			line = fmt.Sprintf("one new connection per send at %d ms: %d connections for %d sends (%.2f per send)", run.RTTMS, run.TCPConnections, run.SendRequests, ratio)
		case ratio > ConnectionsPerSendMax:
			r.Verdict = Fail
			line += fmt.Sprintf(", above %.2f", ConnectionsPerSendMax)
		}
		ev = append(ev, line)
	}
	r.Evidence = strings.Join(ev, "; ")
	return r
}

func tlsRule(runs []results.Result) Rule {
	r := Rule{ID: "tls-version", Name: "Negotiates TLS 1.3", Source: "nginx access log ($ssl_protocol)"}
	if len(runs) == 0 {
		r.Verdict, r.Evidence = NA, "no bench run"
		return r
	}
	total := map[string]int{}
	for _, run := range runs {
		for v, n := range run.TLSVersions {
			total[v] += n
		}
	}
	r.Verdict = Pass
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(total)) {
		parts = append(parts, fmt.Sprintf("%s %d", v, total[v]))
		if v != "TLSv1.3" && total[v] > 0 {
			r.Verdict = Fail
		}
	}
	if len(parts) == 0 {
		r.Verdict = Fail
		parts = []string{"no send seen"}
	}
	r.Evidence = "sends by TLS version: " + strings.Join(parts, ", ")
	return r
}

func replayRule(in Inputs, runs []results.Result) Rule {
	r := Rule{ID: "post-never-replayed", Name: "A POST is never replayed (no refkey twice in the journal without a 4xx)", Source: "WireMock journal"}
	total, unreconciled, parts := 0, 0, []string{}
	for _, run := range runs {
		if run.Reconcile == nil {
			// Not measured is not 0 repeated (issue 14's surviving mutant).
			unreconciled++
			parts = append(parts, fmt.Sprintf("bench %d ms: not reconciled (%d sends in the journal)", run.RTTMS, run.JournalCount))
			continue
		}
		total += run.Reconcile.Duplicates
		parts = append(parts, fmt.Sprintf("bench %d ms: %d of %d sends repeated", run.RTTMS, run.Reconcile.Duplicates, run.JournalCount))
	}
	jd := 0
	for _, v := range in.Faults {
		jd += max(v.JournalDuplicates-v.Expected.Duplicates, 0)
	}
	total += jd
	if len(in.Faults) > 0 {
		parts = append(parts, fmt.Sprintf("faults: %d refkeys repeated beyond the negative controls'", jd))
	}
	if len(parts) == 0 {
		r.Verdict, r.Evidence = NA, "nothing ran"
		return r
	}
	r.Verdict = Pass
	if total > 0 || unreconciled > 0 {
		r.Verdict = Fail
	}
	r.Evidence = strings.Join(parts, "; ")
	return r
}

// faultRule is a fault scenario's verdict as a rule: what was observed,
// the journal, duplicates and lost (marked when the scenario is a
// negative control), and each failed expectation, with no Go map syntax
// (plainCounts); its one-line summary keeps the counts and the first
// failures' headlines.
func faultRule(v fault.Verdict) Rule {
	if v.Void != "" {
		return Rule{ID: "fault-" + v.Name, Name: "Fault " + v.Name + " (" + v.Tool + ")", Verdict: Fail,
			Evidence: "VOID, not judged: " + v.Void, Summary: "VOID, the lab's doing (run it again): the mock vendor was late on its promise",
			Source: batterySource}
	}
	verdict := Fail
	if v.Pass {
		verdict = Pass
	}
	counts := fmt.Sprintf("observed %s; journal %d; duplicates %d; %s%s", formatOutcomes(v.Observed), v.JournalCount, v.Duplicates, lostKinds(v), plantedNote(v))
	ev, summary := counts+measuredNote(v), counts
	var heads []string
	for _, f := range v.Failures {
		f = plainCounts(f)
		ev += "; " + f
		heads = append(heads, firstClause(f))
	}
	if len(heads) > 3 {
		heads = append(heads[:3], fmt.Sprintf("%d more", len(heads)-3))
	}
	if len(heads) > 0 {
		summary += "; failed: " + strings.Join(heads, "; ")
	}
	return Rule{ID: "fault-" + v.Name, Name: "Fault " + v.Name + " (" + v.Tool + ")", Verdict: verdict, Evidence: ev, Summary: summary,
		Source: batterySource}
}

// withoutVoid is in without the fault runs the lab voided
// (fault.Verdict.Void): what they counted says nothing about the worker,
// so no rule counts it; each still fails as its own fault rule, VOID, so
// the audit cannot pass without it.
func withoutVoid(in Inputs) Inputs {
	in.Faults = slices.DeleteFunc(slices.Clone(in.Faults), func(v fault.Verdict) bool { return v.Void != "" })
	return in
}

// measuredNote is what a fault scenario measured beyond where each
// message ended: the worker's records by outcome when they count more
// than the messages (attempts: a NOT_SENT before its SENT is a retry),
// and each check a step made during the run (the journal during a
// stall): "; records (attempts) NOT_SENT 5, SENT 3; steps[2] journal
// sends so far 0 (want 0)".
func measuredNote(v fault.Verdict) string {
	var b strings.Builder
	if len(v.Records) > 0 && !maps.Equal(v.Records, v.Observed) {
		fmt.Fprintf(&b, "; records (attempts) %s", formatOutcomes(v.Records))
	}
	for _, c := range v.Checks {
		fmt.Fprintf(&b, "; steps[%d] %s %d (want %s)", c.Step, c.What, c.Got, c.Want)
	}
	return b.String()
}

// formatOutcomes renders outcome counts in outcome.All order: "SENT 2, UNKNOWN 1".
func formatOutcomes(m map[outcome.Outcome]int) string {
	var parts []string
	for _, o := range outcome.All {
		if m[o] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", o, m[o]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Passed reports whether no rule failed.
func Passed(rules []Rule) bool {
	return !slices.ContainsFunc(rules, func(r Rule) bool { return r.Verdict == Fail })
}
