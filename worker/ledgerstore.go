package worker

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// PruneInterval is how often the worker prunes its ledger (1 h).
const PruneInterval = time.Hour

// openLedgerStore opens cfg.LedgerPath (ledger.OpenStore) after the container
// placement check, and starts the retention loop (entries older than
// cfg.LedgerRetention by clock that ledger.CanPrune allows are pruned every
// PruneInterval). stop ends the loop and waits for it. Errors: ErrConfig wrapping ledger.ErrEphemeral
// (a bbolt ledger on a container's own file system without
// LEDGER_EPHEMERAL_OK=true), or the store's open error.
func openLedgerStore(ctx context.Context, cfg Config, clock window.Clock, log *slog.Logger) (led ledger.Store, stop func(), err error) {
	if err := ledger.CheckPlacement(cfg.LedgerPath, ledger.ReadHost(), cfg.LedgerEphemeralOK); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	led, err = ledger.OpenStore(ctx, cfg.LedgerPath)
	if err != nil {
		return nil, nil, fmt.Errorf("open ledger: %w", err)
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() {
		ledger.PruneEvery(pctx, led, cfg.LedgerRetention, PruneInterval, clock.Now, log)
	})
	return led, func() { cancel(); wg.Wait() }, nil
}

// GroupCommitDelay is the longest a lone ledger Begin or Finish waits for
// company under group commit (ledger.Ledger.GroupCommit): at concurrency
// 1 the next delivery's Begin follows a sent message's Finish by a
// fraction of it (docs/worker.md, Cost per message).
const GroupCommitDelay = time.Millisecond

// groupCommit turns on the bbolt ledger's group commit of message k's
// Finish with k+1's Begin where it pairs them: one message at a time
// (Concurrency 1) and no pacing (SendInterval 0: a paced worker waits
// between messages, so each would wait GroupCommitDelay alone). It
// reports whether it did; the Handler then releases its slot after the
// send (HandlerConfig.ReleaseAfterSend). PostgreSQL keeps one
// transaction per call.
func groupCommit(cfg Config, led Ledger) bool {
	b, ok := led.(*ledger.Ledger)
	if !ok || max(cfg.Concurrency, 1) != 1 || cfg.SendInterval > 0 {
		return false
	}
	b.GroupCommit(2, GroupCommitDelay)
	return true
}
