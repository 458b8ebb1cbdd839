package fault

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const clusterWorkers = "broker_nodes: 3\nworkers: {count: 1, queue_type: quorum}\n"

func TestNodeStepValidation(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // substrings of the error; nil = valid
	}{
		{"kill and start a node", withSteps("  - kill_node: {node: rabbitmq-2}\n  - start_node: {node: rabbitmq-2}\n") + clusterWorkers, nil},
		{"kill the leader, start all", withSteps("  - kill_node: {leader_of: main}\n  - start_node: {node: all}\n") + clusterWorkers, nil},
		{"stop all, start all", withSteps("  - stop_node: {node: all}\n  - start_node: {node: all}\n") + clusterWorkers, nil},
		{"left down (undone at the end)", withSteps("  - kill_node: {node: rabbitmq-3}\n") + clusterWorkers, nil},
		{"partition a node", withSteps("  - partition: rabbitmq-3\n  - heal: rabbitmq-3\n") + clusterWorkers, nil},
		{"at most once on quorum", minimal + clusterWorkers[:len(clusterWorkers)-2] + ", dead_letter: at-most-once}\n", nil},
		{"node step on one node", withSteps("  - kill_node: {node: rabbitmq-1}\n") + "workers: {count: 1}\n",
			[]string{"steps[0].kill_node: needs broker_nodes 3"}},
		{"cluster without workers", minimal + "broker_nodes: 3\n",
			[]string{"broker_nodes: a cluster needs a workers section"}},
		{"too many nodes", minimal + "broker_nodes: 7\nworkers: {count: 1}\n",
			[]string{"broker_nodes: 7: want 0..5"}},
		{"unknown node", withSteps("  - kill_node: {node: rabbitmq-4}\n") + clusterWorkers,
			[]string{`steps[0].kill_node.node: "rabbitmq-4": want one of rabbitmq-1, rabbitmq-2, rabbitmq-3 or all`}},
		{"both node and leader_of", withSteps("  - kill_node: {node: rabbitmq-1, leader_of: main}\n") + clusterWorkers,
			[]string{"steps[0].kill_node: want exactly one of node"}},
		{"unknown queue role", withSteps("  - stop_node: {leader_of: mian}\n") + clusterWorkers,
			[]string{`steps[0].stop_node.leader_of: "mian": want one of main, retry, unknown, held, failed, dead`}},
		{"start a node not down", withSteps("  - kill_node: {node: rabbitmq-1}\n  - start_node: {node: rabbitmq-2}\n") + clusterWorkers,
			[]string{`steps[1].start_node.node: "rabbitmq-2": no earlier kill_node`}},
		{"start all with none down", withSteps("  - start_node: {node: all}\n") + clusterWorkers,
			[]string{"steps[0].start_node: no earlier kill_node or stop_node left a node down"}},
		{"kill twice", withSteps("  - kill_node: {node: rabbitmq-2}\n  - stop_node: {node: rabbitmq-2}\n") + clusterWorkers,
			[]string{`steps[1].stop_node.node: "rabbitmq-2" is down already`}},
		{"rabbitmq alias on a cluster", withSteps("  - pause: rabbitmq\n") + clusterWorkers,
			[]string{`steps[0].pause: "rabbitmq": want one of active`, "rabbitmq-1, rabbitmq-2, rabbitmq-3, nginx"}},
		{"wait for the worker's clock", withSteps("  - wait: {clock: \"08:00:10\"}\n") + "client: {clock_start: \"2026-12-01T07:58:30+09:00\"}\n", nil},
		{"clock without clock_start", withSteps("  - wait: {clock: \"08:00:10\"}\n"),
			[]string{"steps[0].wait.clock: needs client.clock_start"}},
		{"clock not HH:MM:SS", withSteps("  - wait: {clock: \"8:00\"}\n") + "client: {clock_start: \"2026-12-01T07:58:30+09:00\"}\n",
			[]string{`steps[0].wait.clock: "8:00": want HH:MM:SS`}},
		{"clock with records", withSteps("  - wait: {clock: \"08:00:10\", records: 1}\n") + "client: {clock_start: \"2026-12-01T07:58:30+09:00\"}\n",
			[]string{"steps[0].wait.clock: alone"}},
		{"queue_nodes on one node", minimal + "workers: {count: 1, queue_nodes: {main: rabbitmq-1}}\n",
			[]string{"workers.queue_nodes: needs broker_nodes 3"}},
		{"queue_nodes bad role and node", minimal + "broker_nodes: 3\nworkers: {count: 1, queue_nodes: {mian: rabbitmq-1, held: rabbitmq-9}}\n",
			[]string{"workers.queue_nodes.mian: want a queue role", `workers.queue_nodes.held: "rabbitmq-9"`}},
		{"at most once on classic", minimal + "workers: {count: 1, dead_letter: at-most-once}\n",
			[]string{"workers.dead_letter: needs workers.queue_type quorum"}},
		{"unknown strategy", minimal + "workers: {count: 1, queue_type: quorum, dead_letter: sometimes}\n",
			[]string{`workers.dead_letter: "sometimes": want at-least-once or at-most-once`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.yaml))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Parse: %v; want valid", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse: nil error; want %q", tt.want)
			}
			if !errors.Is(err, ErrInvalidScenario) {
				t.Errorf("error %v does not wrap ErrInvalidScenario", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

// TestBrokerGroups: one stack per cluster size, clusters first, the one
// node (also for idle races and broker_nodes 0 or 1) last.
func TestBrokerGroups(t *testing.T) {
	sel := []*Scenario{
		{Name: "a", Kind: KindFault},
		{Name: "b", Kind: KindFault, BrokerNodes: 3},
		{Name: "c", Kind: KindIdleRace, BrokerNodes: 3},
		{Name: "d", Kind: KindFault, BrokerNodes: 1},
		{Name: "e", Kind: KindFault, BrokerNodes: 3},
	}
	if got := brokerGroups(sel); !slices.Equal(got, []int{3, 1}) {
		t.Errorf("brokerGroups = %v, want [3 1]", got)
	}
	if got := brokerGroups(sel[1:2]); !slices.Equal(got, []int{3}) {
		t.Errorf("brokerGroups(one cluster scenario) = %v, want [3]", got)
	}
}
