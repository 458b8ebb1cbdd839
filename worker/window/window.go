// Package window implements the send window for advertising messages and an
// injectable clock.
//
// Rule (from the case in DESIGN.md): advertising messages may not go out
// after 20:50 Asia/Seoul; they may go out again from 08:00.
//
// CONTRACT STUB (written by the lead): keep the exported names and
// signatures, fill in the bodies.
package window

import "time"

// Default window bounds, as offsets from local midnight in DefaultZone.
const (
	DefaultStart = 8 * time.Hour                  // 08:00
	DefaultEnd   = 20*time.Hour + 50*time.Minute  // 20:50, exclusive
	DefaultZone  = "Asia/Seoul"
)

// Window is a daily interval [Start, End) in a time zone.
type Window struct {
	Start time.Duration // offset from local midnight, inclusive
	End   time.Duration // offset from local midnight, exclusive
	Loc   *time.Location
}

// Default returns 08:00-20:50 Asia/Seoul. The binary must import time/tzdata
// so this works in a FROM scratch image.
func Default() Window { panic("TODO") }

// Parse builds a window from "HH:MM" bounds and an IANA zone name.
// Errors name the bad field.
func Parse(start, end, zone string) (Window, error) { panic("TODO") }

// Allowed reports whether t lies inside the window.
func (w Window) Allowed(t time.Time) bool { panic("TODO") }

// NextOpen returns the first instant >= t at which the window is open.
func (w Window) NextOpen(t time.Time) time.Time { panic("TODO") }

// Clock tells the time. The worker reads time only through a Clock.
type Clock interface{ Now() time.Time }

// System is the host clock.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// StartedAt returns a clock that reads start at the moment it is created
// and then advances with real time (the lab's -clock-start flag, to make a
// bulk run cross 20:50).
func StartedAt(start time.Time) Clock { panic("TODO") }
