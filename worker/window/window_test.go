package window

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return loc
}

func seoulAt(t *testing.T, y int, mo time.Month, d, h, mi, s, ns int) time.Time {
	t.Helper()
	return time.Date(y, mo, d, h, mi, s, ns, mustLoad(t, "Asia/Seoul"))
}

func TestDefault(t *testing.T) {
	w := Default()
	if w.Start != 8*time.Hour || w.End != 20*time.Hour+50*time.Minute || w.Loc.String() != "Asia/Seoul" {
		t.Fatalf("Default() = %v", w)
	}
	if got := w.String(); got != "08:00-20:50 Asia/Seoul" {
		t.Fatalf("String() = %q", got)
	}
	if err := w.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}

func TestAllowedEdges(t *testing.T) {
	w := Default()
	ny := mustLoad(t, "America/New_York")
	tests := []struct {
		name string
		t    time.Time
		want bool
	}{
		{"20:49:59.999 allowed", seoulAt(t, 2026, 11, 30, 20, 49, 59, 999_000_000), true},
		{"20:49:59.999999999 allowed", seoulAt(t, 2026, 11, 30, 20, 49, 59, 999_999_999), true},
		{"20:50:00 closed", seoulAt(t, 2026, 11, 30, 20, 50, 0, 0), false},
		{"20:50:00.000000001 closed", seoulAt(t, 2026, 11, 30, 20, 50, 0, 1), false},
		{"07:59:59 closed", seoulAt(t, 2026, 11, 30, 7, 59, 59, 0), false},
		{"07:59:59.999999999 closed", seoulAt(t, 2026, 11, 30, 7, 59, 59, 999_999_999), false},
		{"08:00:00 allowed", seoulAt(t, 2026, 11, 30, 8, 0, 0, 0), true},
		{"noon allowed", seoulAt(t, 2026, 11, 30, 12, 0, 0, 0), true},
		{"midnight closed", seoulAt(t, 2026, 12, 1, 0, 0, 0, 0), false},
		{"23:59:59 closed", seoulAt(t, 2026, 11, 30, 23, 59, 59, 0), false},
		// Host clocks in other zones are judged on Seoul's wall clock.
		{"11:49:59 UTC is 20:49:59 KST", time.Date(2026, 11, 30, 11, 49, 59, 0, time.UTC), true},
		{"11:50:00 UTC is 20:50 KST", time.Date(2026, 11, 30, 11, 50, 0, 0, time.UTC), false},
		{"23:00 UTC is 08:00 KST next day", time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC), true},
		{"22:59:59 UTC is 07:59:59 KST", time.Date(2026, 11, 29, 22, 59, 59, 0, time.UTC), false},
		{"noon New York (EST) is 02:00 KST", time.Date(2026, 11, 30, 12, 0, 0, 0, ny), false},
		{"06:49:59 New York (EST) is 20:49:59 KST", time.Date(2026, 11, 30, 6, 49, 59, 0, ny), true},
		{"07:49:59 New York in July (EDT) is 20:49:59 KST", time.Date(2026, 7, 1, 7, 49, 59, 0, ny), true},
		{"07:50 New York in July (EDT) is 20:50 KST", time.Date(2026, 7, 1, 7, 50, 0, 0, ny), false},
		{"fixed +09:00 offset", time.Date(2026, 11, 30, 20, 50, 0, 0, time.FixedZone("", 9*3600)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := w.Allowed(tt.t); got != tt.want {
				t.Fatalf("Allowed(%s) = %v, want %v", tt.t.Format(time.RFC3339Nano), got, tt.want)
			}
			if got := w.UntilOpen(tt.t) == 0; got != tt.want {
				t.Fatalf("UntilOpen(%s) == 0 is %v, want %v", tt.t, got, tt.want)
			}
		})
	}
}

func TestNextOpen(t *testing.T) {
	w := Default()
	tests := []struct {
		name string
		t    time.Time
		want time.Time
	}{
		{"inside returns t", seoulAt(t, 2026, 11, 30, 12, 0, 0, 5), seoulAt(t, 2026, 11, 30, 12, 0, 0, 5)},
		{"20:50 -> next day 08:00", seoulAt(t, 2026, 11, 30, 20, 50, 0, 0), seoulAt(t, 2026, 12, 1, 8, 0, 0, 0)},
		{"23:59 -> next day 08:00", seoulAt(t, 2026, 11, 30, 23, 59, 0, 0), seoulAt(t, 2026, 12, 1, 8, 0, 0, 0)},
		{"00:30 -> same day 08:00", seoulAt(t, 2026, 12, 1, 0, 30, 0, 0), seoulAt(t, 2026, 12, 1, 8, 0, 0, 0)},
		{"07:59:59.999 -> same day 08:00", seoulAt(t, 2026, 12, 1, 7, 59, 59, 999_000_000), seoulAt(t, 2026, 12, 1, 8, 0, 0, 0)},
		{"year end", seoulAt(t, 2026, 12, 31, 22, 0, 0, 0), seoulAt(t, 2027, 1, 1, 8, 0, 0, 0)},
		{"leap day", seoulAt(t, 2028, 2, 28, 21, 0, 0, 0), seoulAt(t, 2028, 2, 29, 8, 0, 0, 0)},
		{"host in UTC, 15:00 UTC is 00:00 KST", time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC), seoulAt(t, 2026, 12, 1, 8, 0, 0, 0)},
		{"host in UTC, 14:59 UTC is 23:59 KST", time.Date(2026, 11, 30, 14, 59, 0, 0, time.UTC), seoulAt(t, 2026, 12, 1, 8, 0, 0, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := w.NextOpen(tt.t)
			if !got.Equal(tt.want) {
				t.Fatalf("NextOpen(%s) = %s, want %s", tt.t, got, tt.want)
			}
			if !w.Allowed(got) {
				t.Fatalf("NextOpen result %s is not allowed", got)
			}
			if got.Before(tt.t) {
				t.Fatalf("NextOpen went back in time")
			}
			if d := w.UntilOpen(tt.t); d != tt.want.Sub(tt.t) {
				t.Fatalf("UntilOpen = %v, want %v", d, tt.want.Sub(tt.t))
			}
			// Nothing between t and NextOpen(t) is allowed: probe at 1 min steps.
			for p := tt.t; p.Before(got); p = p.Add(time.Minute) {
				if w.Allowed(p) {
					t.Fatalf("%s is allowed but before NextOpen %s", p, got)
				}
			}
		})
	}
}

// TestNextOpenMonotonic backs the held queue's design: messages held later
// never open earlier, so per-message TTLs expire in queue order.
func TestNextOpenMonotonic(t *testing.T) {
	w := Default()
	start := seoulAt(t, 2026, 11, 30, 0, 0, 0, 0)
	prev := w.NextOpen(start)
	for p := start; p.Before(start.Add(72 * time.Hour)); p = p.Add(7 * time.Minute) {
		n := w.NextOpen(p)
		if n.Before(prev) {
			t.Fatalf("NextOpen(%s) = %s is before the previous %s", p, n, prev)
		}
		prev = n
	}
}

func TestNextOpenDaylightSavingZone(t *testing.T) {
	ny := mustLoad(t, "America/New_York")
	w := Window{Start: 2*time.Hour + 30*time.Minute, End: 3 * time.Hour, Loc: ny}
	// 2026-03-08 02:30 does not exist in New York (clocks jump 02:00 -> 03:00).
	from := time.Date(2026, 3, 8, 1, 0, 0, 0, ny)
	got := w.NextOpen(from)
	if got.Before(from) {
		t.Fatalf("NextOpen went back: %s", got)
	}
	want := time.Date(2026, 3, 9, 2, 30, 0, 0, ny) // the next day that has 02:30
	if !got.Equal(want) || !w.Allowed(got) {
		t.Fatalf("NextOpen(%s) = %s, want %s", from, got, want)
	}
	// Start at 03:00 on the fall-back day (2026-11-01, 01:00-02:00 twice):
	// a window opening at 03:00 opens at wall-clock 03:00, not 25 h after
	// midnight minus one.
	w2 := Window{Start: 3 * time.Hour, End: 4 * time.Hour, Loc: ny}
	from2 := time.Date(2026, 11, 1, 0, 30, 0, 0, ny)
	if got, want := w2.NextOpen(from2), time.Date(2026, 11, 1, 3, 0, 0, 0, ny); !got.Equal(want) {
		t.Fatalf("NextOpen(%s) = %s, want %s", from2, got, want)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, start, end, zone string
		want                   Window
		wantField              string // in the error
	}{
		{"default", "08:00", "20:50", "Asia/Seoul", Default(), ""},
		{"until midnight", "09:30", "24:00", "UTC", Window{Start: 9*time.Hour + 30*time.Minute, End: 24 * time.Hour, Loc: time.UTC}, ""},
		{"start missing colon", "0800", "20:50", "Asia/Seoul", Window{}, "start"},
		{"start one digit hour", "8:00", "20:50", "Asia/Seoul", Window{}, "start"},
		{"start 24:00", "24:00", "20:50", "Asia/Seoul", Window{}, "start"},
		{"start letters", "ab:cd", "20:50", "Asia/Seoul", Window{}, "start"},
		{"start signed", "+8:00", "20:50", "Asia/Seoul", Window{}, "start"},
		{"end minutes 60", "08:00", "20:60", "Asia/Seoul", Window{}, "end"},
		{"end 24:01", "08:00", "24:01", "Asia/Seoul", Window{}, "end"},
		{"end with seconds", "08:00", "20:50:00", "Asia/Seoul", Window{}, "end"},
		{"across midnight refused", "22:00", "06:00", "Asia/Seoul", Window{}, "end"},
		{"empty window refused", "08:00", "08:00", "Asia/Seoul", Window{}, "end"},
		{"unknown zone", "08:00", "20:50", "Asia/Busan", Window{}, "zone"},
		{"empty zone", "08:00", "20:50", "", Window{}, "zone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Parse(tt.start, tt.end, tt.zone)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if w.Start != tt.want.Start || w.End != tt.want.End || w.Loc.String() != tt.want.Loc.String() {
					t.Fatalf("Parse = %v, want %v", w, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse(%q, %q, %q) = %v, want an error", tt.start, tt.end, tt.zone, w)
			}
			if !errors.Is(err, ErrWindow) {
				t.Errorf("error %v does not match ErrWindow", err)
			}
			if !strings.HasPrefix(err.Error(), "parse window: "+tt.wantField+" ") && !strings.HasPrefix(err.Error(), "parse window: "+tt.wantField+":") {
				t.Fatalf("error %q does not name field %q first", err, tt.wantField)
			}
		})
	}
}

func TestInvalidWindowNeverOpens(t *testing.T) {
	w := Window{Start: 22 * time.Hour, End: 6 * time.Hour, Loc: time.UTC}
	at := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	if w.Validate() == nil {
		t.Fatal("Validate accepted an inverted window")
	}
	if w.Allowed(at) || !w.NextOpen(at).Equal(at) {
		t.Fatalf("inverted window: Allowed %v, NextOpen %s", w.Allowed(at), w.NextOpen(at))
	}
}

func TestNilLocIsUTC(t *testing.T) {
	w := Window{Start: 8 * time.Hour, End: 20 * time.Hour}
	if !w.Allowed(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)) || w.Allowed(time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC)) {
		t.Fatal("nil Loc is not judged as UTC")
	}
	if got := w.String(); got != "08:00-20:00 UTC" {
		t.Fatalf("String() = %q", got)
	}
}

func TestStartedFrom(t *testing.T) {
	real := NewManual(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) // the host's time, unrelated
	start := seoulAt(t, 2026, 11, 30, 20, 49, 50, 0)
	c := StartedFrom(start, real)
	w := Default()
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("at creation Now() = %s, want %s", got, start)
	}
	if !w.Allowed(c.Now()) {
		t.Fatal("20:49:50 should be allowed")
	}
	real.Advance(9*time.Second + 999*time.Millisecond)
	if got := c.Now(); !got.Equal(start.Add(9*time.Second+999*time.Millisecond)) || !w.Allowed(got) {
		t.Fatalf("after 9.999 s Now() = %s (allowed %v)", got, w.Allowed(got))
	}
	real.Advance(time.Millisecond)
	if got := c.Now(); w.Allowed(got) {
		t.Fatalf("after 10 s Now() = %s should be outside the window", got)
	}
	if loc := c.Now().Location(); loc.String() != "Asia/Seoul" {
		t.Errorf("Now() location %s, want start's Asia/Seoul", loc)
	}
}

func TestStartedAtAdvancesWithRealTime(t *testing.T) {
	start := time.Date(2026, 11, 30, 11, 49, 50, 0, time.UTC)
	c := StartedAt(start)
	first := c.Now()
	if d := first.Sub(start); d < 0 || d > time.Second {
		t.Fatalf("Now() right after StartedAt is %v from start", d)
	}
	time.Sleep(20 * time.Millisecond)
	if d := c.Now().Sub(first); d < 20*time.Millisecond {
		t.Fatalf("clock advanced %v over a 20 ms sleep", d)
	}
}

func TestManual(t *testing.T) {
	m := NewManual(time.Unix(0, 0))
	if got := m.Advance(time.Hour); !got.Equal(time.Unix(3600, 0)) || !m.Now().Equal(got) {
		t.Fatalf("Advance: %s", got)
	}
	m.Set(time.Unix(10, 0))
	if !m.Now().Equal(time.Unix(10, 0)) {
		t.Fatalf("Set: %s", m.Now())
	}
}
