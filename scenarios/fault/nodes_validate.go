package fault

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// nodeAliases returns the cluster's node aliases, rabbitmq-1 ..
// rabbitmq-BrokerNodes (none on one node).
func (sc *Scenario) nodeAliases() []string {
	var out []string
	for i := 1; sc.BrokerNodes > 1 && i <= sc.BrokerNodes; i++ {
		out = append(out, fmt.Sprintf("%s-%d", vendormock.AliasRabbitMQ, i))
	}
	return out
}

// checkNodes validates broker_nodes, workers.dead_letter and the node
// steps: a cluster needs a workers section (only replicas take a node
// list); at-most-once dead-lettering needs quorum queues; a node step
// needs a cluster and names exactly one of node (an alias or all) and
// leader_of (kill_node, stop_node: a QueueRoles name); a start_node
// names a node an earlier step took down (all: at least one is down), and
// no node is taken down twice.
func (sc *Scenario) checkNodes(bad func(string, string, ...any)) {
	if sc.BrokerNodes < 0 || sc.BrokerNodes > vendormock.MaxBrokerNodes {
		bad("broker_nodes", "%d: want 0..%d (0 or 1 = one node)", sc.BrokerNodes, vendormock.MaxBrokerNodes)
	}
	if sc.BrokerNodes > 1 && sc.Workers == nil {
		bad("broker_nodes", "a cluster needs a workers section (the replicas take every node's address)")
	}
	if w := sc.Workers; w != nil && w.DeadLetter != "" {
		switch {
		case w.DeadLetter != DeadLetterAtLeastOnce && w.DeadLetter != DeadLetterAtMostOnce:
			bad("workers.dead_letter", "%q: want %s or %s", w.DeadLetter, DeadLetterAtLeastOnce, DeadLetterAtMostOnce)
		case w.QueueType != vendormock.QueueQuorum:
			bad("workers.dead_letter", "needs workers.queue_type %s (classic queues always dead-letter at most once)", vendormock.QueueQuorum)
		}
	}
	aliases := sc.nodeAliases()
	for i, st := range sc.Steps {
		if st.Wait != nil && st.Wait.Clock != "" && sc.Client.ClockStart == "" {
			bad(fmt.Sprintf("steps[%d].wait.clock", i), "needs client.clock_start (the worker's clock)")
		}
	}
	if w := sc.Workers; w != nil {
		for _, role := range slices.Sorted(maps.Keys(w.QueueNodes)) {
			field := "workers.queue_nodes." + role
			switch {
			case sc.BrokerNodes <= 1:
				bad("workers.queue_nodes", "needs broker_nodes 3 (a cluster)")
				return
			case !slices.Contains(QueueRoles, role):
				bad(field, "want a queue role: %s", strings.Join(QueueRoles, ", "))
			case !slices.Contains(aliases, w.QueueNodes[role]):
				bad(field, "%q: want one of %s", w.QueueNodes[role], strings.Join(aliases, ", "))
			}
		}
	}
	down := map[string]bool{}
	anyDown := false // a leader_of node: which one is known only at run time
	for i, st := range sc.Steps {
		var key string
		var n *NodeStep
		switch {
		case st.KillNode != nil:
			key, n = "kill_node", st.KillNode
		case st.StopNode != nil:
			key, n = "stop_node", st.StopNode
		case st.StartNode != nil:
			key, n = "start_node", st.StartNode
		default:
			continue
		}
		field := fmt.Sprintf("steps[%d].%s", i, key)
		if sc.BrokerNodes <= 1 {
			bad(field, "needs broker_nodes 3 (a cluster); on one node use restart_broker")
			continue
		}
		if (n.Node == "") == (n.LeaderOf == "") {
			bad(field, "want exactly one of node (%s or %s) and leader_of (%s)", strings.Join(aliases, ", "), NodeAll, strings.Join(QueueRoles, ", "))
			continue
		}
		if n.Node != "" && n.Node != NodeAll && !slices.Contains(aliases, n.Node) {
			bad(field+".node", "%q: want one of %s or %s", n.Node, strings.Join(aliases, ", "), NodeAll)
			continue
		}
		if n.LeaderOf != "" && (key == "start_node" || !slices.Contains(QueueRoles, n.LeaderOf)) {
			bad(field+".leader_of", "%q: want one of %s (kill_node and stop_node only; start_node names a node or %s)", n.LeaderOf, strings.Join(QueueRoles, ", "), NodeAll)
			continue
		}
		switch {
		case key == "start_node" && n.Node == NodeAll:
			if len(down) == 0 && !anyDown {
				bad(field, "no earlier kill_node or stop_node left a node down")
			}
			down, anyDown = map[string]bool{}, false
		case key == "start_node":
			if !down[n.Node] && !anyDown {
				bad(field+".node", "%q: no earlier kill_node or stop_node of it is still in effect", n.Node)
			}
			delete(down, n.Node)
		case n.LeaderOf != "":
			anyDown = true
		case n.Node == NodeAll:
			for _, a := range aliases {
				down[a] = true
			}
		default:
			if down[n.Node] {
				bad(field+".node", "%q is down already (start it first)", n.Node)
			}
			down[n.Node] = true
		}
	}
}
