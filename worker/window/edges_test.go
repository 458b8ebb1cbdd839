package window

import (
	"testing"
	"time"
)

// The tests in this file kill mutants ./run.sh mutate found alive
// (results/mutation/report.md): each names the rule it guards.

// TestAllowedSecondsPastTheEdge: the seconds of the clock count at both
// edges. 20:50:30 is closed although its minute part (20:50) is the first
// closed minute and 20:49 the last open one; 08:00:30 is open. A
// sinceMidnight that subtracted or dropped the seconds passes the
// whole-minute cases and fails these.
func TestAllowedSecondsPastTheEdge(t *testing.T) {
	w := Default()
	for _, tc := range []struct {
		h, m, s int
		want    bool
	}{
		{20, 50, 30, false}, {20, 50, 59, false}, {20, 49, 30, true},
		{8, 0, 30, true}, {8, 0, 59, true}, {7, 59, 30, false},
	} {
		at := seoulAt(t, 2026, 11, 30, tc.h, tc.m, tc.s, 0)
		if got := w.Allowed(at); got != tc.want {
			t.Errorf("Allowed(%s) = %v; want %v", at.Format("15:04:05 MST"), got, tc.want)
		}
	}
}

// TestWindowWithSeconds: a hand-built window may start on a second
// (Validate allows it): 08:15:30 UTC opens at 08:15:30, not at 08:15, and
// NextOpen returns that instant, to the second (its check that midnight +
// Start reads Start on the wall clock counts hours, minutes and seconds).
func TestWindowWithSeconds(t *testing.T) {
	w := Window{Start: 8*time.Hour + 15*time.Minute + 30*time.Second, End: 20*time.Hour + 50*time.Minute, Loc: time.UTC}
	day := func(h, m, s int) time.Time { return time.Date(2026, 11, 30, h, m, s, 0, time.UTC) }
	if w.Allowed(day(8, 15, 10)) {
		t.Errorf("Allowed(08:15:10) with the window opening at 08:15:30")
	}
	if !w.Allowed(day(8, 15, 30)) {
		t.Errorf("Allowed(08:15:30) false with the window opening at 08:15:30")
	}
	if got, want := w.NextOpen(day(7, 0, 0)), day(8, 15, 30); !got.Equal(want) {
		t.Errorf("NextOpen(07:00) = %s; want %s", got, want)
	}
	if got, want := w.String(), "08:15+30s-20:50 UTC"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
}

// TestNextOpenAfterFallBack: from the evening before New York's fall-back
// day (2026-11-01 has 25 hours), a window opening at 08:30 opens at
// wall-clock 08:30 EST the next morning: midnight + 8h30m is 07:30 there,
// so NextOpen rebuilds the time from the wall clock, on the next day, with
// hours and minutes.
func TestNextOpenAfterFallBack(t *testing.T) {
	ny := mustLoad(t, "America/New_York")
	w := Window{Start: 8*time.Hour + 30*time.Minute, End: 20*time.Hour + 50*time.Minute, Loc: ny}
	from := time.Date(2026, 10, 31, 21, 0, 0, 0, ny)
	if got, want := w.NextOpen(from), time.Date(2026, 11, 1, 8, 30, 0, 0, ny); !got.Equal(want) {
		t.Errorf("NextOpen(%s) = %s; want %s", from, got, want)
	}
}

// TestParseRangeEdges: the first and last hour and minute are in range
// (00:00, 08:59, 23:59), and a window from midnight prints as 00:00.
func TestParseRangeEdges(t *testing.T) {
	for _, tc := range []struct {
		start, end string
		want       Window
	}{
		{"00:00", "08:59", Window{Start: 0, End: 8*time.Hour + 59*time.Minute, Loc: time.UTC}},
		{"00:59", "23:59", Window{Start: 59 * time.Minute, End: 23*time.Hour + 59*time.Minute, Loc: time.UTC}},
	} {
		got, err := Parse(tc.start, tc.end, "UTC")
		if err != nil || got.Start != tc.want.Start || got.End != tc.want.End {
			t.Errorf("Parse(%s, %s) = %v, %v; want %v", tc.start, tc.end, got, err, tc.want)
		}
	}
	if got, want := (Window{Start: 0, End: 8 * time.Hour, Loc: time.UTC}).String(), "00:00-08:00 UTC"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
}
