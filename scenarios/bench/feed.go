package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
)

// feed publishes a paced point's measured messages at their gaps while
// the worker runs (ARRIVALS other than back-to-back): it waits until the
// worker has handled the warm-up messages, then publishes the i-th
// measured message gaps[0] + ... + gaps[i] after that (absolute times, so
// a slow publish does not shift the ones after it); a malformed message
// goes right after the measured one before it. Each publish is
// confirmed before the next.
type feed struct {
	pub    *lab.Publisher
	items  []item
	gaps   []time.Duration // one per measured message, run time
	warmup int
	path   string // the published file, written when the feed ends
	w      io.Writer
}

// feedPoll is how often the feed reads the records file while it waits
// for the warm-up messages.
const feedPoll = 50 * time.Millisecond

// run publishes every item, writes the published file and closes the
// publisher; it returns the published list. recordsPath is the worker's
// records file (its lines count the handled warm-up messages).
func (f *feed) run(ctx context.Context, recordsPath string) (_ []reconcile.Published, err error) {
	defer f.pub.Close()
	recs := lab.NewRecords(recordsPath)
	for f.warmup > 0 {
		if perr := recs.Poll(); perr == nil && recs.Len() >= f.warmup {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(feedPoll):
		}
	}
	logf(f.w, "warm-up handled; publishing %d measured messages over %s (ARRIVALS)", len(f.gaps), sumGaps(f.gaps).Round(time.Second))
	start, measured := time.Now(), 0
	var at time.Duration
	for _, it := range f.items {
		if it.rec.Valid && !it.rec.Warmup {
			if measured >= len(f.gaps) {
				return nil, fmt.Errorf("feed: more measured messages than gaps (%d)", len(f.gaps))
			}
			at += f.gaps[measured]
			measured++
			if d := time.Until(start.Add(at)); d > 0 {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(d):
				}
			}
		}
		if err := f.pub.PublishConfirmed(ctx, it.id, it.body, it.rec); err != nil {
			return nil, err
		}
	}
	if err := lab.WritePublished(f.path, f.pub.Published()); err != nil {
		return nil, err
	}
	return f.pub.Published(), nil
}
