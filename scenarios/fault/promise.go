package fault

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// A scenario with server.reports tells the worker what the vendor
// promises (reports.complete: true, reports.horizon H: "every message I
// accepted gets a report within H"), and the worker acts on it: past H
// with no report it takes the send for NOT_SENT and sends again. The mock
// vendor that makes the promise runs on the lab's machine, and under load
// it can break it by itself: a report scheduled 2 s after its send was
// first pushed 6.3 s after it in an audit beside two other runs
// (docs/scenarios.md#reports-and-the-vendors-promise). The worker is then
// right to send again, and the scenario would count a duplicate against
// it. So the run measures the vendor's punctuality too, and a run where
// the vendor broke its promise is void: it says so, and judges nothing.

// promisedHorizon is the horizon the worker is told the vendor keeps
// (profileJSON's reports with rs's horizon and complete, as the worker is
// given them), or 0 when it is told the reports are not complete (no
// promise to break). Errors: the profile's JSON, a horizon that does not
// parse.
func promisedHorizon(profileJSON string, rs *ReportsRunSpec) (time.Duration, error) {
	told, err := workerReports(profileJSON, rs)
	if err != nil {
		return 0, err
	}
	var spec vendormock.ReportsSpec
	if err := json.Unmarshal([]byte(told), &spec); err != nil {
		return 0, fmt.Errorf("server.reports: the reports the worker is told: %w", err)
	}
	if !spec.Complete {
		return 0, nil
	}
	h, err := time.ParseDuration(spec.Horizon)
	if err != nil || h <= 0 {
		return 0, fmt.Errorf("server.reports: horizon %q: want a positive Go duration", spec.Horizon)
	}
	return h, nil
}

// acceptSlack is how far before a send attempt's record starts WireMock
// may log its request and still count as that attempt's: WireMock logs
// in whole milliseconds.
const acceptSlack = 5 * time.Millisecond

// brokenPromise returns why a run cannot judge the worker, or "" when the
// mock vendor kept the promise the worker was told. offered is each
// refkey's vendormock.Offer: when the vendor accepted its send and first
// offered its report (first push attempt, or served for pull; what
// Toxiproxy does to it after that is the scenario's planted fault, not
// the vendor's lateness). The promise covers a send the vendor accepted:
// the worker's UNKNOWN record of the attempt that carried it (the record
// from whose start to end WireMock logged the request) starts the
// worker's horizon no later than the record's end, so a report offered
// more than horizon after that end reached the worker only after its
// horizon had passed, through no fault of the worker. An UNKNOWN the
// vendor never saw (nginx's 502) is no promise of the vendor's. horizon 0
// = no promise (always "").
func brokenPromise(offered map[string]vendormock.Offer, recs []records.Record, horizon time.Duration) string {
	if horizon <= 0 {
		return ""
	}
	var late []string
	worst := time.Duration(0)
	for _, k := range slices.Sorted(maps.Keys(offered)) {
		of := offered[k]
		i := slices.IndexFunc(recs, func(r records.Record) bool {
			return r.RefKey == k && r.Outcome == outcome.Unknown &&
				!of.Accepted.Before(r.Start.Add(-acceptSlack)) && !of.Accepted.After(r.End)
		})
		if i < 0 {
			continue // the accepted send did not end UNKNOWN: no horizon ran on it
		}
		if d := of.At.Sub(recs[i].End); d > horizon {
			late = append(late, k)
			worst = max(worst, d)
		}
	}
	if len(late) == 0 {
		return ""
	}
	return fmt.Sprintf("the mock vendor broke its promise: %d report(s) first offered past the %s horizon after the worker's UNKNOWN (%s; the latest %s after it), so the worker was right to take them for not sent; the lab was too slow (a loaded machine?) and this run judges nothing: run the scenario again",
		len(late), horizon, firstKeysOf(late), worst.Round(10*time.Millisecond))
}

// voidIf makes v void when why is not "": v fails, why first among its
// failures, and Verdict.Void says it is the lab's doing.
func voidIf(v *Verdict, why string) {
	if why == "" {
		return
	}
	v.Void = why
	v.Failures = append([]string{"VOID: " + why}, v.Failures...)
	v.Pass = false
}

// firstKeysOf names up to 3 refkeys, then how many more.
func firstKeysOf(keys []string) string {
	if len(keys) <= 3 {
		return fmt.Sprint(keys)
	}
	return fmt.Sprintf("%v and %d more", keys[:3], len(keys)-3)
}
