package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
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
	case vendorapi.PerRequestName, vendorapi.PerRequestResumeName:
		c.TLSMax = b.cfg.PerRequestTLS
	case vendorapi.PooledName:
		idle = netmodel.IdleConnTimeout(b.stack.KeepaliveTimeout, rtt)
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
	logf(b.w, "%s: self-check RTT %.1f ms, new connection's first byte %.1f ms (TCP_HANDSHAKE=%s); %d messages published; starting the worker (1 CPU)",
		p.label, lab.MS(p.selfRTT), lab.MS(p.selfNew), b.cfg.TCPHandshake, p.n)
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
	tw, tick := sampleTimeWait(ctx, b.w, wk.ContainerID())
	k.timeWait = tw
	if err := waitWorker(ctx, b.prog, wk, p.recordsPath, p.label, p.n, limitWatch(p.n, b.limits(p.n, p.rtt), tick)); err != nil {
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

func (k *singleKind) readRecords(_ *point, _ []records.Record, err error) error { return err }

func (k *singleKind) complete(_ *point, r *results.Result, _ []vendormock.AccessEntry) error {
	r.TimeWait = k.timeWait
	return nil
}
