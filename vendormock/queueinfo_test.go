package vendormock

import (
	"slices"
	"testing"
)

// TestParseQueueNodes: a quorum queue's node is its leader, a classic
// queue's the node of its pid (3.10 prints leader and members "" for it).
func TestParseQueueNodes(t *testing.T) {
	out := `[
{"name":"q.quorum","pid":"<rabbit@rabbitmq-1.1701.593.0>","leader":"rabbit@rabbitmq-2","members":["rabbit@rabbitmq-3","rabbit@rabbitmq-1","rabbit@rabbitmq-2"]},
{"name":"q.classic","pid":"<rabbit@rabbitmq-3.1701.600.0>","leader":"","members":""}
]`
	m, err := parseQueueNodes(out)
	if err != nil {
		t.Fatal(err)
	}
	q := m["q.quorum"]
	if q.Leader != "rabbit@rabbitmq-2" || !slices.Equal(q.Members, []string{"rabbit@rabbitmq-1", "rabbit@rabbitmq-2", "rabbit@rabbitmq-3"}) {
		t.Errorf("quorum: %+v", q)
	}
	if c := m["q.classic"]; c.Leader != "rabbit@rabbitmq-3" || len(c.Members) != 0 {
		t.Errorf("classic: %+v", c)
	}
	if _, err := parseQueueNodes("Timeout"); err == nil {
		t.Error("unreadable output: no error")
	}
}
