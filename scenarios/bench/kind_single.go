package scenarios

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// waiter is the part of *vendormock.Worker that waitWorker uses.
type waiter interface {
	Wait(ctx context.Context) (int, error)
}

var _ waiter = (*vendormock.Worker)(nil)

// workerArgs returns the notifier-worker flags for one run (flag names of
// worker/cmd/notifier-worker) and the pooled client's idle timeout.
func (b *bench) workerArgs(topo queues.Topology, mode string, rtt, n int) ([]string, time.Duration, error) {
	args := append(lab.WorkerArgs(b.stack, b.stack.AMQPURLNetwork, topo, mode), "-max-messages", strconv.Itoa(n))
	args = append(args, TransportArgs(b.cfg.Transport())...)
	if b.cfg.CPUProfile == "on" {
		args = append(args, "-cpu-profile", vendormock.WorkerOutDir+"/"+cpuProfileFile)
	}
	var idle time.Duration
	switch mode {
	case vendorapi.PerRequestName:
		args = append(args, "-tls-max", b.cfg.PerRequestTLS)
	case vendorapi.PooledName:
		idle = netmodel.IdleConnTimeout(b.stack.KeepaliveTimeout, rtt)
		if idle <= 0 {
			return nil, 0, fmt.Errorf("pooled idle timeout: keepalive_timeout %s is too short for RTT %d ms", b.stack.KeepaliveTimeout, rtt)
		}
		args = append(args, "-idle-conn-timeout", idle.String())
	}
	return args, idle, nil
}

// waitWorker tails the records file for progress until the worker exits,
// and errors when it exits non-zero or early, stalls for StallTimeout, or
// outlives WorkerTimeout.
func (b *bench) waitWorker(ctx context.Context, wk waiter, recordsPath, label string, n, rtt int) error {
	type exit struct {
		code int
		err  error
	}
	exited := make(chan exit, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		code, err := wk.Wait(wctx)
		exited <- exit{code, err}
	}()

	prog := NewProgress(b.w, label, n)
	defer prog.Finish()
	counter := lab.NewRecords(recordsPath)
	timeout, stall := WorkerTimeout(n, rtt, b.cfg.ServerDelayMS), StallTimeout
	if b.timeout > 0 {
		timeout = b.timeout
	}
	if b.stall > 0 {
		stall = b.stall
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	handled, lastChange := 0, time.Now()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e := <-exited:
			if err := counter.Poll(); err == nil {
				handled = counter.Len()
				prog.Set(handled)
			}
			switch {
			case e.err != nil:
				return fmt.Errorf("wait for worker: %w", e.err)
			case e.code != 0:
				return fmt.Errorf("%w: exit code %d after %d of %d messages", ErrWorkerExit, e.code, handled, n)
			case handled < n:
				return fmt.Errorf("%w: exit code 0 after %d of %d messages", ErrWorkerExit, handled, n)
			}
			return nil
		case <-deadline.C:
			return fmt.Errorf("%w: %d of %d messages handled in %s", ErrWorkerTimeout, handled, n, timeout)
		case <-tick.C:
			if b.onTick != nil {
				b.onTick()
			}
			if err := counter.Poll(); err != nil {
				return err
			}
			done := counter.Len()
			if done != handled {
				handled, lastChange = done, time.Now()
				prog.Set(done)
			} else if time.Since(lastChange) > stall {
				return fmt.Errorf("%w: no message handled for %s (%d of %d)", ErrWorkerTimeout, stall, handled, n)
			}
		}
	}
}
