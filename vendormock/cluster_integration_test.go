//go:build integration

package vendormock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// startCluster starts a broker-only stack of n nodes and registers its
// removal.
func startCluster(t *testing.T, ctx context.Context, n int) *Stack {
	t.Helper()
	s, err := StartBrokers(ctx, Options{BrokerNodes: n, Images: labImages(t), Log: testLog{t}})
	if err != nil {
		t.Fatalf("StartBrokers: %v", err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Close(cctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	t.Logf("cluster of %d ready in %.1f s", n, s.StartDuration.Seconds())
	return s
}

// TestIntegrationBrokerCluster: three nodes from the lab's image form one
// cluster (node 1 lists all three running), each reachable from the host
// and by its own alias; a quorum queue declared without arguments gets a
// member on every node; a node killed with SIGKILL drops out of the
// running list (the negative control of the membership check) and, started
// again, rejoins.
func TestIntegrationBrokerCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	s := startCluster(t, ctx, 3)

	nodes := s.Brokers()
	want := []string{"rabbit@rabbitmq-1", "rabbit@rabbitmq-2", "rabbit@rabbitmq-3"}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("Brokers = %v, want %v", names, want)
	}
	running, err := s.RunningBrokerNodes(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(running)
	if !slices.Equal(running, want) {
		t.Fatalf("running %v, want %v", running, want)
	}
	if got := strings.Split(s.AMQPURLsNetwork, ","); len(got) != 3 || got[2] != "amqp://guest:guest@rabbitmq-3:5672/" {
		t.Errorf("AMQPURLsNetwork = %q", s.AMQPURLsNetwork)
	}
	for _, n := range nodes {
		if err := waitAMQP(ctx, n.AMQPURL); err != nil {
			t.Errorf("%s from the host (%s): %v", n.Name, n.AMQPURL, err)
		}
	}

	conn, err := amqp.Dial(nodes[0].AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("cluster.q", true, false, false, false, amqp.Table{"x-queue-type": "quorum"}); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close()
	got, err := s.QueueMembers(ctx, "cluster.q")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("quorum queue members %v, want %v", got, want)
	}
	// Every node runs with the lab's dead-letter confirm timeout.
	for i := range nodes {
		out, err := s.RabbitMQCtl(ctx, i, "eval", "application:get_env(rabbit, dead_letter_worker_publisher_confirm_timeout).")
		want := fmt.Sprintf("{ok,%d}", DeadLetterConfirmTimeout.Milliseconds())
		if err != nil || strings.TrimSpace(out) != want {
			t.Errorf("node %d dead_letter_worker_publisher_confirm_timeout: %q (%v), want %s", i+1, out, err, want)
		}
	}
	// Declared through node 1: RabbitMQ places the leader there.
	if leader, err := s.QueueLeader(ctx, "cluster.q"); err != nil || leader != 0 {
		t.Errorf("quorum queue leader: node index %d (%v), want 0", leader, err)
	}
	if _, err := s.QueueMembers(ctx, "no.such.q"); !errors.Is(err, ErrNoSuchQueue) {
		t.Errorf("members of a missing queue: %v, want ErrNoSuchQueue", err)
	}

	if err := s.KillBrokerNode(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.waitClusterRunning(ctx, 0, 2); err != nil {
		t.Fatalf("after the kill: %v", err)
	}
	if err := s.StartBrokerNode(ctx, 2); err != nil {
		t.Fatal(err)
	}
	running, err = s.RunningBrokerNodes(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(running)
	if !slices.Equal(running, want) {
		t.Errorf("after the restart node 1 sees %v running, want %v", running, want)
	}
	if err := waitAMQP(ctx, s.Brokers()[2].AMQPURL); err != nil {
		t.Errorf("node 3 after the restart: %v", err)
	}
}
