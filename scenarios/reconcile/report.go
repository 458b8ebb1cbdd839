package reconcile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// MaxTableViolations is how many violations WriteTable lists; the JSON
// report always has them all.
const MaxTableViolations = 20

// outcomeOrder is the order WriteTable lists outcomes in (the outcome
// table of docs/outcomes.md#outcome-table, then the pseudo-outcomes); others
// follow by name.
var outcomeOrder = []outcome.Outcome{
	outcome.Sent, outcome.Rejected, outcome.NotSent, outcome.Unknown,
	outcome.OutsideSendWindow, outcome.Invalid, outcome.Dead, outcome.Pending,
	outcome.Queued, outcome.Lost,
}

// Verdict is "OK" when r.OK, "NOTHING CHECKED" when no check had its
// input, "FAILED" otherwise.
func (r Report) Verdict() string {
	switch {
	case r.OK:
		return "OK"
	case len(r.Checks) == 0:
		return "NOTHING CHECKED"
	}
	return "FAILED"
}

// WriteTable writes r for a terminal: the verdict and the checks that ran,
// the counts by outcome and by place, and up to MaxTableViolations
// violations. Errors are the writer's.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	checks := strings.Join(r.Checks, ", ")
	if checks == "" {
		checks = "none: no input"
	}
	fmt.Fprintf(tw, "reconcile\t%s\t(checks: %s)\n", r.Verdict(), checks)
	fmt.Fprintf(tw, "published\t%d\t(%d refkeys, %d invalid)\n", r.Published, r.RefKeys, r.PublishedInvalid)
	fmt.Fprintf(tw, "lost\t%d\t(published, found nowhere or dead-lettered unsent)\n", r.Lost)
	if r.DeadLetteredUnsent > 0 {
		fmt.Fprintf(tw, "dead-lettered unsent\t%d\t(of the lost: in the dead-letter queue with attempts left, never sent) %s\n",
			r.DeadLetteredUnsent, joinIDs(r.DeadLetteredUnsentIDs, MaxTableViolations))
	}
	fmt.Fprintf(tw, "duplicates\t%d\t(refkeys that reached the vendor twice without a 4xx)\n", r.Duplicates)
	fmt.Fprintf(tw, "suppressed\t%d\t(DUPLICATE acks, not sent)\n", r.Suppressed)
	if r.JournalSends >= 0 {
		fmt.Fprintf(tw, "journal sends\t%d\t(POSTs to the send path the vendor received)\n", r.JournalSends)
	} else {
		fmt.Fprintf(tw, "journal sends\t-\t(journal not read)\n")
	}
	fmt.Fprintf(tw, "\noutcome\tcount\n")
	for _, o := range orderedKeys(r.ByOutcome, outcomeOrder) {
		fmt.Fprintf(tw, "%s\t%d\n", o, r.ByOutcome[o])
	}
	fmt.Fprintf(tw, "\nplace\tcount\n")
	for _, p := range orderedKeys(r.ByPlace, []string{PlaceAcked}) {
		fmt.Fprintf(tw, "%s\t%d\n", p, r.ByPlace[p])
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if len(r.Violations) == 0 {
		_, err := fmt.Fprintf(w, "\nviolations: none\n")
		return err
	}
	fmt.Fprintf(w, "\nviolations: %d\n", len(r.Violations))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "rule\trefkey\tdetail\n")
	for i, v := range r.Violations {
		if i == MaxTableViolations {
			fmt.Fprintf(tw, "...\t\t%d more in the JSON report\n", len(r.Violations)-i)
			break
		}
		id := v.RefKey
		if id == "" {
			id = "-"
			if v.MessageID != "" {
				id = "msgid:" + v.MessageID
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Rule, id, v.Detail)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// WriteJSON writes r as indented JSON followed by a newline. Map keys are
// sorted, so equal reports give equal bytes. Errors are the writer's.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// orderedKeys returns m's keys: those in first in that order, the rest
// sorted.
func orderedKeys[K ~string](m map[K]int, first []K) []K {
	var out []K
	for _, k := range first {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(first, k) {
			out = append(out, k)
		}
	}
	return out
}

// ErrInvariant is wrapped by Report.Err when the report is not OK.
var ErrInvariant = errors.New("delivery invariant broken")

// Err returns nil when r.OK, else an error wrapping ErrInvariant that
// counts the violations, lost and duplicates (or says nothing was checked).
func (r Report) Err() error {
	switch {
	case r.OK:
		return nil
	case len(r.Checks) == 0:
		return fmt.Errorf("%w: nothing checked (no input beyond the published list)", ErrInvariant)
	}
	lost := fmt.Sprintf("%d lost", r.Lost)
	if r.DeadLetteredUnsent > 0 {
		lost += fmt.Sprintf(" (%d dead-lettered unsent)", r.DeadLetteredUnsent)
	}
	return fmt.Errorf("%w: %d violation(s), %s, %d duplicate(s)", ErrInvariant, len(r.Violations), lost, r.Duplicates)
}

// joinIDs joins ids with ", ", at most n of them, then "and N more".
func joinIDs(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:n], ", "), len(ids)-n)
}
