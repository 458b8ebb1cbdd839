package fault

import (
	"fmt"
	"time"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// windowViolations checks the send-window cutoff on the worker's clock
// (Record.Clock, in the worker's default window zone): no SENT at or after
// it, no OUTSIDE_SEND_WINDOW before it (later than the window's opening).
func windowViolations(recs []records.Record, cutoff string) []string {
	loc, err := time.LoadLocation(worker.DefaultWindowZone)
	if err != nil {
		return []string{"load window zone: " + err.Error()}
	}
	var hh, mm int
	fmt.Sscanf(cutoff, "%d:%d", &hh, &mm)
	var oh, om int
	fmt.Sscanf(worker.DefaultWindowStart, "%d:%d", &oh, &om)
	open := oh*60 + om
	var out []string
	for _, r := range recs {
		if r.Clock.IsZero() {
			continue
		}
		t := r.Clock.In(loc)
		min := t.Hour()*60 + t.Minute()
		after := min >= hh*60+mm
		switch {
		case r.Outcome == outcome.Sent && after:
			out = append(out, fmt.Sprintf("record %d SENT at %s, after the %s cutoff", r.Seq, t.Format("15:04:05.000"), cutoff))
		case r.Outcome == outcome.OutsideSendWindow && !after && min >= open:
			out = append(out, fmt.Sprintf("record %d held at %s, before the %s cutoff", r.Seq, t.Format("15:04:05.000"), cutoff))
		}
	}
	if len(out) > 3 {
		out = append(out[:3], fmt.Sprintf("and %d more window violations", len(out)-3))
	}
	return out
}

// lastSent returns the worker's clock at the latest SENT record, in the
// worker's default window zone ("15:04:05.000"), "" when none was SENT
// (or the records carry no clock).
func lastSent(recs []records.Record) string {
	loc, err := time.LoadLocation(worker.DefaultWindowZone)
	if err != nil {
		return ""
	}
	var last time.Time
	for _, r := range recs {
		if r.Outcome == outcome.Sent && r.Clock.After(last) {
			last = r.Clock
		}
	}
	if last.IsZero() {
		return ""
	}
	return last.In(loc).Format("15:04:05.000")
}
