package bench

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// ErrDelivery is wrapped by the error of Run and matrix.Run when a run lost
// or duplicated a message, or its delivery could not be judged (no
// reconciler verdict): the promise of docs/outcomes.md is not shown to
// hold, so the command must fail (exit 1), after writing every result file
// and the summary.
var ErrDelivery = errors.New("delivery check failed")

// DeliveryFailures returns one line per bench result whose delivery is not
// shown to be right: the reconciler's lost and duplicated refkeys (the
// first few named) and its other broken invariants, or "not reconciled"
// when the run has no verdict. Each line names the result file under out
// that holds the evidence. nil when every run reconciled with 0 lost and 0
// duplicates.
func DeliveryFailures(out string, rs []results.Result) []string {
	var lines []string
	for _, r := range rs {
		evidence := filepath.Join(out, results.ResultFile(r))
		label := fmt.Sprintf("%s at %d ms", r.Mode, r.RTTMS)
		rec := r.Reconcile
		switch {
		case rec == nil:
			lines = append(lines, fmt.Sprintf("%s: not reconciled: nothing shows 0 lost and 0 duplicates (%s)", label, evidence))
		case !rec.OK || rec.Lost != 0 || rec.Duplicates != 0:
			what := []string{fmt.Sprintf("%d lost%s", rec.Lost, names(rec.LostIDs)),
				fmt.Sprintf("%d duplicated%s", rec.Duplicates, names(rec.DuplicateRefKeys))}
			if len(rec.Violations) > 0 {
				what = append(what, fmt.Sprintf("%d broken invariant(s), first: %s %s", len(rec.Violations), rec.Violations[0].Rule, rec.Violations[0].Detail))
			}
			lines = append(lines, fmt.Sprintf("%s: %s (reconcile in %s; WireMock's journal count %d)", label, strings.Join(what, ", "), evidence, r.JournalCount))
		}
	}
	return lines
}

// names formats up to three ids as " (a, b, c, ...)"; "" for none.
func names(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	if len(ids) > 3 {
		ids = append(ids[:3:3], "...")
	}
	return " (" + strings.Join(ids, ", ") + ")"
}

// DeliveryError prints the failures (DeliveryFailures, or the matrix's
// cells) to w as the run's last lines and returns the error, wrapping
// ErrDelivery, that makes the command exit 1; nil when lines is empty.
func DeliveryError(w io.Writer, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nFAIL: %d run(s) did not keep the delivery promise (never lost, never twice):\n", len(lines))
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
	return fmt.Errorf("%w: %s", ErrDelivery, strings.Join(lines, "; "))
}
