package ledger

import (
	"context"
	"log/slog"
	"time"
)

// PruneEvery is the ledger's retention loop: it deletes the entries whose
// last update is older than retention and that CanPrune allows
// (Store.Prune with cutoff now()-retention)
// once at start and then every interval, until ctx is done. Each run is
// logged at info level with how many entries it deleted, a failed run at
// warn level (the next run tries again). now is the clock the entries were
// written with. It returns when ctx is done.
func PruneEvery(ctx context.Context, s Store, retention, interval time.Duration, now func() time.Time, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		cutoff := now().Add(-retention)
		start := time.Now()
		n, err := s.Prune(ctx, cutoff)
		if err != nil && ctx.Err() == nil {
			log.Warn("ledger prune failed; next try in "+interval.String(), "error", err.Error())
		} else if err == nil {
			log.Info("ledger pruned", "deleted", n, "cutoff", cutoff, "retention", retention.String(),
				"took_ms", time.Since(start).Milliseconds())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
