package fault

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Limits of a workers section.
const (
	// MaxReplicas bounds workers.count and the replicas add_worker may
	// bring (each takes a CPU of a small machine).
	MaxReplicas = 5
)

// Ledgers and QueueTypes a workers section may name.
var (
	Ledgers    = []string{vendormock.LedgerBbolt, vendormock.LedgerPostgres}
	QueueTypes = []string{vendormock.QueueClassic, vendormock.QueueQuorum}
)

var (
	replicaRE   = regexp.MustCompile(`^worker-[1-9][0-9]?$`)
	refPrefixRE = regexp.MustCompile(`^[a-z0-9-]{0,16}$`)
)

// replicaSteps are the step keys that need a workers section.
var replicaSteps = []string{"kill_worker", "stop_worker", "add_worker", "recreate_worker"}

// applyWorkerDefaults fills a workers section's defaults.
func (w *WorkersSpec) applyDefaults() {
	if w.Count == 0 {
		w.Count = 1
	}
	if w.Ledger == "" {
		w.Ledger = vendormock.LedgerBbolt
	}
	if w.QueueType == "" {
		w.QueueType = vendormock.QueueClassic
	}
}

// checkWorkers validates the workers section and the steps that need it.
func (sc *Scenario) checkWorkers(bad func(string, string, ...any)) {
	w := sc.Workers
	if w != nil {
		if w.Count < 1 || w.Count > MaxReplicas {
			bad("workers.count", "%d: want 1..%d replicas", w.Count, MaxReplicas)
		}
		if !slices.Contains(Ledgers, w.Ledger) {
			bad("workers.ledger", "%q: want one of %s", w.Ledger, strings.Join(Ledgers, ", "))
		}
		if !slices.Contains(QueueTypes, w.QueueType) {
			bad("workers.queue_type", "%q: want one of %s", w.QueueType, strings.Join(QueueTypes, ", "))
		}
	}
	if !refPrefixRE.MatchString(sc.Workload.RefKeyPrefix) {
		bad("workload.refkey_prefix", "%q: want up to 16 of a-z, 0-9, '-'", sc.Workload.RefKeyPrefix)
	}
	replicas := 0
	if w != nil {
		replicas = w.Count
	}
	for i, st := range sc.Steps {
		field := fmt.Sprintf("steps[%d]", i)
		key := ""
		switch {
		case st.KillWorker != nil:
			key = "kill_worker"
		case st.StopWorker != nil:
			key = "stop_worker"
		case st.AddWorker != nil:
			key = "add_worker"
			replicas++
		case st.RecreateWorker != nil:
			key = "recreate_worker"
		case st.RestartWorker != nil && w != nil:
			bad(field+".restart_worker", "not with a workers section: use stop_worker then add_worker, or recreate_worker")
		}
		if key != "" && w == nil {
			bad(field+"."+key, "needs a workers section (workers: {count: 2, ...}); %s act on replicas", strings.Join(replicaSteps, ", "))
		}
		if st.AddWorker != nil && replicas > MaxReplicas {
			bad(field+".add_worker", "%d replicas in all: want at most %d", replicas, MaxReplicas)
		}
		if st.Send != nil && st.Send.SameRefKey && st.Send.Invalid > 0 {
			bad(field+".send.same_refkey", "not with invalid messages (they carry no usable refkey)")
		}
	}
}

// checkReplica validates a replica step or the broker restart.
func (st Step) checkReplica(field string, bad func(string, string, ...any)) {
	ref := func(f, id string) {
		if id != "" && id != ReplicaActive && !replicaRE.MatchString(id) {
			bad(f, "%q: want %s or a replica id worker-1 .. worker-%d", id, ReplicaActive, MaxReplicas)
		}
	}
	switch {
	case st.KillWorker != nil:
		ref(field+".kill_worker.replica", st.KillWorker.Replica)
	case st.StopWorker != nil:
		ref(field+".stop_worker.replica", st.StopWorker.Replica)
	case st.RecreateWorker != nil:
		ref(field+".recreate_worker.replica", st.RecreateWorker.Replica)
	case st.RestartBroker != nil:
		if d := st.RestartBroker.StopTimeout.D(); d < 0 || d > time.Minute {
			bad(field+".restart_broker.stop_timeout", "%s: want 0..1m (0 = 10s)", d)
		}
	}
}
