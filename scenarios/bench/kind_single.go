package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// workerConfig returns the worker's config for one run (its command line
// is its Args) and the pooled client's idle timeout.
func (b *Bench) workerConfig(topo queues.Topology, mode string, rtt, n int) (worker.Config, time.Duration, error) {
	c := lab.WorkerConfig(b.cfg.WorkerKnobs, b.stack, b.stack.AMQPURLsNetwork, topo, mode)
	c.MaxMessages = n
	ConfigureTransport(b.tr, &c)
	if b.cfg.CPUProfile == "on" {
		c.CPUProfile = vendormock.WorkerOutDir + "/" + cpuProfileFile
	}
	var idle time.Duration
	switch mode {
	case vendorapi.PerRequestName, vendorapi.SharedClosingName, vendorapi.PerRequestResumeName:
		// shared-closing models the case's engine too (Ktor CIO 2.3, TLS
		// 1.2 only), so PER_REQUEST_TLS caps it as well.
		c.TLSMax = b.cfg.PerRequestTLS
	case vendorapi.PooledName:
		idle = b.clientIdle(rtt)
		if idle <= 0 {
			return worker.Config{}, 0, fmt.Errorf("pooled idle timeout: keepalive_timeout %s is too short for RTT %d ms", b.stack.KeepaliveTimeout, rtt)
		}
		c.IdleConnTimeout = idle
	}
	return c, idle, nil
}

// singleKind runs one Go worker container (1 CPU) and samples its
// TIME_WAIT sockets while it runs.
type singleKind struct {
	b        *Bench
	timeWait *results.TimeWait
}

func (k *singleKind) run(ctx context.Context, p *point) (err error) {
	b := k.b
	published := fmt.Sprintf("%d messages published", p.n)
	if p.feed != nil {
		published = fmt.Sprintf("%d warm-up messages published, %d to come at their gaps", b.cfg.Warmup, p.n-b.cfg.Warmup)
	}
	logf(b.w, "%s: self-check RTT %.1f ms, new connection's first byte %.1f ms (TCP_HANDSHAKE=%s); %s; starting the worker (1 CPU)",
		p.label, lab.MS(p.selfRTT), lab.MS(p.selfNew), b.cfg.TCPHandshake, published)
	env := lab.WorkerEnv(b.stack)
	if editWorkerEnv != nil {
		editWorkerEnv(env)
	}
	if b.stateDir != "" {
		// WORKER_STATE=tmpfs puts the bench's ledger on tmpfs on purpose
		// (no fsync cost in the client comparison); it is copied next to
		// the run's files afterwards, so the worker may accept it.
		env[vendormock.EnvLedgerEphemeralOK] = "true"
	}
	wk, err := b.stack.StartWorker(ctx, vendormock.WorkerOptions{
		Name: p.name, Args: p.wcfg.Args(), Env: env, CPUs: 1, OutDir: p.dir,
		Grace: worker.ShutdownGrace(p.wcfg),
	})
	if err != nil {
		return p.fail("start worker", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
		defer cancel()
		if serr := wk.Stop(cctx, 10*time.Second); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop worker: %w", serr))
		}
	}()
	p.workerCPU = SampleWorkerCPU(ctx, wk.ContainerID())
	tw, tick := SampleTimeWait(ctx, b.w, wk.ContainerID())
	k.timeWait = tw
	wctx, feedDone := k.startFeed(ctx, p)
	werr := waitWorker(wctx, b.prog, wk, p.recordsPath, p.label, p.n, limitWatch(p.n, b.pointLimits(p), tick))
	if ferr := feedDone(werr); ferr != nil && ctx.Err() == nil {
		// The feed failed (the wait then ended with its context), or
		// the worker ended while the feed still published.
		if werr != nil {
			ferr = errors.Join(ferr, werr)
		}
		return p.fail("publish", ferr)
	}
	if err := werr; err != nil {
		re := p.fail("wait worker", err)
		if ctx.Err() == nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			logs, lerr := wk.Logs(cctx)
			cancel()
			if lerr == nil {
				re.WorkerLogs = lab.LastLines(logs, WorkerLogLines)
			}
		}
		return re
	}
	return nil
}

// startFeed starts p's feed (paced ARRIVALS) beside the worker: the
// returned context ends when the feed fails, and done waits for the feed
// and returns its error (nil without a feed, or once the feed published
// everything). After a wait that succeeded done lets the feed finish
// (writing the published file); after a failed one it stops the feed.
func (k *singleKind) startFeed(ctx context.Context, p *point) (context.Context, func(waitErr error) error) {
	if p.feed == nil {
		return ctx, func(error) error { return nil }
	}
	fctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		pub, err := p.feed.run(fctx, p.recordsPath)
		if err != nil {
			cancel()
		} else {
			p.published = pub
		}
		errc <- err
	}()
	return fctx, func(waitErr error) error {
		defer cancel()
		if waitErr == nil {
			return <-errc
		}
		select {
		case err := <-errc:
			return err
		default:
		}
		// The wait failed before the feed ended: stop it.
		cancel()
		if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("feed: stopped before publishing every message")
	}
}

func (k *singleKind) readRecords(_ *point, _ []records.Record, err error) error { return err }

func (k *singleKind) complete(_ *point, r *results.Result, _ []vendormock.AccessEntry) error {
	r.TimeWait = k.timeWait
	return nil
}
