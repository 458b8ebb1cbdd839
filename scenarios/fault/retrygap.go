package fault

import (
	"fmt"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// retryGapSlack allows for the worker re-publishing a NOT_SENT message
// (which starts its retry delay) before it writes the record's End: the
// contract workers take End after routing, and on a loaded 2-core machine
// that came up to 188 ms late (rate-limited-429 in the 2026-12-02 audits
// of python-session, 1.896 s, and java-apache, 1.812 s, against a 2 s
// delay; 50 ms failed them). A worker that ignores the delay retries at
// once or at its own delay, far outside this slack.
const retryGapSlack = 250 * time.Millisecond

// retryGaps checks that every NOT_SENT record followed by a later record
// of the same refkey (in End order) is followed no sooner than min: the
// next record's Start minus the NOT_SENT record's End, with retryGapSlack. It returns one line
// per retry that came too early, at most 3 and a count, and one line when
// no NOT_SENT record was retried at all (nothing proves the delay then).
func retryGaps(recs []records.Record, min time.Duration) []string {
	last := map[string]records.Record{} // refkey -> its previous record
	var out []string
	retried := 0
	for _, r := range recs {
		if r.RefKey == "" {
			continue
		}
		if prev, ok := last[r.RefKey]; ok && prev.Outcome == outcome.NotSent {
			retried++
			if gap := r.Start.Sub(prev.End); gap < min-retryGapSlack {
				out = append(out, fmt.Sprintf("%s retried %s after NOT_SENT, want >= %s", r.RefKey, gap.Round(time.Millisecond), min))
			}
		}
		last[r.RefKey] = r
	}
	if len(out) > 3 {
		out = append(out[:3], fmt.Sprintf("and %d more early retries", len(out)-3))
	}
	if retried == 0 {
		out = append(out, fmt.Sprintf("retry_after %s: no NOT_SENT record was retried", min))
	}
	return out
}
