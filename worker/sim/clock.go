package sim

import (
	"sync"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/window"
)

// Clock is the model of the worker's clock (window.Clock): simulated time
// that moves only when the scheduler advances it or a model spends time
// (a slow ledger, a slow vendor). Nothing in the simulator sleeps. Safe for
// concurrent use: the handler reads it on its ledger goroutines.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

var _ window.Clock = (*Clock)(nil)

// NewClock returns a Clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the simulated time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d (d <= 0 leaves it) and returns the
// new reading.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.t = c.t.Add(d)
	}
	return c.t
}

// seoul is the window's zone, fixed +09:00 (Korea has no daylight saving
// since 1988), so the checker judges the window without the window
// package.
var seoul = time.FixedZone("KST", 9*60*60)

// inSendWindow is the checker's own reading of the default send window,
// 08:00 to 20:50 Asia/Seoul, end exclusive.
func inSendWindow(t time.Time) bool {
	l := t.In(seoul)
	m := l.Hour()*60 + l.Minute()
	return m >= 8*60 && m < 20*60+50
}
