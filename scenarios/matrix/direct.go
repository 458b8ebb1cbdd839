package matrix

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// runDirect runs `notifier-worker direct` in the worker container (1 CPU)
// for one cell and reads its records and nginx's access log.
func (m *matrixRun) runDirect(ctx context.Context, spec matrixCellSpec) (results.MatrixCell, error) {
	label := spec.name()
	fail := func(step string, err error) error {
		return &bench.RunError{Mode: label, RTTMS: m.cfg.RTTMS(), Step: step, Err: err}
	}
	if _, err := m.stack.SelfCheck(ctx, m.cfg.RTTMS()); err != nil {
		return results.MatrixCell{}, fail("self-check", fmt.Errorf("%w: %w", bench.ErrSelfCheck, err))
	}
	runDir := filepath.Join(m.workDir, label)
	if err := lab.StateDir(runDir); err != nil {
		return results.MatrixCell{}, fail("start worker", err)
	}
	offset, err := m.stack.AccessLogSize()
	if err != nil {
		return results.MatrixCell{}, fail("read access log", err)
	}
	prefix := bench.NewRunID() + "-" + label
	wcfg := m.cfg.WorkerKnobs
	wcfg.VendorURL, wcfg.CAFile, wcfg.ClientID = m.stack.VendorURL, vendormock.WorkerCAPath, m.stack.ClientID
	wcfg.Strategy, wcfg.RecordsPath, wcfg.OpsAddr = spec.mode, vendormock.WorkerOutDir+"/"+lab.RecordsFile, worker.OpsAddrOff
	bench.ConfigureTransport(m.transport(spec), &wcfg)
	if spec.mode == vendorapi.PerRequestName {
		wcfg.TLSMax = m.cfg.PerRequestTLS
	} else {
		wcfg.IdleConnTimeout = netmodel.IdleConnTimeout(m.stack.KeepaliveTimeout, m.cfg.RTTMS())
	}
	args := worker.DirectOptions{Count: m.cfg.Count, Warmup: m.cfg.Warmup, RefKeyPrefix: prefix}.Args(wcfg)
	wk, err := m.stack.StartWorker(ctx, vendormock.WorkerOptions{
		Name: label, Args: args, Env: lab.WorkerEnv(m.stack), CPUs: 1, OutDir: runDir,
		Grace: worker.ShutdownGrace(wcfg),
	})
	if err != nil {
		return results.MatrixCell{}, fail("start worker", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bench.CleanupTimeout)
		defer cancel()
		_ = wk.Stop(cctx, 10*time.Second)
	}()
	wctx, cancel := context.WithTimeout(ctx, bench.WorkerTimeout(m.cfg.Count+m.cfg.Warmup, m.cfg.RTTMS(), m.cfg.ServerDelayMS))
	stopTW := sampleClientTimeWait(ctx, wk.ContainerID(), 200*time.Millisecond)
	code, err := wk.Wait(wctx)
	cancel()
	timeWait := stopTW()
	if err != nil || code != 0 {
		re := &bench.RunError{Mode: label, RTTMS: m.cfg.RTTMS(), Step: "wait worker", Err: fmt.Errorf("%w: exit code %d: %v", bench.ErrWorkerExit, code, err)}
		lctx, lcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if logs, lerr := wk.Logs(lctx); lerr == nil {
			re.WorkerLogs = lab.LastLines(logs, bench.WorkerLogLines)
		}
		lcancel()
		return results.MatrixCell{}, re
	}

	// The direct driver's refkeys: PREFIX-wN warm-up, PREFIX-N measured.
	var published []reconcile.Published
	for i := 1; i <= m.cfg.Warmup; i++ {
		published = append(published, reconcile.Published{RefKey: fmt.Sprintf("%s-w%d", prefix, i), Valid: true, Warmup: true})
	}
	for i := 1; i <= m.cfg.Count; i++ {
		published = append(published, reconcile.Published{RefKey: fmt.Sprintf("%s-%d", prefix, i), Valid: true})
	}
	c := m.newCell(spec)
	if err := addRecordsPublished(&c, filepath.Join(runDir, lab.RecordsFile), published); err != nil {
		return results.MatrixCell{}, fail("collect", err)
	}
	entries, _, err := m.stack.ReadAccessLog(offset)
	if err != nil {
		return results.MatrixCell{}, fail("collect", err)
	}
	cs := bench.CountConnectionsTo(entries, bench.StackSendPath(m.stack))
	c.Connections, c.Protocols = cs.TCPConnections, bench.CountProtocols(entries)
	c.ClientTimeWait = timeWait
	return c, nil
}
