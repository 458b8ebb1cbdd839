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
