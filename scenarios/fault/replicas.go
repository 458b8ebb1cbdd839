package fault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
)

// consumersTimeout bounds the wait for the replicas' consumers.
const consumersTimeout = 60 * time.Second

// ErrNoActive is returned by a replica step naming "active" when no
// running replica can be told to be the active one.
var ErrNoActive = errors.New("cannot tell which replica is active")

// startReplicas starts the scenario's replicas (Scenario.Workers) with
// the scenario's worker flags, follows their records files and waits until
// they consume.
func (s *scenarioRun) startReplicas(ctx context.Context) error {
	w := s.sc.Workers
	wcfg, err := s.workerConfig()
	if err != nil {
		return err
	}
	// Without single active consumer the worker refuses a bbolt ledger
	// (it can send twice): the negative control (no-sac-crash) says so.
	wcfg.CompetingLocalLedgerOK = !w.SAC() && w.Ledger != vendormock.LedgerPostgres
	ws, err := s.r.Stack.StartReplicas(ctx, vendormock.ReplicaOptions{
		Name:                   "fault-" + s.sc.Name,
		Count:                  w.Count,
		Ledger:                 w.Ledger,
		QueueType:              w.QueueType,
		NoSingleActiveConsumer: !w.SAC(),
		PostgresImage:          s.r.opts.Images.Postgres,
		// Through Toxiproxy (LedgerProxy), so a step can cut or slow it.
		PostgresAddr: fmt.Sprintf("%s:%d", vendormock.AliasToxiproxy, LedgerPort),
		Args:         lab.ReplicaArgs(wcfg),
		Grace:        worker.ShutdownGrace(wcfg),
		CPUs:         workerCPUs,
		OutDir:       s.dir,
	})
	s.started = time.Now()
	if ws != nil {
		s.ws = ws
		for _, rp := range ws.Replicas() {
			s.recs.Add(rp.RecordsPath())
		}
	}
	if err != nil {
		return err
	}
	s.r.logf("%s: %d replica(s), %s ledger, %s queues, single active consumer %t, shutdown grace %s",
		s.sc.Name, w.Count, w.Ledger, w.QueueType, w.SAC(), ws.Grace())
	return s.waitReplicas(ctx)
}

// waitReplicas waits until the main queue has one consumer per running
// replica. Under single active consumer a standby may be counted later:
// one consumer is then enough after consumersTimeout (logged).
func (s *scenarioRun) waitReplicas(ctx context.Context) error {
	up := s.running()
	logs := func() string { return s.replicaLogTails(ctx) }
	got, err := s.pub.pub.WaitConsumers(ctx, len(up), consumersTimeout, logs)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if got >= 1 && s.sc.Workers.SAC() {
		s.r.logf("%s: %d consumer(s) for %d running replicas after %s; going on (single active consumer)", s.sc.Name, got, len(up), consumersTimeout)
		return nil
	}
	return fmt.Errorf("replicas: %w", err)
}

// running returns the replicas not killed or stopped by a step.
func (s *scenarioRun) running() []*vendormock.Replica {
	var out []*vendormock.Replica
	for _, rp := range s.ws.Replicas() {
		if !s.down[rp.ID] {
			out = append(out, rp)
		}
	}
	return out
}

// replica resolves a step's replica reference ("" = ReplicaActive).
func (s *scenarioRun) replica(ctx context.Context, ref string) (*vendormock.Replica, error) {
	if ref != "" && ref != ReplicaActive {
		return s.ws.Replica(ref)
	}
	return s.active(ctx)
}

// active returns the active replica among the running ones: the only one
// whose /healthz says active (and not standby); else the one whose records
// file has the latest record; else the only one running. Errors:
// ErrNoActive naming the running replicas.
func (s *scenarioRun) active(ctx context.Context) (*vendormock.Replica, error) {
	up := s.running()
	var said []*vendormock.Replica
	for _, rp := range up {
		code, body, err := rp.Healthz(ctx)
		b := strings.ToLower(body)
		if err == nil && code == 200 && strings.Contains(b, "active") && !strings.Contains(b, "standby") {
			said = append(said, rp)
		}
	}
	if len(said) == 1 {
		s.r.logf("%s: active replica %s (its /healthz)", s.sc.Name, said[0].ID)
		return said[0], nil
	}
	if err := s.recs.Poll(); err != nil {
		return nil, err
	}
	var best *vendormock.Replica
	var bestEnd time.Time
	for _, rp := range up {
		if f := s.recs.File(rp.RecordsPath()); f != nil {
			if last, ok := f.Last(); ok && last.End.After(bestEnd) {
				best, bestEnd = rp, last.End
			}
		}
	}
	if best != nil {
		s.r.logf("%s: active replica %s (latest record)", s.sc.Name, best.ID)
		return best, nil
	}
	if len(up) == 1 {
		return up[0], nil
	}
	var ids []string
	for _, rp := range up {
		ids = append(ids, rp.ID)
	}
	return nil, fmt.Errorf("%w: running %s, none says active in /healthz or has a record; name one", ErrNoActive, strings.Join(ids, ", "))
}

// replicaStep runs kill_worker, stop_worker, add_worker or
// recreate_worker; ok false for any other step.
func (s *scenarioRun) replicaStep(ctx context.Context, st Step) (ok bool, err error) {
	switch {
	case st.KillWorker != nil:
		rp, err := s.replica(ctx, st.KillWorker.Replica)
		if err != nil {
			return true, err
		}
		s.r.logf("%s: SIGKILL to replica %s", s.sc.Name, rp.ID)
		s.down[rp.ID] = true
		err = rp.Kill(ctx)
		s.saveReplicaLog(ctx, rp)
		return true, err
	case st.StopWorker != nil:
		rp, err := s.replica(ctx, st.StopWorker.Replica)
		if err != nil {
			return true, err
		}
		s.r.logf("%s: SIGTERM to replica %s (grace %s)", s.sc.Name, rp.ID, s.ws.Grace())
		s.down[rp.ID] = true
		err = rp.Stop(ctx)
		s.saveReplicaLog(ctx, rp)
		return true, err
	case st.AddWorker != nil:
		rp, err := s.ws.Add(ctx)
		if rp != nil {
			s.recs.Add(rp.RecordsPath())
		}
		if err != nil {
			return true, err
		}
		s.r.logf("%s: replica %s added", s.sc.Name, rp.ID)
		return true, s.waitReplicas(ctx)
	case st.RecreateWorker != nil:
		rp, err := s.replica(ctx, st.RecreateWorker.Replica)
		if err != nil {
			return true, err
		}
		s.r.logf("%s: replica %s recreated (SIGKILL; ledger kept: %t)", s.sc.Name, rp.ID, st.RecreateWorker.KeepLedger)
		s.saveReplicaLog(ctx, rp)
		if err := rp.Recreate(ctx, st.RecreateWorker.KeepLedger); err != nil {
			return true, err
		}
		s.down[rp.ID] = false
		return true, s.waitReplicas(ctx)
	}
	return false, nil
}

// restartBroker restarts RabbitMQ, then reconnects the runner and the
// scenario's publisher; the workers reconnect by themselves.
func (s *scenarioRun) restartBroker(ctx context.Context, st *RestartBrokerStep) error {
	s.r.logf("%s: restarting RabbitMQ", s.sc.Name)
	if err := s.r.Stack.RestartRabbitMQ(ctx, st.StopTimeout.D()); err != nil {
		return err
	}
	if err := s.r.reconnect(); err != nil {
		return err
	}
	return s.pub.pub.Reconnect(s.r.conn)
}

// reconnect dials the broker again (its host port may have changed).
func (r *Runner) reconnect() error {
	if old := r.conn; old != nil {
		// In the background: closing a connection to a node cut off
		// waits for its heartbeat timeout.
		go func() { _ = old.Close() }()
	}
	conn, err := r.dialBroker()
	if err != nil {
		return fmt.Errorf("reconnect to rabbitmq: %w", err)
	}
	r.conn = conn
	return nil
}

// stopReplicas stops every running replica (SIGTERM: each finishes its
// message in flight) and saves every replica's log.
func (s *scenarioRun) stopReplicas(ctx context.Context) error {
	var errs []error
	for _, rp := range s.running() {
		errs = append(errs, rp.Stop(ctx))
		s.down[rp.ID] = true
	}
	for _, rp := range s.ws.Replicas() {
		s.saveReplicaLog(ctx, rp)
	}
	return errors.Join(errs...)
}

// saveReplicaLog writes the replica's current container log to
// <dir>/<id>.log, appending to what earlier containers of it left.
func (s *scenarioRun) saveReplicaLog(ctx context.Context, rp *vendormock.Replica) {
	logs, err := rp.Logs(context.WithoutCancel(ctx))
	if err != nil || logs == "" {
		return
	}
	id := rp.ContainerID()
	if s.savedLogs[id] {
		return
	}
	s.savedLogs[id] = true
	f, err := os.OpenFile(filepath.Join(s.dir, rp.ID+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(logs)
}

// replicaLogTails returns the last log lines of every running replica.
func (s *scenarioRun) replicaLogTails(ctx context.Context) string {
	var b strings.Builder
	for _, rp := range s.running() {
		logs, _ := rp.Logs(ctx)
		fmt.Fprintf(&b, "--- %s\n%s\n", rp.ID, lab.LastLines(logs, 10))
	}
	return b.String()
}
