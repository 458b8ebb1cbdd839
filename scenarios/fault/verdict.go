package fault

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// Check is one check_journal step's result.
type Check struct {
	Step int    `json:"step"` // index in steps
	What string `json:"what"`
	Want string `json:"want"`
	Got  int    `json:"got"`
	OK   bool   `json:"ok"`
}

// Expected is a scenario's Expect as written (counts as strings).
type Expected struct {
	Duplicates       int                       `json:"duplicates"`
	Lost             int                       `json:"lost,omitempty"`
	Outcomes         map[outcome.Outcome]Count `json:"outcomes"`
	Records          map[outcome.Outcome]Count `json:"records,omitempty"`
	Journal          *Count                    `json:"journal,omitempty"`
	JournalByOutcome map[outcome.Outcome]Count `json:"journal_by_outcome,omitempty"`
	WindowCutoff     string                    `json:"window_cutoff,omitempty"`
	UnknownLeft      *Count                    `json:"unknown_left,omitempty"`
	SettledBy        map[string]Count          `json:"settled_by,omitempty"`
}

// Verdict is the result of one fault scenario, one entry of
// results/faults.json. Pass is true when every expectation held, nothing
// was lost, nothing reached the vendor twice and the reconciler found no
// broken invariant.
type Verdict struct {
	Name     string   `json:"name"`
	Tool     string   `json:"tool"`  // what produced the fault
	Fault    string   `json:"fault"` // what goes wrong and what must follow
	Expected Expected `json:"expected"`
	// Observed counts where each published message ended (reconciler).
	Observed map[outcome.Outcome]int `json:"observed"`
	// Records counts the worker's records (attempts) by outcome.
	Records map[outcome.Outcome]int `json:"records"`
	// JournalCount is the POSTs of this scenario to the send path in
	// WireMock's journal (every status), counted after Expect.settle.
	JournalCount int `json:"journal_count"`
	// JournalByOutcome sums the journal sends of the messages that ended
	// in each outcome.
	JournalByOutcome map[outcome.Outcome]int `json:"journal_by_outcome"`
	// Duplicates counts refkeys the reconciler found reaching the vendor
	// more than once without a 4xx answer; JournalDuplicates counts the
	// same straight from WireMock's journal. Both must equal
	// Expected.Duplicates.
	Duplicates        int `json:"duplicates"`
	JournalDuplicates int `json:"journal_duplicates"`
	Lost              int `json:"lost"`
	// DeadLetteredUnsent counts those of Lost found in the dead-letter
	// queue with send attempts left and nothing sent
	// (reconcile.Report.DeadLetteredUnsent): lost, not DEAD.
	DeadLetteredUnsent int `json:"dead_lettered_unsent,omitempty"`
	// Suppressed counts redeliveries the worker acked as DUPLICATE
	// without sending.
	Suppressed int      `json:"suppressed"`
	Checks     []Check  `json:"checks,omitempty"`
	Failures   []string `json:"failures,omitempty"`
	Pass       bool     `json:"pass"`
	// Void is why the run judged nothing because the lab broke the
	// scenario's premise (the mock vendor late on the promise the worker
	// was told, brokenPromise); "" for a run that judged the worker. A
	// void run does not pass.
	Void      string  `json:"void,omitempty"`
	DurationS float64 `json:"duration_s"`
	// UnknownLeft counts the messages left UNKNOWN for an operator at the
	// end: refkeys UNKNOWN in the ledger or with a copy in <main>.unknown.
	UnknownLeft int `json:"unknown_left"`
	// SettledBy counts the ledger's settlements by source (report, pull,
	// horizon, operator); TimeToSettle is the time to settle of those by
	// report or pull (nil when none).
	SettledBy    map[string]int `json:"settled_by,omitempty"`
	TimeToSettle *SettleTimes   `json:"time_to_settle,omitempty"`
	// Reports is what the mock vendor's report relay did (server.reports).
	Reports *vendormock.ReportRelayStats `json:"reports,omitempty"`
	// LastSent is the worker's clock (its window zone, "15:04:05.000")
	// at the last SENT record, when expect.window_cutoff is set: when a
	// bulk run finished sending; "" when nothing was SENT.
	LastSent string `json:"last_sent,omitempty"`
	// Reconcile is the reconciler's full report.
	Reconcile *reconcile.Report `json:"reconcile,omitempty"`
}

// Line is a one-line summary.
func (v Verdict) Line() string {
	word := okWord(v.Pass)
	if v.Void != "" {
		word = "VOID"
	}
	s := fmt.Sprintf("%s: observed %s, journal %d, duplicates %d, lost %d", word, formatCounts(v.Observed), v.JournalCount, v.Duplicates, v.Lost)
	if v.DeadLetteredUnsent > 0 {
		s += fmt.Sprintf(" (%d dead-lettered unsent)", v.DeadLetteredUnsent)
	}
	if v.LastSent != "" {
		s += ", last SENT at " + v.LastSent + " (worker clock)"
	}
	if len(v.Failures) > 0 {
		s += "; " + strings.Join(v.Failures, "; ")
	}
	return s
}

// evaluate compares what was observed with sc.Expect.
func evaluate(sc *Scenario, rep *reconcile.Report, recs []records.Record, journal []vendormock.JournalEntry, checks []Check, stepErr error) Verdict {
	e := sc.Expect
	v := Verdict{
		Name: sc.Name, Tool: sc.Tool, Fault: strings.TrimSpace(sc.Fault),
		Expected: Expected{Duplicates: e.Duplicates, Lost: e.Lost, Outcomes: e.Outcomes, Records: e.Records, Journal: e.Journal, JournalByOutcome: e.JournalByOutcome, WindowCutoff: e.WindowCutoff},
		Observed: map[outcome.Outcome]int{}, Records: map[outcome.Outcome]int{}, JournalByOutcome: map[outcome.Outcome]int{},
		JournalCount: len(journal), Checks: checks, Reconcile: rep,
	}
	fail := func(format string, args ...any) { v.Failures = append(v.Failures, fmt.Sprintf(format, args...)) }
	if stepErr != nil {
		fail("%v", stepErr)
	}
	if rep != nil {
		maps.Copy(v.Observed, rep.ByOutcome)
		v.Duplicates, v.Lost, v.Suppressed = rep.Duplicates, rep.Lost, rep.Suppressed
		v.DeadLetteredUnsent = rep.DeadLetteredUnsent
		if others := OtherViolations(rep, e.Duplicates, e.Lost); !rep.OK && (len(others) > 0 || len(rep.Violations) == 0) {
			var vs []string
			for i, x := range others {
				if i == 3 {
					vs = append(vs, fmt.Sprintf("and %d more", len(others)-3))
					break
				}
				vs = append(vs, x.Rule+" "+x.RefKey+": "+x.Detail)
			}
			if len(rep.Violations) == 0 {
				vs = append(vs, "no check ran")
			}
			fail("reconciler: %s", strings.Join(vs, "; "))
		}
	}
	v.JournalDuplicates = JournalDuplicates(journal)
	if v.Duplicates != e.Duplicates {
		fail("reconciler: %d refkeys reached the vendor more than once, want %d", v.Duplicates, e.Duplicates)
	}
	if v.JournalDuplicates != e.Duplicates {
		fail("journal: %d refkeys sent more than once (no 4xx answer), want %d", v.JournalDuplicates, e.Duplicates)
	}
	if v.Lost != e.Lost {
		what := ""
		if rep != nil && rep.DeadLetteredUnsent > 0 {
			// In the dead-letter queue with attempts left, never sent:
			// lost all the same (docs/outcomes.md#dead-lettered-unsent).
			what = fmt.Sprintf(" (%d dead-lettered unsent: %s)", rep.DeadLetteredUnsent, strings.Join(rep.DeadLetteredUnsentIDs, ", "))
		}
		fail("%d messages lost%s, want %d", v.Lost, what, e.Lost)
	}
	final := map[string]outcome.Outcome{} // refkey -> last outcome that is not DUPLICATE
	for _, r := range recs {
		v.Records[r.Outcome]++
		if r.Outcome != outcome.Duplicate && r.RefKey != "" {
			final[r.RefKey] = r.Outcome
		}
	}
	perKey := map[string]int{}
	for _, j := range journal {
		perKey[j.RefKey]++
	}
	for k, n := range perKey {
		v.JournalByOutcome[cmp.Or(final[k], outcome.Pending)] += n
	}
	for _, k := range sortedKeys(e.Outcomes) {
		if got := v.Observed[k]; !e.Outcomes[k].Match(got) {
			fail("%s: %d, want %s", k, got, e.Outcomes[k])
		}
	}
	for k, n := range v.Observed {
		if _, ok := e.Outcomes[k]; !ok && n > 0 {
			fail("%s: %d, want none", k, n)
		}
	}
	for _, k := range sortedKeys(e.Records) {
		if got := v.Records[k]; !e.Records[k].Match(got) {
			fail("records %s: %d, want %s", k, got, e.Records[k])
		}
	}
	if e.Journal != nil && !e.Journal.Match(v.JournalCount) {
		fail("journal: %d, want %s", v.JournalCount, *e.Journal)
	}
	for _, k := range sortedKeys(e.JournalByOutcome) {
		if got := v.JournalByOutcome[k]; !e.JournalByOutcome[k].Match(got) {
			fail("journal of %s messages: %d, want %s", k, got, e.JournalByOutcome[k])
		}
	}
	for _, c := range checks {
		if !c.OK {
			fail("steps[%d] %s: %d, want %s", c.Step, c.What, c.Got, c.Want)
		}
	}
	if e.WindowCutoff != "" {
		for _, msg := range windowViolations(recs, e.WindowCutoff) {
			fail("%s", msg)
		}
		v.LastSent = lastSent(recs)
	}
	if d := e.RetryAfter.D(); d > 0 {
		for _, msg := range retryGaps(recs, d) {
			fail("%s", msg)
		}
	}
	if e.Reasons {
		for _, r := range recs {
			switch r.Outcome {
			case outcome.Invalid, outcome.Rejected, outcome.NotSent, outcome.Unknown:
				if strings.TrimSpace(r.Error) == "" && r.Code == "" {
					fail("record %d (%s) carries no reason", r.Seq, r.Outcome)
				}
			}
		}
	}
	v.Pass = len(v.Failures) == 0
	return v
}

// JournalDuplicates counts the refkeys that reached the vendor more than
// once without a 4xx answer, straight from the journal's entries (a 4xx,
// such as a 401 before a token refetch or a 429, was not processed by the
// vendor: docs/vendor-api.md).
func JournalDuplicates(journal []vendormock.JournalEntry) int {
	reached := map[string]int{}
	for _, j := range journal {
		if j.Status < 400 || j.Status > 499 {
			reached[j.RefKey]++
		}
	}
	n := 0
	for _, c := range reached {
		if c > 1 {
			n++
		}
	}
	return n
}

// OtherViolations returns the reconciler's violations besides the
// duplicates and losses a scenario expects: every violation when both
// wants are 0; with wantDuplicates above 0 all but those of rule
// reconcile.RuleDuplicate and those of rule reconcile.RuleAttempts on a
// refkey among the duplicates (a transport replay, stream-reset-h2-replay,
// reaches the vendor twice within one ledger attempt: the same planted
// duplicate seen by a second rule); with wantLost above 0 all but those of
// rule reconcile.RuleLost (their numbers are checked against the wants on
// their own).
func OtherViolations(rep *reconcile.Report, wantDuplicates, wantLost int) []reconcile.Violation {
	if wantDuplicates == 0 && wantLost == 0 {
		return rep.Violations
	}
	var out []reconcile.Violation
	for _, x := range rep.Violations {
		planted := wantDuplicates > 0 && (x.Rule == reconcile.RuleDuplicate ||
			(x.Rule == reconcile.RuleAttempts && slices.Contains(rep.DuplicateRefKeys, x.RefKey)))
		if planted || (wantLost > 0 && x.Rule == reconcile.RuleLost) {
			continue
		}
		out = append(out, x)
	}
	return out
}

// formatCounts writes {"SENT": 3, "UNKNOWN": 1} as "SENT 3, UNKNOWN 1",
// in Outcomes order; "none" when empty.
func formatCounts(m map[outcome.Outcome]int) string {
	var parts []string
	for _, k := range orderedOutcomes(m) {
		if m[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func formatExpected(m map[outcome.Outcome]Count) string {
	var parts []string
	for _, k := range orderedOutcomes(m) {
		parts = append(parts, string(k)+" "+m[k].String())
	}
	return strings.Join(parts, ", ")
}

// orderedOutcomes returns m's keys in outcome.Reconciled order, unknown
// names last, sorted.
func orderedOutcomes[V any](m map[outcome.Outcome]V) []outcome.Outcome {
	var out []outcome.Outcome
	for _, k := range outcome.Reconciled {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	var rest []outcome.Outcome
	for k := range m {
		if !slices.Contains(outcome.Reconciled, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// verdictWord is v's word in the faults table: VOID for a run the lab
// broke (Verdict.Void), else passWord.
func verdictWord(v Verdict) string {
	if v.Void != "" {
		return "VOID"
	}
	return passWord(v.Pass)
}

func passWord(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}
