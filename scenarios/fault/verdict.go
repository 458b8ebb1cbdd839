package fault

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
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
	// Suppressed counts redeliveries the worker acked as DUPLICATE
	// without sending.
	Suppressed int      `json:"suppressed"`
	Checks     []Check  `json:"checks,omitempty"`
	Failures   []string `json:"failures,omitempty"`
	Pass       bool     `json:"pass"`
	DurationS  float64  `json:"duration_s"`
	// LastSent is the worker's clock (its window zone, "15:04:05.000")
	// at the last SENT record, when expect.window_cutoff is set: when a
	// bulk run finished sending; "" when nothing was SENT.
	LastSent string `json:"last_sent,omitempty"`
	// Reconcile is the reconciler's full report.
	Reconcile *reconcile.Report `json:"reconcile,omitempty"`
}

// Line is a one-line summary.
func (v Verdict) Line() string {
	s := fmt.Sprintf("%s: observed %s, journal %d, duplicates %d, lost %d", okWord(v.Pass), formatCounts(v.Observed), v.JournalCount, v.Duplicates, v.Lost)
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
		fail("%d messages lost, want %d", v.Lost, e.Lost)
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

// FaultsFile is the content of results/faults.json.
type FaultsFile struct {
	Date   string    `json:"date"`
	Faults []Verdict `json:"faults"`
	// Pass is true when every fault passed.
	Pass bool `json:"pass"`
	// Provenance is the last writing run's commit, command line, machine,
	// images and date; nil in files written before it existed.
	Provenance *results.Provenance `json:"provenance,omitempty"`
}

// WriteFaults writes OUT/faults.json and OUT/faults.md, appends (or
// replaces) a faults section in OUT/summary.md that links to them, and
// prints the table to w. Faults of earlier runs with other names stay in
// faults.json (a scenario run alone replaces its own entry only). prov
// (nil for none) is recorded in faults.json as the writing run's.
func WriteFaults(out string, vs []Verdict, prov *results.Provenance, w io.Writer) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create results dir: %w", err)
	}
	path := filepath.Join(out, "faults.json")
	merged := mergeVerdicts(path, vs)
	f := FaultsFile{Date: time.Now().UTC().Format(time.RFC3339), Faults: merged, Pass: true, Provenance: prov}
	for _, v := range merged {
		f.Pass = f.Pass && v.Pass
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode faults: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write faults: %w", err)
	}
	var md strings.Builder
	md.WriteString("# Fault scenarios\n\nEach fault of `scenarios/catalog/` run through the real RabbitMQ, Toxiproxy, nginx and WireMock, then reconciled (`./run.sh SCENARIO=all`). Observed: where each published message ended; journal: POSTs that reached WireMock.\n\n")
	if err := WriteFaultsTable(&md, merged, true); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "faults.md"), []byte(md.String()), 0o644); err != nil {
		return fmt.Errorf("write faults.md: %w", err)
	}
	if err := appendSection(filepath.Join(out, "summary.md"), "faults", faultsSection(merged)); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return WriteFaultsTable(w, vs, false)
}

// mergeVerdicts keeps earlier verdicts of other scenarios from path.
func mergeVerdicts(path string, vs []Verdict) []Verdict {
	var old FaultsFile
	if b, err := os.ReadFile(path); err == nil {
		if json.Unmarshal(b, &old) != nil {
			old = FaultsFile{} // unreadable: start afresh rather than keep half of it
		}
	}
	seen := map[string]bool{}
	for _, v := range vs {
		seen[v.Name] = true
	}
	var out []Verdict
	for _, v := range old.Faults {
		if !seen[v.Name] {
			out = append(out, v)
		}
	}
	out = append(out, vs...)
	slices.SortStableFunc(out, func(a, b Verdict) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// WriteFaultsTable writes one row per fault: as a Markdown table when md,
// else aligned text.
func WriteFaultsTable(w io.Writer, vs []Verdict, md bool) error {
	head := []string{"fault", "tool", "expected", "observed", "journal", "checks", "dup", "lost", "pass"}
	rows := [][]string{}
	for _, v := range vs {
		exp := formatExpected(v.Expected.Outcomes)
		if v.Expected.Journal != nil {
			exp += ", journal " + v.Expected.Journal.String()
		}
		if v.Expected.Duplicates > 0 {
			exp += fmt.Sprintf(", duplicates %d (planted)", v.Expected.Duplicates)
		}
		checks := "-"
		var cs []string
		for _, c := range v.Checks {
			cs = append(cs, fmt.Sprintf("journal %d at step %d (want %s)", c.Got, c.Step, c.Want))
		}
		if len(cs) > 0 {
			checks = strings.Join(cs, "; ")
		}
		rows = append(rows, []string{v.Name, v.Tool, exp, formatCounts(v.Observed), fmt.Sprint(v.JournalCount), checks,
			fmt.Sprint(v.Duplicates), fmt.Sprint(v.Lost), passWord(v.Pass)})
	}
	if md {
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		for _, v := range vs {
			if !v.Pass {
				fmt.Fprintf(w, "\n%s failed: %s\n", v.Name, strings.Join(v.Failures, "; "))
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	pass := 0
	for _, v := range vs {
		if v.Pass {
			pass++
		} else {
			fmt.Fprintf(w, "%s failed: %s\n", v.Name, strings.Join(v.Failures, "; "))
		}
	}
	_, err := fmt.Fprintf(w, "%d of %d faults passed\n", pass, len(vs))
	return err
}

func faultsSection(vs []Verdict) string {
	pass, dup, lost := 0, 0, 0
	for _, v := range vs {
		if v.Pass {
			pass++
		}
		dup += v.Duplicates
		lost += v.Lost
	}
	return fmt.Sprintf("## Fault scenarios\n\n%d of %d faults passed; %d duplicates and %d lost across all of them. Per fault: [faults.md](faults.md), data: [faults.json](faults.json).\n", pass, len(vs), dup, lost)
}

// appendSection replaces the section between "<!-- name:begin -->" and
// "<!-- name:end -->" in path (creating the file or appending the section
// when absent), leaving the rest of the file as it was.
func appendSection(path, name, body string) error {
	begin, end := "<!-- "+name+":begin -->", "<!-- "+name+":end -->"
	block := begin + "\n" + strings.TrimRight(body, "\n") + "\n" + end + "\n"
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	s := string(old)
	if i := strings.Index(s, begin); i >= 0 {
		if j := strings.Index(s[i:], end); j >= 0 {
			s = s[:i] + block + strings.TrimPrefix(s[i+j+len(end):], "\n")
		}
	} else {
		if s != "" && !strings.HasSuffix(s, "\n\n") {
			s = strings.TrimRight(s, "\n") + "\n\n"
		}
		s += block
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
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

func passWord(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}
