package fault

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// HTTPVersions are the values of client.http_version.
var HTTPVersions = []string{"1.1", "2"}

// Targets returns the names a nemesis step of sc may use, in the order
// the error messages list them: TargetWorker (no workers section) or
// ReplicaActive and worker-1 .. worker-MaxReplicas (a workers section),
// then the services (postgres only with workers.ledger postgres; on a
// cluster rabbitmq-1 .. rabbitmq-N instead of rabbitmq).
func (sc *Scenario) Targets() []string {
	var out []string
	if sc.Workers == nil {
		out = append(out, TargetWorker)
	} else {
		out = append(out, ReplicaActive)
		for i := 1; i <= MaxReplicas; i++ {
			out = append(out, vendormock.ReplicaID(i))
		}
	}
	for _, t := range ServiceTargets {
		switch {
		case t == vendormock.AliasRabbitMQ && sc.BrokerNodes > 1:
			out = append(out, sc.nodeAliases()...)
		case t != vendormock.AliasPostgres || sc.postgresLedger():
			out = append(out, t)
		}
	}
	return out
}

// postgresLedger reports whether the scenario's replicas share the
// PostgreSQL ledger (so PostgreSQL and LedgerProxy exist).
func (sc *Scenario) postgresLedger() bool {
	return sc.Workers != nil && sc.Workers.Ledger == vendormock.LedgerPostgres
}

// checkNemesis validates the nemesis steps against the scenario: each
// target is one of Targets; an unpause (heal) names a target an earlier
// pause (partition) froze (cut) and no step has put back yet, and nothing
// is paused (partitioned) twice. What is still paused or partitioned when
// the steps end is undone by the runner. It also checks check_healthz,
// the ledger proxy's and expect.ledger_agrees's need of the PostgreSQL
// ledger.
func (sc *Scenario) checkNemesis(bad func(string, string, ...any)) {
	targets := sc.Targets()
	paused, cut := map[string]bool{}, map[string]bool{}
	target := func(field, name string) bool {
		if !slices.Contains(targets, name) {
			bad(field, "%q: want one of %s", name, strings.Join(targets, ", "))
			return false
		}
		return true
	}
	for i, st := range sc.Steps {
		field := fmt.Sprintf("steps[%d]", i)
		switch {
		case st.Pause != "":
			if target(field+".pause", st.Pause) && paused[st.Pause] {
				bad(field+".pause", "%q is paused already (steps before unpause it first)", st.Pause)
			}
			paused[st.Pause] = true
		case st.Unpause != "":
			if target(field+".unpause", st.Unpause) && !paused[st.Unpause] {
				bad(field+".unpause", "%q: no earlier pause step of this target is still in effect", st.Unpause)
			}
			delete(paused, st.Unpause)
		case st.Partition == vendormock.AliasToxiproxy:
			bad(field+".partition", "%q carries every path of the run: cut one with proxy_disable (vendor, broker, ledger) instead", st.Partition)
		case st.Partition != "":
			if target(field+".partition", st.Partition) && cut[st.Partition] {
				bad(field+".partition", "%q is partitioned already (heal it first)", st.Partition)
			}
			cut[st.Partition] = true
		case st.Heal != "":
			if target(field+".heal", st.Heal) && !cut[st.Heal] {
				bad(field+".heal", "%q: no earlier partition step of this target is still in effect", st.Heal)
			}
			delete(cut, st.Heal)
		case st.CheckHealthz != nil:
			h := st.CheckHealthz
			if sc.Workers == nil {
				bad(field+".check_healthz", "needs a workers section (only replicas publish /healthz)")
			}
			if h.Replica != "" && h.Replica != ReplicaActive && !replicaRE.MatchString(h.Replica) {
				bad(field+".check_healthz.replica", "%q: want %s or a replica id worker-1 .. worker-%d", h.Replica, ReplicaActive, MaxReplicas)
			}
			if !slices.Contains(healthzStatuses, h.Status) {
				bad(field+".check_healthz.status", "%d: want 200 (ready) or 503 (broker or ledger not answering)", h.Status)
			}
			if d := h.Within.D(); d < 0 || d > 5*time.Minute {
				bad(field+".check_healthz.within", "%s: want 0..5m (0 = %s)", d, DefaultHealthzWithin)
			}
		case st.ToxicAdd != nil && st.ToxicAdd.Proxy == LedgerProxy && !sc.postgresLedger():
			bad(field+".toxic_add.proxy", "%q needs workers.ledger %s (the replicas reach PostgreSQL through it)", LedgerProxy, vendormock.LedgerPostgres)
		case (st.ProxyDisable == LedgerProxy || st.ProxyEnable == LedgerProxy) && !sc.postgresLedger():
			bad(field, "proxy %q needs workers.ledger %s", LedgerProxy, vendormock.LedgerPostgres)
		}
	}
	for i, t := range sc.Network.Toxics {
		if t.Proxy == LedgerProxy && !sc.postgresLedger() {
			bad(fmt.Sprintf("network.toxics[%d].proxy", i), "%q needs workers.ledger %s", LedgerProxy, vendormock.LedgerPostgres)
		}
	}
	if sc.Expect.LedgerAgrees && !sc.postgresLedger() {
		bad("expect.ledger_agrees", "needs workers.ledger %s (the lab reads that ledger from the host)", vendormock.LedgerPostgres)
	}
}
