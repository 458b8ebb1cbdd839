package fault

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// The broker node steps of a cluster scenario (Scenario.BrokerNodes > 1):
// kill_node (SIGKILL, a crash or a lost machine), stop_node (SIGTERM, a
// node shut down for maintenance) and start_node. Every node a step took
// down and no start_node brought back is started again when the scenario
// ends, whatever happened (the undo list; all of them at once, as a
// cluster restarting needs). The catalog README ("Broker clusters") lists
// the vocabulary.

// NodeAll names, in a node step, every node of the cluster (kill_node,
// stop_node) or every node a step took down (start_node).
const NodeAll = "all"

// QueueRoles are the scenario's queues a leader_of may name, by role:
// its main queue and the ones derived from it (queues.NamesFor).
var QueueRoles = []string{"main", "retry", "unknown", "held", "failed", "dead"}

// NodeStep names the broker node(s) a kill_node, stop_node or start_node
// step acts on: exactly one of Node and LeaderOf.
type NodeStep struct {
	// Node is a node's alias, "rabbitmq-1" .. "rabbitmq-N", or NodeAll.
	Node string `yaml:"node"`
	// LeaderOf (kill_node, stop_node) is a QueueRoles name: the node
	// hosting that queue of the scenario when the step runs (a quorum
	// queue's leader, a classic queue's node), read with rabbitmqctl
	// list_queues (vendormock.Stack.QueueLeader).
	LeaderOf string `yaml:"leader_of"`
}

// nodeKey is the undo key of a node a step took down.
func nodeKey(alias string) string { return "node " + alias }

// nodeStep runs kill_node, stop_node or start_node; ok false for any
// other step.
func (s *scenarioRun) nodeStep(ctx context.Context, st Step) (ok bool, err error) {
	switch {
	case st.KillNode != nil:
		return true, s.downNodes(ctx, *st.KillNode, true)
	case st.StopNode != nil:
		return true, s.downNodes(ctx, *st.StopNode, false)
	case st.StartNode != nil:
		return true, s.startNodeStep(ctx, *st.StartNode)
	}
	return false, nil
}

// resolveNodes returns the 0-based indexes a kill_node or stop_node step
// names.
func (s *scenarioRun) resolveNodes(ctx context.Context, n NodeStep) ([]int, error) {
	nodes := s.r.Stack.Brokers()
	switch {
	case n.Node == NodeAll:
		var all []int
		for i := range nodes {
			all = append(all, i)
		}
		return all, nil
	case n.LeaderOf != "":
		q := s.queueByRole(n.LeaderOf)
		i, err := s.r.Stack.QueueLeader(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("leader of %s: %w", q, err)
		}
		s.r.logf("%s: the leader of %s is on %s", s.sc.Name, q, nodes[i].Alias)
		return []int{i}, nil
	}
	i := slices.IndexFunc(nodes, func(b vendormock.BrokerNode) bool { return b.Alias == n.Node })
	if i < 0 {
		return nil, fmt.Errorf("broker node %q: not a node of this run", n.Node)
	}
	return []int{i}, nil
}

// queueByRole returns the scenario's queue of a QueueRoles role.
func (s *scenarioRun) queueByRole(role string) string {
	names := s.topo.Names
	return map[string]string{"main": names.Main, "retry": names.Retry, "unknown": names.Unknown,
		"held": names.Held, "failed": names.Failed, "dead": names.Dead}[role]
}

// downNodes kills (SIGKILL) or stops (SIGTERM) the nodes n names, each
// with an undo that starts it again, then moves the runner's own broker
// connection to a node still up.
func (s *scenarioRun) downNodes(ctx context.Context, n NodeStep, kill bool) error {
	idx, err := s.resolveNodes(ctx, n)
	if err != nil {
		return err
	}
	st := s.r.Stack
	nodes := st.Brokers()
	verb := map[bool]string{true: "kill (SIGKILL)", false: "stop (SIGTERM)"}[kill]
	var errs []error
	for _, i := range idx {
		alias := nodes[i].Alias
		if s.undo.has(nodeKey(alias)) {
			continue // down already
		}
		s.r.logf("%s: %s broker node %s", s.sc.Name, verb, alias)
		if kill {
			err = st.KillBrokerNode(ctx, i)
		} else {
			err = st.StopBrokerNode(ctx, i, 0)
		}
		// Pushed even on error: a node half stopped is started at the end.
		s.undo.push(nodeKey(alias), alias, "start broker node "+alias, func(ctx context.Context) error {
			return s.startNodes(ctx, []int{i})
		})
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if !slices.ContainsFunc(nodes, func(b vendormock.BrokerNode) bool { return !s.undo.has(nodeKey(b.Alias)) }) {
		return nil // every node is down: the connection moves when one is back
	}
	return s.r.reconnectAnyNode(ctx, s, slices.Contains(idx, s.r.connNode))
}

// startNodeStep starts the nodes a start_node step names (NodeAll: every
// node a step took down), all at once.
func (s *scenarioRun) startNodeStep(ctx context.Context, n NodeStep) error {
	var idx []int
	for i, b := range s.r.Stack.Brokers() {
		if (n.Node == NodeAll || n.Node == b.Alias) && s.undo.has(nodeKey(b.Alias)) {
			if _, ok := s.undo.take(nodeKey(b.Alias)); ok {
				idx = append(idx, i)
			}
		}
	}
	if len(idx) == 0 {
		return fmt.Errorf("start_node %s: no node of it is down (validation should have refused this)", n.Node)
	}
	return s.startNodes(ctx, idx)
}

// startNodes starts the nodes idx concurrently (a node of a cluster
// restarting waits for its peers), then reconnects the runner's broker
// connection.
func (s *scenarioRun) startNodes(ctx context.Context, idx []int) error {
	nodes := s.r.Stack.Brokers()
	var names []string
	for _, i := range idx {
		names = append(names, nodes[i].Alias)
	}
	s.r.logf("%s: start broker node(s) %s", s.sc.Name, strings.Join(names, ", "))
	errs := make([]error, len(idx))
	var wg sync.WaitGroup
	for k, i := range idx {
		wg.Go(func() { errs[k] = s.r.Stack.StartBrokerNode(ctx, i) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return s.r.reconnectAnyNode(ctx, s, false)
}

// takeNodeUndos removes every pending node start from the undo list and
// starts those nodes at once (undoAll: a whole cluster down must start
// together, not one node after the other).
func (s *scenarioRun) takeNodeUndos(ctx context.Context) error {
	var idx []int
	for i, b := range s.r.Stack.Brokers() {
		if _, ok := s.undo.take(nodeKey(b.Alias)); ok {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	err := s.startNodes(ctx, idx)
	s.r.logf("%s: undo at the end: started %d broker node(s): %s", s.sc.Name, len(idx), okWord(err == nil))
	return err
}

// dialBroker opens the runner's own broker connection and records its
// node (Runner.connNode): on a cluster to the first node that answers, the
// last node first (the workers start on node 1, so a step aimed at their
// node leaves this connection alone); on one node to it. Each dial on a
// cluster is bounded by 5 s (a partitioned node does not answer).
func (r *Runner) dialBroker() (*amqp.Connection, error) {
	nodes := r.Stack.Brokers()
	if len(nodes) <= 1 {
		r.connNode = 0
		return amqp.Dial(r.Stack.AMQPURL)
	}
	var errs []error
	for i := len(nodes) - 1; i >= 0; i-- {
		conn, err := amqp.DialConfig(nodes[i].AMQPURL, amqp.Config{Heartbeat: 10 * time.Second, Dial: amqp.DefaultDial(5 * time.Second)})
		if err == nil {
			r.connNode = i
			return conn, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", nodes[i].Alias, err))
	}
	return nil, errors.Join(errs...)
}

// reconnectAnyNode dials the runner's connection again when force (its
// node was taken down or cut off) or when it is closed, and gives the
// scenario's publisher the new one; a connection still open is kept. It
// retries for up to a minute: a cluster just started may refuse
// connections for a moment.
func (r *Runner) reconnectAnyNode(ctx context.Context, s *scenarioRun, force bool) error {
	if !force && r.conn != nil && !r.conn.IsClosed() {
		return nil
	}
	deadline := time.Now().Add(time.Minute)
	for {
		err := r.reconnect()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return err
		}
		if err := lab.Sleep(ctx, time.Second); err != nil {
			return err
		}
	}
	if s != nil && s.pub != nil {
		return s.pub.pub.Reconnect(r.conn)
	}
	return nil
}

// placeQueues applies workers.queue_nodes before the replicas start (so
// the slow rabbitmqctl calls do not eat into a scenario's clock): it
// declares each pinned queue through its node with the worker's own
// arguments (the replicas' declarations then match it; RabbitMQ puts a
// classic queue, and a quorum queue's first leader, on the declaring
// client's node), removes every other member of a pinned quorum queue,
// and checks where the queue lives.
func (s *scenarioRun) placeQueues(ctx context.Context) error {
	w := s.sc.Workers
	if len(w.QueueNodes) == 0 {
		return nil
	}
	quorum := w.QueueType == vendormock.QueueQuorum
	st := s.r.Stack
	nodes := st.Brokers()
	wcfg, err := s.workerConfig()
	if err != nil {
		return err
	}
	top := wcfg.WithDefaults().Topology() // the delivery limit and TTLs the worker declares
	// As the replicas declare them (their environment, not their flags).
	top.Type, top.SingleActiveConsumer = queues.QueueType(w.QueueType), w.SAC()
	for _, role := range slices.Sorted(maps.Keys(w.QueueNodes)) {
		q := s.queueByRole(role)
		keep := slices.IndexFunc(nodes, func(b vendormock.BrokerNode) bool { return b.Alias == w.QueueNodes[role] })
		if keep < 0 {
			return fmt.Errorf("queue_nodes %s: no node %q", role, w.QueueNodes[role])
		}
		if err := declareOn(nodes[keep].AMQPURL, top, q); err != nil {
			return fmt.Errorf("queue_nodes %s: %w", role, err)
		}
		if quorum {
			for i := range nodes {
				if i != keep {
					if err := st.DeleteQueueMember(ctx, q, i); err != nil {
						return fmt.Errorf("queue_nodes %s: %w", role, err)
					}
				}
			}
		}
		got, err := st.QueueLeader(ctx, q)
		if err != nil {
			return fmt.Errorf("queue_nodes %s: %w", role, err)
		}
		if got != keep {
			return fmt.Errorf("queue_nodes %s: %s is on %s, want %s", role, q, nodes[got].Alias, nodes[keep].Alias)
		}
		s.r.logf("%s: %s lives on %s only", s.sc.Name, q, nodes[keep].Alias)
	}
	return nil
}

// declareOn declares queue q of top through a connection to url (a node's
// host AMQP URL), with top's arguments for it.
func declareOn(url string, top queues.Topology, q string) error {
	conn, err := amqp.DialConfig(url, amqp.Config{Dial: amqp.DefaultDial(10 * time.Second)})
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	for _, spec := range top.Queues() {
		if spec.Name == q {
			_, err := ch.QueueDeclare(q, true, false, false, false, spec.Args)
			return err
		}
	}
	return fmt.Errorf("no queue %s in the worker's topology", q)
}
