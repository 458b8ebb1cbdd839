package fault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// The nemesis steps: pause/unpause (docker pause: a frozen process, as a
// GC stall or a VM pause) and partition/heal (the target cut off the
// run's network) of any container of the run, by a Target name. Whatever
// a scenario leaves paused or partitioned, or leaves so because a step
// failed, is undone when it ends (undoList). The catalog README
// ("Nemesis") lists the vocabulary.

// Targets a nemesis step may name besides the replicas (ReplicaActive,
// "worker-1" ..) and the stack's services (ServiceTargets).
const (
	// TargetWorker is the one worker of a scenario without a workers
	// section.
	TargetWorker = "worker"
	// LedgerProxy is the Toxiproxy proxy every replica reaches the
	// PostgreSQL ledger through (workers.ledger postgres), so a step can
	// blackhole (timeout toxic, timeout 0), slow (latency) or cut it
	// (proxy_disable: ledger).
	LedgerProxy = "ledger"
	// LedgerPort is LedgerProxy's port in the Toxiproxy container.
	LedgerPort = 5432
	// DefaultHealthzWithin bounds a check_healthz step without within.
	DefaultHealthzWithin = 30 * time.Second
)

// ServiceTargets are the stack's containers a nemesis step may name, by
// their alias on the run's network: RabbitMQ, PostgreSQL (workers.ledger
// postgres), nginx, WireMock and Toxiproxy. On a broker cluster
// (Scenario.BrokerNodes) the nodes rabbitmq-1 .. rabbitmq-N replace
// rabbitmq.
var ServiceTargets = vendormock.Services

// HealthzCheck is a check_healthz step: within Within, the replica's
// /healthz must answer Status (polled every 250 ms; the first match ends
// the step). Its result is a Check of the verdict: a miss fails the
// scenario, the steps go on.
type HealthzCheck struct {
	Replica string   `yaml:"replica"` // ReplicaActive (default) or an id
	Status  int      `yaml:"status"`  // 200 (ready) or 503 (broker channel or ledger not answering)
	Within  Duration `yaml:"within"`  // default DefaultHealthzWithin, at most 5m
}

// undoList holds what the scenario's faults left to put back, newest
// last: each entry is keyed by the step that made it ("pause nginx") and
// taken off by the step that undoes it ("unpause nginx"); run undoes the
// rest, newest first, when the scenario ends whatever happened.
type undoList struct {
	items []undoItem
}

type undoItem struct {
	key    string // "pause <target>", "partition <target>"
	target string // the step's target
	what   string // for the log: "unpause nginx"
	fn     func(context.Context) error
}

// push records an undo of target under key.
func (u *undoList) push(key, target, what string, fn func(context.Context) error) {
	u.items = append(u.items, undoItem{key: key, target: target, what: what, fn: fn})
}

// has reports whether an undo is pending under key.
func (u *undoList) has(key string) bool {
	return slices.ContainsFunc(u.items, func(it undoItem) bool { return it.key == key })
}

// take removes and returns the newest undo under key.
func (u *undoList) take(key string) (undoItem, bool) {
	for i := len(u.items) - 1; i >= 0; i-- {
		if u.items[i].key == key {
			it := u.items[i]
			u.items = slices.Delete(u.items, i, i+1)
			return it, true
		}
	}
	return undoItem{}, false
}

// run undoes every pending entry, newest first, each even when an earlier
// one failed, and empties the list. It returns the targets put back, in
// that order without repeats. logf (may be nil) gets one line each.
// Errors of each undo are joined.
func (u *undoList) run(ctx context.Context, logf func(string, ...any)) ([]string, error) {
	var errs []error
	var done []string
	for i := len(u.items) - 1; i >= 0; i-- {
		it := u.items[i]
		err := it.fn(ctx)
		if logf != nil {
			logf("undo at the end: %s: %s", it.what, okWord(err == nil))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("undo %s: %w", it.what, err))
		} else if !slices.Contains(done, it.target) {
			done = append(done, it.target)
		}
	}
	u.items = nil
	return done, errors.Join(errs...)
}

// undoAll puts back everything still paused or partitioned, then follows
// each target put back (afterRestore) once nothing is pending any more.
func (s *scenarioRun) undoAll(ctx context.Context) error {
	// Broker nodes first and together: a cluster restarting needs its
	// peers (takeNodeUndos), and a worker needs a broker to finish.
	nerr := s.takeNodeUndos(ctx)
	done, err := s.undo.run(ctx, func(f string, a ...any) { s.r.logf(s.sc.Name+": "+f, a...) })
	err = errors.Join(nerr, err)
	var errs []error
	for _, t := range done {
		errs = append(errs, s.afterRestore(ctx, t))
	}
	return errors.Join(err, errors.Join(errs...))
}

// nemesisStep runs pause, unpause, partition, heal or check_healthz; ok
// false for any other step.
func (s *scenarioRun) nemesisStep(ctx context.Context, i int, st Step) (ok bool, err error) {
	st0 := s.r.Stack
	switch {
	case st.Pause != "":
		id, label, err := s.target(ctx, st.Pause)
		if err != nil {
			return true, err
		}
		s.r.logf("%s: pause %s", s.sc.Name, label)
		if err := st0.PauseContainer(ctx, id); err != nil {
			return true, err
		}
		s.undo.push("pause "+st.Pause, st.Pause, "unpause "+label, func(ctx context.Context) error {
			if err := st0.UnpauseContainer(ctx, id); err != nil {
				if paused, perr := st0.ContainerPaused(ctx, id); perr == nil && !paused {
					return nil // gone or thawed otherwise (a kill_worker): nothing to put back
				}
				return err
			}
			return nil
		})
		return true, nil
	case st.Unpause != "":
		return true, s.undoStep(ctx, "pause "+st.Unpause)
	case st.Partition != "":
		id, label, err := s.target(ctx, st.Partition)
		if err != nil {
			return true, err
		}
		s.r.logf("%s: partition %s from the run's network", s.sc.Name, label)
		p, err := st0.PartitionContainer(ctx, id)
		if err != nil {
			return true, err
		}
		s.undo.push("partition "+st.Partition, st.Partition, "heal "+label, p.Heal)
		if n := s.brokerNode(st.Partition); n >= 0 && n == s.r.connNode {
			// The runner's own connection was on that node: move it.
			return true, s.r.reconnectAnyNode(ctx, s, true)
		}
		return true, nil
	case st.Heal != "":
		return true, s.undoStep(ctx, "partition "+st.Heal)
	case st.CheckHealthz != nil:
		return true, s.checkHealthz(ctx, i, *st.CheckHealthz)
	}
	return false, nil
}

// undoStep runs the pending undo under key now (an unpause or heal step).
func (s *scenarioRun) undoStep(ctx context.Context, key string) error {
	it, ok := s.undo.take(key)
	if !ok {
		return fmt.Errorf("%s: nothing to undo (validation should have refused this)", key)
	}
	s.r.logf("%s: %s", s.sc.Name, it.what)
	if err := it.fn(ctx); err != nil {
		return err
	}
	return s.afterRestore(ctx, it.target)
}

// target resolves a Target name to a container id and a label for the log.
func (s *scenarioRun) target(ctx context.Context, name string) (id, label string, err error) {
	switch {
	case name == TargetWorker:
		if s.wk == nil {
			return "", "", fmt.Errorf("target %s: no worker running", name)
		}
		return s.wk.ContainerID(), "the worker", nil
	case slices.Contains(ServiceTargets, name) || s.brokerNode(name) >= 0:
		id, err := s.r.Stack.ServiceContainerID(name)
		return id, name, err
	}
	if s.ws == nil {
		return "", "", fmt.Errorf("target %s: no replicas (workers section)", name)
	}
	rp, err := s.replica(ctx, name)
	if err != nil {
		return "", "", err
	}
	return rp.ContainerID(), "replica " + rp.ID, nil
}

// brokerNode returns the 0-based index of a cluster's node named by its
// alias ("rabbitmq-2"), or -1 (also for "rabbitmq" and on one node).
func (s *scenarioRun) brokerNode(name string) int {
	if s.sc.BrokerNodes <= 1 {
		return -1
	}
	return slices.IndexFunc(s.r.Stack.Brokers(), func(b vendormock.BrokerNode) bool { return b.Alias == name })
}

// afterRestore follows a thawed or reconnected target: after RabbitMQ the
// runner's own broker connection and the scenario's publisher dial it
// again (their connection may have died while it was away); after
// WireMock nginx is reloaded, because it resolved WireMock's address once
// at start and a reconnected container may have another (Docker here
// gives back the lowest free address: the same one unless a container
// joined meanwhile). Toxiproxy resolves its upstreams (nginx, RabbitMQ,
// PostgreSQL) per connection and the workers resolve per dial.
//
// nginx cannot reload while it is itself paused or partitioned: then it is
// reloaded when it is put back.
func (s *scenarioRun) afterRestore(ctx context.Context, target string) error {
	if target == vendormock.AliasWireMock || target == vendormock.AliasNginx {
		if s.undo.has("pause "+vendormock.AliasNginx) || s.undo.has("partition "+vendormock.AliasNginx) {
			return nil
		}
		return s.r.reloadNginxNow(ctx)
	}
	if s.brokerNode(target) >= 0 {
		// A cluster node back: the runner's connection is on another
		// node (moved when this one was cut off) unless it closed.
		return s.r.reconnectAnyNode(ctx, s, false)
	}
	if target != vendormock.AliasRabbitMQ {
		return nil
	}
	if err := lab.Sleep(ctx, time.Second); err != nil {
		return err
	}
	if err := s.r.reconnect(); err != nil {
		return err
	}
	return s.pub.pub.Reconnect(s.r.conn)
}

// checkHealthz polls a replica's /healthz until it answers h.Status or
// h.Within passes, and records the result as a Check (Got: the last
// status seen, 0 for no answer).
func (s *scenarioRun) checkHealthz(ctx context.Context, i int, h HealthzCheck) error {
	rp, err := s.replica(ctx, h.Replica)
	if err != nil {
		return err
	}
	within := h.Within.D()
	if within == 0 {
		within = DefaultHealthzWithin
	}
	t0 := time.Now()
	got, ok := 0, false
	for {
		code, _, err := rp.Healthz(ctx)
		if err != nil {
			code = 0
		}
		got = code
		if ok = code == h.Status; ok || time.Since(t0) >= within {
			break
		}
		if err := lab.Sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
	c := Check{Step: i, What: fmt.Sprintf("%s /healthz status within %s", rp.ID, within), Want: strconv.Itoa(h.Status), Got: got, OK: ok}
	s.checks = append(s.checks, c)
	s.r.logf("%s: steps[%d] %s /healthz %d after %.1f s (want %d) %s", s.sc.Name, i, rp.ID, got, time.Since(t0).Seconds(), h.Status, okWord(ok))
	return nil
}

// checkNoCrash records, for expect.no_crash, how many of the workers no
// step killed or stopped are still running (Want: all of them).
func (s *scenarioRun) checkNoCrash(ctx context.Context) {
	want, got := 0, 0
	var down []string
	if s.ws != nil {
		for _, rp := range s.running() {
			want++
			if up, err := rp.Running(ctx); err == nil && up {
				got++
			} else {
				down = append(down, rp.ID)
			}
		}
	} else if s.wk != nil {
		want++
		if up, err := s.wk.Running(ctx); err == nil && up {
			got++
		} else {
			down = append(down, "the worker")
		}
	}
	c := Check{Step: len(s.sc.Steps), What: "workers still running at the end (no crash)", Want: strconv.Itoa(want), Got: got, OK: got == want}
	s.checks = append(s.checks, c)
	s.r.logf("%s: %d of %d workers still running %s %v", s.sc.Name, got, want, okWord(c.OK), down)
}

// healthzStatuses are the statuses a check_healthz step may want.
var healthzStatuses = []int{http.StatusOK, http.StatusServiceUnavailable}
