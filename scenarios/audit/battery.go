package audit

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/fault"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// batterySource is where the duplicates and lost rules read their counts.
const batterySource = "queues + records (reconciler), WireMock journal"

// checked names what the battery counted over: "bench 3 ms, bench 10 ms,
// 14 faults, idle race".
func checked(in Inputs, runs []results.Result) string {
	var parts []string
	for _, run := range runs {
		parts = append(parts, fmt.Sprintf("bench %d ms", run.RTTMS))
	}
	if len(in.Faults) > 0 {
		parts = append(parts, fmt.Sprintf("%d faults", len(in.Faults)))
	}
	if in.Race != nil {
		parts = append(parts, "idle race")
	}
	return strings.Join(parts, ", ")
}

// duplicatesRule: no refkey reaches the vendor twice without a 4xx
// (reconciler) beyond the duplicates a negative control plants on purpose
// (fault.Expect.Duplicates, scenarios/catalog/README.md). A control that
// shows fewer than it planted caught nothing and fails the rule; a bench
// run without a reconciler verdict is not measured and fails it too.
// Evidence: the count outside the controls and where, then each control
// with what it planted.
func duplicatesRule(in Inputs, runs []results.Result) Rule {
	r := Rule{ID: "duplicates", Name: "No notification sent twice", Source: batterySource}
	if len(runs) == 0 && len(in.Faults) == 0 && in.Race == nil {
		r.Verdict, r.Evidence = NA, "nothing ran"
		return r
	}
	beyond := 0
	var where, planted, missed, notMeasured []string
	for _, run := range runs {
		if run.Reconcile == nil {
			notMeasured = append(notMeasured, fmt.Sprintf("bench %d ms: not reconciled", run.RTTMS))
			continue
		}
		if n := run.Reconcile.Duplicates; n > 0 {
			beyond += n
			line := fmt.Sprintf("bench %d ms: %d", run.RTTMS, n)
			if keys := run.Reconcile.DuplicateRefKeys; len(keys) > 0 {
				line += " (" + firstKeys(keys) + ")"
			}
			where = append(where, line)
		}
	}
	var unreconciled []string
	for _, v := range in.Faults {
		p, seen := v.Expected.Duplicates, v.Duplicates
		if v.Reconcile == nil {
			unreconciled = append(unreconciled, v.Name)
		}
		_, over := againstPlanted(seen, p)
		switch {
		case p > 0 && seen < p:
			missed = append(missed, fmt.Sprintf("%s planted %d, the reconciler saw %d: the control caught nothing", v.Name, p, seen))
		case p > 0 && over > 0:
			beyond += over
			where = append(where, fmt.Sprintf("fault %s: %d beyond the %d planted", v.Name, over, p))
		case p > 0:
			if len(planted) == 0 {
				planted = append(planted, fmt.Sprintf("%d planted by %s", p, v.Name))
			} else {
				planted = append(planted, fmt.Sprintf("%d by %s", p, v.Name))
			}
		case seen > 0:
			beyond += seen
			where = append(where, fmt.Sprintf("fault %s: %d", v.Name, seen))
		}
	}
	if in.Race != nil {
		n := 0
		for _, row := range in.Race.Rows {
			n += row.Duplicates
		}
		if n > 0 {
			beyond += n
			where = append(where, fmt.Sprintf("idle race: %d", n))
		}
	}
	head := fmt.Sprintf("%d outside the negative controls", beyond)
	if len(planted) > 0 {
		head += " (" + strings.Join(planted, ", ") + ", as expected)"
	} else if len(missed) == 0 {
		head += " (no negative control in this battery)"
	}
	r.Verdict = Pass
	if beyond > 0 || len(missed) > 0 || len(notMeasured) > 0 {
		r.Verdict = Fail
	}
	fails := append(append(append([]string{}, where...), missed...), notMeasured...)
	if len(fails) > 0 {
		head += ": " + strings.Join(fails, "; ")
	}
	r.Summary = head
	r.Evidence = head + "; counted over " + checked(in, runs)
	if len(unreconciled) > 0 {
		r.Evidence += "; " + unreconciledNote(unreconciled)
	}
	return r
}

// lostJournalRE is the journal's part of a lost message's trace as the
// reconciler writes it (reconcile.Report.Violations, rule "lost":
// "...; journal: 1 request(s), statuses 200" or "...; journal: no request").
var lostJournalRE = regexp.MustCompile(`; journal: (no request|\d+ request\(s\)[^;]*)`)

// lostSplit is a run's lost messages by what the vendor's journal says of
// them; each entry names the message ("f-1-broker-cut-0002", "msgid:7").
type lostSplit struct {
	neverGot []string // no send in the journal: the vendor never got it
	got      []string // the journal has a send: the worker's records lost it
	untraced []string // the journal was not read, the message had no refkey, or no trace was kept
}

// splitLost sorts rep's lost messages. The reconciler counts lost
// messages (Report.Lost) without saying whether the vendor got them; its
// per-message violation (rule "lost") carries the message's trace, whose
// journal part decides: "journal: no request" = the vendor never got it,
// "journal: N request(s), statuses ..." = the vendor got it and the
// worker's records and queues lost it. A lost message whose trace has no
// journal part (journal not read, no refkey), or a count without its
// violation, is untraced: never read as either. label prefixes each name.
func splitLost(rep *reconcile.Report, label string) lostSplit {
	var s lostSplit
	traced := 0
	for _, v := range rep.Violations {
		if v.Rule != reconcile.RuleLost {
			continue
		}
		traced++
		id := v.RefKey
		if id == "" {
			id = "msgid:" + v.MessageID
		}
		m := lostJournalRE.FindStringSubmatch(v.Detail)
		switch {
		case m == nil:
			s.untraced = append(s.untraced, label+id)
		case m[1] == "no request":
			s.neverGot = append(s.neverGot, label+id)
		default:
			s.got = append(s.got, fmt.Sprintf("%s%s (journal: %s)", label, id, m[1]))
		}
	}
	for i := traced; i < rep.Lost; i++ {
		s.untraced = append(s.untraced, strings.TrimSuffix(label, ": ")+" (counted, no trace)")
	}
	return s
}

// lostRules are the two lost rules: "the vendor never got it" (a
// published message with no send in the vendor's journal and in no record
// or queue) and "the worker's records are missing" (the journal has a
// send of it, no record or queue does). A fault that plants losses (a
// negative control, fault.Expect.Lost) must show them (fewer: the control
// caught nothing, which fails the first rule); they are taken from the
// messages the vendor never got first. Lost messages without a journal
// trace (splitLost) and bench runs without a reconciler verdict fail both
// rules: not measured is never 0.
func lostRules(in Inputs, runs []results.Result) (never, records Rule) {
	never = Rule{ID: "lost-vendor-never-got", Name: "No notification lost before the vendor (published; no send in its journal, no record, no queue)", Source: batterySource}
	records = Rule{ID: "lost-records-missing", Name: "No sent notification missing from the worker's records (the vendor's journal has it; no record or queue does)", Source: batterySource}
	if len(runs) == 0 && len(in.Faults) == 0 && in.Race == nil {
		never.Verdict, never.Evidence = NA, "nothing ran"
		records.Verdict, records.Evidence = NA, "nothing ran"
		return never, records
	}
	var all lostSplit
	var planted, missed, notMeasured, unreconciled []string
	for _, run := range runs {
		if run.Reconcile == nil {
			notMeasured = append(notMeasured, fmt.Sprintf("bench %d ms: not reconciled", run.RTTMS))
			continue
		}
		s := splitLost(run.Reconcile, fmt.Sprintf("bench %d ms: ", run.RTTMS))
		all.neverGot, all.got, all.untraced = append(all.neverGot, s.neverGot...), append(all.got, s.got...), append(all.untraced, s.untraced...)
	}
	for _, v := range in.Faults {
		s := lostSplit{}
		if v.Reconcile != nil {
			s = splitLost(v.Reconcile, v.Name+": ")
		} else {
			unreconciled = append(unreconciled, v.Name)
			for i := 0; i < v.Lost; i++ {
				s.untraced = append(s.untraced, v.Name+" (counted, no trace)")
			}
		}
		if p := v.Expected.Lost; p > 0 {
			if v.Lost < p {
				missed = append(missed, fmt.Sprintf("%s planted %d, the reconciler saw %d: the control caught nothing", v.Name, p, v.Lost))
			} else {
				planted = append(planted, fmt.Sprintf("%d planted by %s", p, v.Name))
			}
			for _, list := range []*[]string{&s.neverGot, &s.untraced, &s.got} {
				k := min(p, len(*list))
				*list, p = (*list)[k:], p-k
			}
		}
		all.neverGot, all.got, all.untraced = append(all.neverGot, s.neverGot...), append(all.got, s.got...), append(all.untraced, s.untraced...)
	}
	if in.Race != nil {
		for _, row := range in.Race.Rows {
			for i := 0; i < row.Lost; i++ {
				all.untraced = append(all.untraced, fmt.Sprintf("idle race %d ms (counted, no trace)", row.RTTMS))
			}
		}
	}
	tail := "; counted over " + checked(in, runs)
	if len(planted) > 0 {
		tail = "; outside the negative controls (" + strings.Join(planted, ", ") + ", as expected)" + tail
	}
	if len(unreconciled) > 0 {
		tail += "; " + unreconciledNote(unreconciled)
	}
	unsure := ""
	if n := len(all.untraced); n > 0 {
		unsure = fmt.Sprintf("%d not traced in the journal (either kind: journal not read or no refkey): %s", n, firstKeys(all.untraced))
	}
	judge := func(r *Rule, n int, head string, extra []string) {
		fails := append([]string{}, extra...)
		if unsure != "" {
			fails = append(fails, unsure)
		}
		fails = append(fails, notMeasured...)
		r.Verdict = Pass
		if n > 0 || len(fails) > 0 {
			r.Verdict = Fail
		}
		r.Summary = strings.Join(append([]string{head}, fails...), "; ")
		r.Evidence = r.Summary + tail
	}
	head := fmt.Sprintf("%d lost", len(all.neverGot))
	if len(all.neverGot) > 0 {
		head += ": " + firstKeys(all.neverGot)
	}
	judge(&never, len(all.neverGot), head, missed)
	head = fmt.Sprintf("%d the vendor got (a send in its journal) that no record or queue holds", len(all.got))
	if len(all.got) > 0 {
		head += ": " + firstKeys(all.got)
	}
	judge(&records, len(all.got), head, nil)
	return never, records
}

// againstPlanted splits seen, what a fault's run counted of something its
// scenario may plant on purpose (a negative control's duplicates,
// fault.Expect.Duplicates), into the part the control planted and the
// part beyond it: the duplicates and client-replay rules judge only the
// part beyond (docs/worker-contract.md#the-audit).
func againstPlanted(seen, planted int) (asPlanted, beyond int) {
	asPlanted = max(0, min(seen, planted))
	return asPlanted, seen - asPlanted
}

// plantedNote is what a fault's row adds to its duplicates and lost
// counts when the scenario is a negative control.
func plantedNote(v fault.Verdict) string {
	var parts []string
	if p := v.Expected.Duplicates; p > 0 {
		parts = append(parts, fmt.Sprintf("%d duplicate(s) planted", p))
	}
	if p := v.Expected.Lost; p > 0 {
		parts = append(parts, fmt.Sprintf("%d loss(es) planted", p))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (a negative control: " + strings.Join(parts, ", ") + ")"
}

// unreconciledNote names the faults whose verdict carries no reconciler
// report: their counts are not measured (each fault's own rule judges it).
func unreconciledNote(names []string) string {
	return "not reconciled, judged on their own rows: fault " + strings.Join(names, ", ")
}

// lostKinds is a fault's lost count with its split (splitLost): "lost 1
// (1 the worker's records miss, the journal has it)".
func lostKinds(v fault.Verdict) string {
	out := fmt.Sprintf("lost %d", v.Lost)
	if v.Lost == 0 || v.Reconcile == nil {
		return out
	}
	s := splitLost(v.Reconcile, "")
	var parts []string
	if n := len(s.neverGot); n > 0 {
		parts = append(parts, fmt.Sprintf("%d the vendor never got", n))
	}
	if n := len(s.got); n > 0 {
		parts = append(parts, fmt.Sprintf("%d the worker's records miss, the journal has it", n))
	}
	if n := len(s.untraced); n > 0 {
		parts = append(parts, fmt.Sprintf("%d not traced in the journal", n))
	}
	return out + " (" + strings.Join(parts, "; ") + ")"
}
