package audit

import (
	"fmt"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// StallMS is the send latency in ms from which a bench send counts as
// stalled in the client (a pool that stops handing out connections): far
// above any send of the bench (RTT up to 10 ms, WireMock's delay, a new
// TLS connection), far below the contract's response timeout, which ends a
// stalled send.
const StallMS = 1000

// clientReplayRule: a POST the client sent again on its own. The
// reconciler counts a duplicate refkey that reached the vendor more times
// (WireMock's journal) than the worker recorded calls to its client
// (reconcile.Report.ClientReplays); a run whose report lacks the count is
// not measured, never 0.
func clientReplayRule(in Inputs, runs []results.Result) Rule {
	r := Rule{ID: "client-replay", Name: "The client never re-sends a POST on its own (journal requests vs the worker's calls; the replay probe)",
		Source: "WireMock journal, records (reconciler); replay probe (stream-reset proxy, WireMock journal)"}
	total, measured, unmeasured := 0, 0, 0
	var where, controls []string
	for _, run := range runs {
		if run.Reconcile == nil || !run.Reconcile.ClientReplayChecked {
			unmeasured++
			continue
		}
		measured++
		if n := run.Reconcile.ClientReplays; n > 0 {
			total += n
			where = append(where, fmt.Sprintf("bench %d ms: %d (%s)", run.RTTMS, n, firstKeys(run.Reconcile.ClientReplayRefKeys)))
		}
	}
	for _, v := range in.Faults {
		if v.Reconcile == nil || !v.Reconcile.ClientReplayChecked {
			unmeasured++
			continue
		}
		measured++
		// A negative control plants its duplicates on purpose (a second
		// consumer, a lost ledger, a replaying transport): they count only
		// beyond what it planted, as in the duplicates rule.
		asPlanted, beyond := againstPlanted(v.Reconcile.ClientReplays, v.Expected.Duplicates)
		if asPlanted > 0 {
			controls = append(controls, fmt.Sprintf("%d by %s", asPlanted, v.Name))
		}
		if beyond > 0 {
			total += beyond
			where = append(where, fmt.Sprintf("fault %s: %d (%s)", v.Name, beyond, firstKeys(v.Reconcile.ClientReplayRefKeys)))
		}
	}
	pReplayed, pMeasured, pWhere, pClean := replayProbeEvidence(in.Probes)
	total, measured, where = total+pReplayed, measured+pMeasured, append(where, pWhere...)
	note := ""
	if len(pClean) > 0 {
		note += "; " + strings.Join(pClean, "; ")
	}
	if len(controls) > 0 {
		note += "; planted by the negative controls, as expected: " + strings.Join(controls, ", ")
	}
	switch {
	case total > 0:
		r.Verdict = Fail
		r.Evidence = fmt.Sprintf("%d refkeys reached the vendor more times than the worker called its client, outside the negative controls: %s%s", total, strings.Join(where, "; "), note)
	case measured == 0:
		r.Verdict, r.Evidence = NA, "not measured (results written before the reconciler counted client replays)"
	default:
		r.Verdict = Pass
		r.Evidence = fmt.Sprintf("0 outside the negative controls in %d runs (bench and faults) where the journal and the records were both read%s", measured, note)
	}
	if unmeasured > 0 && r.Verdict != NA {
		r.Evidence += fmt.Sprintf("; %d runs not measured", unmeasured)
	}
	return r
}

// poolStallRule: a pool that stops handing out connections shows as bench
// sends that last StallMS or more (until the response timeout ends them);
// the evidence also counts the sends that never reached nginx (the worker
// handled more messages than nginx saw sends), which alone is no stall.
func poolStallRule(runs []results.Result) Rule {
	r := Rule{ID: "pool-stall", Name: fmt.Sprintf("No send stalls in the client (no bench send takes %d ms or more)", StallMS),
		Source: "records (outcomes, total_ms), nginx access log"}
	if len(runs) == 0 {
		r.Verdict, r.Evidence = NA, "no bench run"
		return r
	}
	r.Verdict = Pass
	var ev []string
	for _, run := range runs {
		handled := 0
		for _, o := range outcome.SendClasses {
			handled += run.Outcomes[o]
		}
		missing := handled - run.SendRequests
		line := fmt.Sprintf("%d ms: %d sends handled, %d reached nginx, slowest %.0f ms", run.RTTMS, handled, run.SendRequests, run.LatencyMS.Max)
		if missing > 0 {
			// Not a stall by itself: a refused or reset connection also
			// leaves a send out of nginx's log, fast (NOT_SENT, retried).
			line += fmt.Sprintf("; %d never reached nginx (NOT_SENT %d, UNKNOWN %d)", missing, run.Outcomes[outcome.NotSent], run.Outcomes[outcome.Unknown])
		}
		if run.LatencyMS.Max >= StallMS {
			r.Verdict = Fail
			line += fmt.Sprintf("; a send took %.0f ms >= %d ms", run.LatencyMS.Max, StallMS)
		}
		ev = append(ev, line)
	}
	r.Evidence = strings.Join(ev, "; ")
	return r
}

// firstKeys names up to three refkeys.
func firstKeys(keys []string) string {
	if len(keys) > 3 {
		return strings.Join(keys[:3], ", ") + fmt.Sprintf(" and %d more", len(keys)-3)
	}
	return strings.Join(keys, ", ")
}
