package vendormock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ErrNoSuchQueue is returned by QueueMembers and QueueLeader for a queue
// the broker does not list.
var ErrNoSuchQueue = errors.New("queue not listed by the broker")

// QueueNodes is where one queue lives, as rabbitmqctl list_queues name
// pid leader members prints it (RabbitMQ 3.10 has no node column).
type QueueNodes struct {
	Name string
	// Leader is the Erlang name of the node hosting the queue: a quorum
	// queue's leader, a classic queue's only node ("rabbit@rabbitmq-2").
	Leader string
	// Members are a quorum queue's members, sorted; a classic queue has
	// none.
	Members []string
}

// pidNodeRE takes the node out of an Erlang pid as rabbitmqctl prints
// it (the lab's host names have no dots).
var pidNodeRE = regexp.MustCompile(`^<([^.<>@]+@[^.<>]+)\.`)

// QueueNodesOf returns every queue's QueueNodes, keyed by name, as the
// first node (in Brokers order) whose rabbitmqctl answers lists them: a
// killed or partitioned node is skipped. Errors: RabbitMQCtl's of the last
// node tried when none answers, unreadable output.
func (s *Stack) QueueNodesOf(ctx context.Context) (map[string]QueueNodes, error) {
	var out string
	var err error
	for i := range s.Brokers() {
		if out, err = s.RabbitMQCtl(ctx, i, "list_queues", "name", "pid", "leader", "members", "--formatter", "json"); err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	return parseQueueNodes(out)
}

// parseQueueNodes reads list_queues name pid leader members in JSON.
func parseQueueNodes(out string) (map[string]QueueNodes, error) {
	var rows []struct {
		Name    string          `json:"name"`
		PID     json.RawMessage `json:"pid"`
		Leader  json.RawMessage `json:"leader"`
		Members json.RawMessage `json:"members"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		return nil, fmt.Errorf("list_queues: %w: %q", err, out)
	}
	m := make(map[string]QueueNodes, len(rows))
	for _, r := range rows {
		q := QueueNodes{Name: r.Name}
		// A pid prints as "<rabbit@rabbitmq-2.1701.593.0>": its node first.
		var pid string
		if json.Unmarshal(r.PID, &pid) == nil {
			if m := pidNodeRE.FindStringSubmatch(pid); m != nil {
				q.Leader = m[1]
			}
		}
		// A classic queue's leader and members are "" (not a string list).
		var leader string
		if json.Unmarshal(r.Leader, &leader) == nil && leader != "" {
			q.Leader = leader
		}
		var members []string
		if json.Unmarshal(r.Members, &members) == nil {
			slices.Sort(members)
			q.Members = members
		}
		m[r.Name] = q
	}
	return m, nil
}

// QueueMembers returns a quorum queue's members (Erlang node names,
// sorted; none for a classic queue), read as QueueNodesOf reads them.
// Errors: ErrNoSuchQueue, QueueNodesOf's.
func (s *Stack) QueueMembers(ctx context.Context, queue string) ([]string, error) {
	q, err := s.queueNodes(ctx, queue)
	return q.Members, err
}

// QueueLeader returns the 0-based index (in Brokers order) of the node
// hosting queue: a quorum queue's leader, a classic queue's node.
// Errors: ErrNoSuchQueue, a node not in Brokers, QueueNodesOf's.
func (s *Stack) QueueLeader(ctx context.Context, queue string) (int, error) {
	q, err := s.queueNodes(ctx, queue)
	if err != nil {
		return -1, err
	}
	if q.Leader == "" {
		// The CLI's JSON may print a pid without its node name.
		if q.Leader, err = s.queueHomeNode(ctx, queue); err != nil {
			return -1, err
		}
	}
	for i, b := range s.Brokers() {
		if b.Name == q.Leader {
			return i, nil
		}
	}
	return -1, fmt.Errorf("queue %s: leader %q is not a node of the run", queue, q.Leader)
}

// queueHomeNode asks the first node that answers for the node of queue's
// process (a quorum queue's leader, a classic queue's node).
func (s *Stack) queueHomeNode(ctx context.Context, queue string) (string, error) {
	expr := fmt.Sprintf(`{ok, Q} = rabbit_amqqueue:lookup(rabbit_misc:r(<<"/">>, queue, <<"%s">>)), `+
		`case amqqueue:get_pid(Q) of {_, N} -> N; P -> node(P) end.`, queue)
	var out string
	var err error
	for i := range s.Brokers() {
		if out, err = s.RabbitMQCtl(ctx, i, "eval", expr); err == nil {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("node of %s: %w", queue, err)
	}
	return strings.Trim(strings.TrimSpace(out), "'"), nil
}

func (s *Stack) queueNodes(ctx context.Context, queue string) (QueueNodes, error) {
	all, err := s.QueueNodesOf(ctx)
	if err != nil {
		return QueueNodes{}, err
	}
	q, ok := all[queue]
	if !ok {
		return QueueNodes{}, fmt.Errorf("%w: %s", ErrNoSuchQueue, queue)
	}
	return q, nil
}

// DeleteQueueMember removes node i's (0-based) member from a quorum
// queue (rabbit_quorum_queue:delete_member through rabbitmqctl eval on
// another running node, as rabbitmq-queues delete_member does), so the
// queue no longer lives there. Errors: no such node, RabbitMQCtl's, a
// reply other than ok.
func (s *Stack) DeleteQueueMember(ctx context.Context, queue string, i int) error {
	nodes := s.Brokers()
	if i < 0 || i >= len(nodes) {
		return fmt.Errorf("delete member of %s: broker node %d: the run has %d", queue, i+1, len(nodes))
	}
	expr := fmt.Sprintf(`rabbit_quorum_queue:delete_member(<<"/">>, <<"%s">>, '%s').`, queue, nodes[i].Name)
	var out string
	var err error
	for k := range nodes {
		if k == i {
			continue
		}
		if out, err = s.RabbitMQCtl(ctx, k, "eval", expr); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("delete member %s of %s: %w", nodes[i].Name, queue, err)
	}
	if strings.TrimSpace(out) != "ok" {
		return fmt.Errorf("delete member %s of %s: %s", nodes[i].Name, queue, strings.TrimSpace(out))
	}
	s.logf("%s: member %s removed", queue, nodes[i].Name)
	return nil
}
