package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// contractRule: the worker keeps docs/worker-contract.md: one record per
// message with outcome, timings and CPU (a contract worker's bench runs,
// results.ContractCheck), and routing: every invalid message dead-lettered
// as INVALID with a reason, every outcome in its queue
// (docs/outcomes.md#outcome-table). Routing is read from the reconciler's
// violations of rule "invalid" and "route" in the bench runs and the
// fault scenarios (the malformed scenario publishes invalid messages): a
// worker that acks malformed input as SENT fails, the Go worker (the
// reference) included. When no scenario published invalid input, the
// evidence says routing was not tested.
func contractRule(in Inputs, runs []results.Result) Rule {
	r := Rule{ID: "contract", Name: "Keeps the worker contract (records, routing, exit)", Source: "records file, queues (reconciler)"}
	broken, short, routed := routing(in, runs)
	var parts []string
	r.Verdict = Pass
	switch {
	case in.Worker == vendormock.WorkerGo:
		parts = append(parts, "the Go worker is the contract's reference implementation")
	case len(runs) == 0:
		r.Verdict = NA
		parts = append(parts, "no bench run of the worker")
	default:
		var missing []string
		for _, run := range runs {
			if run.Contract == nil {
				continue
			}
			for _, m := range run.Contract.Missing {
				if !slices.Contains(missing, m) {
					missing = append(missing, m)
				}
			}
		}
		if len(missing) > 0 {
			r.Verdict = Fail
			parts = append(parts, strings.Join(missing, "; "))
		} else {
			parts = append(parts, fmt.Sprintf("%d runs: one record per message with outcome, timings and CPU", len(runs)))
		}
	}
	if len(broken) > 0 {
		r.Verdict = Fail
		r.Summary = "routing broken: " + strings.Join(short, "; ")
		parts = append(parts, "routing broken: "+strings.Join(broken, "; "))
	}
	if routed != "" {
		parts = append(parts, routed)
	}
	r.Evidence = strings.Join(parts, "; ")
	return r
}

// routing returns the runs whose reconciler found a message in the wrong
// place (rule "invalid" or "route"), each with its first two violations
// (broken) or its first one (short), and one line on the invalid input
// that was routed right.
func routing(in Inputs, runs []results.Result) (broken, short []string, routed string) {
	invalid, from := 0, []string{}
	check := func(label string, rep *reconcile.Report) {
		if rep == nil {
			return
		}
		var bad []reconcile.Violation
		keys := map[string]bool{}
		for _, v := range rep.Violations {
			if v.Rule == reconcile.RuleInvalid || v.Rule == reconcile.RuleRoute {
				bad = append(bad, v)
				if v.Rule == reconcile.RuleInvalid {
					keys[v.RefKey+"/"+v.MessageID] = true
				}
			}
		}
		if len(bad) == 0 {
			if rep.PublishedInvalid > 0 {
				invalid += rep.PublishedInvalid
				from = append(from, label)
			}
			return
		}
		var what []string
		if len(keys) > 0 {
			what = append(what, fmt.Sprintf("%d of %d invalid messages acked or misrouted", len(keys), rep.PublishedInvalid))
		}
		if n := len(bad) - countViolations(bad, reconcile.RuleInvalid); n > 0 {
			what = append(what, fmt.Sprintf("%d in a queue their outcome does not go to", n))
		}
		var first []string
		for i, v := range bad {
			if i == 2 {
				first = append(first, fmt.Sprintf("and %d more", len(bad)-2))
				break
			}
			id := v.RefKey
			if id == "" {
				id = "msgid:" + v.MessageID
			}
			first = append(first, id+": "+v.Detail)
		}
		line := label
		if len(what) > 0 {
			line += ": " + strings.Join(what, ", ")
		}
		broken = append(broken, line+" ("+strings.Join(first, ", ")+")")
		short = append(short, line+" (first: "+first[0]+")")
	}
	for _, run := range runs {
		check(fmt.Sprintf("bench %d ms", run.RTTMS), run.Reconcile)
	}
	for _, v := range in.Faults {
		check("fault "+v.Name, v.Reconcile)
	}
	switch {
	case invalid > 0:
		routed = fmt.Sprintf("malformed input routed: %d invalid messages dead-lettered (%s)", invalid, strings.Join(from, ", "))
	case len(broken) == 0:
		routed = "malformed input: not tested (no run of this battery published one)"
	}
	return broken, short, routed
}

// countViolations counts the violations of rule.
func countViolations(vs []reconcile.Violation, rule string) int {
	n := 0
	for _, v := range vs {
		if v.Rule == rule {
			n++
		}
	}
	return n
}
