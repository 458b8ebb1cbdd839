package window

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	// Embed the IANA zone database (about 450 KB) so Asia/Seoul resolves in
	// a FROM scratch image with no /usr/share/zoneinfo.
	_ "time/tzdata"
)

// Default window bounds, as offsets from local midnight in DefaultZone.
const (
	DefaultStart = 8 * time.Hour                 // 08:00
	DefaultEnd   = 20*time.Hour + 50*time.Minute // 20:50, exclusive
	DefaultZone  = "Asia/Seoul"
)

// Window is a daily interval [Start, End) in a time zone.
//
// Start and End are wall-clock offsets from local midnight (08:00 is
// 8*time.Hour), with 0 <= Start < End <= 24h: windows that cross midnight
// are not supported (Parse refuses them; split such a rule into two
// windows). A nil Loc is treated as UTC. Build one with Default or Parse, or
// check a hand-built one with Validate.
type Window struct {
	Start time.Duration // offset from local midnight, inclusive
	End   time.Duration // offset from local midnight, exclusive
	Loc   *time.Location
}

// ErrWindow is the sentinel every Parse and Validate error matches with
// errors.Is.
var ErrWindow = errors.New("invalid send window")

// seoul is Asia/Seoul from the embedded database. If that ever failed, a
// fixed +09:00 is exact: Korea has kept KST without daylight saving since
// 1988.
var seoul = sync.OnceValue(func() *time.Location {
	loc, err := time.LoadLocation(DefaultZone)
	if err != nil {
		return time.FixedZone("KST", 9*60*60)
	}
	return loc
})

// Default returns 08:00-20:50 Asia/Seoul (the case in docs/outcomes.md:
// advertising messages may not go out after 20:50 KST). This package
// imports time/tzdata, so it works in a FROM scratch image.
func Default() Window {
	return Window{Start: DefaultStart, End: DefaultEnd, Loc: seoul()}
}

// Parse builds a window from "HH:MM" bounds (00:00 to 23:59; end may also be
// "24:00" for midnight) and an IANA zone name ("Asia/Seoul", "UTC").
// Errors match ErrWindow and name the bad field: start, end or zone; a start
// not before end is an error naming end (no window across midnight).
func Parse(start, end, zone string) (Window, error) {
	s, err := parseHHMM(start, false)
	if err != nil {
		return Window{}, fmt.Errorf("parse window: start %q: %w: %w", start, err, ErrWindow)
	}
	e, err := parseHHMM(end, true)
	if err != nil {
		return Window{}, fmt.Errorf("parse window: end %q: %w: %w", end, err, ErrWindow)
	}
	if zone == "" {
		return Window{}, fmt.Errorf("parse window: zone: empty, want an IANA name such as %s: %w", DefaultZone, ErrWindow)
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return Window{}, fmt.Errorf("parse window: zone %q: unknown IANA time zone: %w", zone, ErrWindow)
	}
	w := Window{Start: s, End: e, Loc: loc}
	if err := w.Validate(); err != nil {
		return Window{}, fmt.Errorf("parse window: %w", err)
	}
	return w, nil
}

func parseHHMM(s string, allow24 bool) (time.Duration, error) {
	hh, mm, ok := strings.Cut(s, ":")
	if !ok || len(hh) != 2 || len(mm) != 2 {
		return 0, errors.New("want HH:MM")
	}
	h, err1 := strconv.Atoi(hh)
	m, err2 := strconv.Atoi(mm)
	if err1 != nil || err2 != nil || h < 0 || m < 0 || hh[0] == '+' || mm[0] == '+' {
		return 0, errors.New("want HH:MM with digits")
	}
	if m > 59 || h > 24 || (h == 24 && (m != 0 || !allow24)) {
		if allow24 {
			return 0, errors.New("out of range 00:00-24:00")
		}
		return 0, errors.New("out of range 00:00-23:59")
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, nil
}

// Validate checks 0 <= Start < End <= 24h. Errors match ErrWindow and name
// the field.
func (w Window) Validate() error {
	switch {
	case w.Start < 0 || w.Start >= 24*time.Hour:
		return fmt.Errorf("start %s: out of range 00:00-23:59: %w", hhmm(w.Start), ErrWindow)
	case w.End <= 0 || w.End > 24*time.Hour:
		return fmt.Errorf("end %s: out of range 00:01-24:00: %w", hhmm(w.End), ErrWindow)
	case w.Start >= w.End:
		return fmt.Errorf("end %s: not after start %s (windows across midnight are not supported): %w", hhmm(w.End), hhmm(w.Start), ErrWindow)
	}
	return nil
}

// String returns "08:00-20:50 Asia/Seoul".
func (w Window) String() string {
	return hhmm(w.Start) + "-" + hhmm(w.End) + " " + w.loc().String()
}

func hhmm(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	h := d / time.Hour
	m := (d % time.Hour) / time.Minute
	s := fmt.Sprintf("%s%02d:%02d", sign, h, m)
	if rest := d % time.Minute; rest != 0 {
		s += fmt.Sprintf("+%s", rest)
	}
	return s
}

func (w Window) loc() *time.Location {
	if w.Loc == nil {
		return time.UTC
	}
	return w.Loc
}

// sinceMidnight returns the wall-clock offset of t from its local midnight,
// to the nanosecond (20:49:59.999 is 20h49m59.999s).
func sinceMidnight(t time.Time) time.Duration {
	h, m, s := t.Clock()
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute +
		time.Duration(s)*time.Second + time.Duration(t.Nanosecond())
}

// Allowed reports whether t lies inside the window: t is converted to Loc
// first, so a host clock in any zone (UTC, America/New_York) is judged on
// Seoul's wall clock. Start is inclusive, End exclusive.
func (w Window) Allowed(t time.Time) bool {
	off := sinceMidnight(t.In(w.loc()))
	return off >= w.Start && off < w.End
}

// NextOpen returns the first instant >= t at which the window is open: t
// itself when Allowed(t), else today's Start (before it) or tomorrow's
// Start (at or after End), in Loc. In a zone with daylight saving, a day
// whose Start falls in the skipped hour is passed over. A window that fails
// Validate never opens; NextOpen then returns t unchanged, so call Validate
// first.
func (w Window) NextOpen(t time.Time) time.Time {
	if w.Allowed(t) || w.Validate() != nil {
		return t
	}
	local := t.In(w.loc())
	y, mo, d := local.Date()
	for i := 0; i < 4; i++ {
		// time.Date normalises day overflow (month and year ends) and
		// wall times that a daylight-saving jump skips.
		open := time.Date(y, mo, d+i, 0, 0, 0, 0, w.loc()).Add(w.Start)
		if h, m, s := open.In(w.loc()).Clock(); time.Duration(h)*time.Hour+time.Duration(m)*time.Minute+time.Duration(s)*time.Second != w.Start {
			// Adding the offset to midnight crossed a daylight-saving
			// change: rebuild from the wall clock instead.
			open = time.Date(y, mo, d+i, int(w.Start/time.Hour), int(w.Start%time.Hour/time.Minute), 0, 0, w.loc())
		}
		if !open.Before(t) && w.Allowed(open) {
			return open
		}
	}
	return t
}

// UntilOpen returns how long from t until the window opens: 0 when
// Allowed(t), else NextOpen(t) - t (at most about 11 h 10 min for Default).
// The worker sets it, rounded up to whole ms, as the Expiration of a
// message it parks in the held queue.
func (w Window) UntilOpen(t time.Time) time.Duration { return w.NextOpen(t).Sub(t) }

// Clock tells the time. The worker reads time only through a Clock.
type Clock interface{ Now() time.Time }

// System is the host clock.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// StartedAt returns a clock that reads start at the moment it is created
// and then advances with real time (the lab's -clock-start flag, to make a
// bulk run cross 20:50). Real time is the host's monotonic clock, so a host
// clock step does not move it. Equivalent to StartedFrom(start, System{}).
func StartedAt(start time.Time) Clock { return StartedFrom(start, System{}) }

// StartedFrom is StartedAt with the real-time source injected: the clock
// reads start + (real.Now() - real.Now() at creation). Tests pass a Manual
// clock as real to move time by hand.
func StartedFrom(start time.Time, real Clock) Clock {
	return &started{start: start, real: real, origin: real.Now()}
}

type started struct {
	start, origin time.Time
	real          Clock
}

func (c *started) Now() time.Time { return c.start.Add(c.real.Now().Sub(c.origin)) }

// Manual is a clock that moves only when told; safe for concurrent use.
// For tests of the worker and the lab.
type Manual struct {
	mu sync.Mutex
	t  time.Time
}

// NewManual returns a Manual clock reading t.
func NewManual(t time.Time) *Manual { return &Manual{t: t} }

// Now returns the time last set.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t
}

// Set makes the clock read t.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	m.t = t
	m.mu.Unlock()
}

// Advance moves the clock by d (negative moves it back) and returns the new
// reading.
func (m *Manual) Advance(d time.Duration) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.t = m.t.Add(d)
	return m.t
}

// Compile-time checks that the clocks satisfy Clock.
var (
	_ Clock = System{}
	_ Clock = (*Manual)(nil)
	_ Clock = (*started)(nil)
)
