package vendormock

import (
	"context"
	"strings"
	"testing"
)

// TestClusterConf: node 1 is the seed (no peer discovery), every other
// node discovers node 1 only, with retries; all keep the image's guest
// and listener settings.
func TestClusterConf(t *testing.T) {
	seed := clusterConf(0)
	if strings.Contains(seed, "cluster_formation") {
		t.Errorf("node 1 discovers peers: %q", seed)
	}
	for i := 1; i < 3; i++ {
		c := clusterConf(i)
		for _, want := range []string{"loopback_users = none", "listeners.tcp.default = 5672",
			"cluster_formation.peer_discovery_backend = classic_config",
			"cluster_formation.classic_config.nodes.1 = rabbit@rabbitmq-1\n", "cluster_formation.discovery_retry_limit"} {
			if !strings.Contains(c, want) {
				t.Errorf("node %d conf lacks %q: %q", i+1, want, c)
			}
		}
		if strings.Contains(c, "nodes.2") {
			t.Errorf("node %d conf names more than the seed: %q", i+1, c)
		}
	}
	if !strings.Contains(seed, "loopback_users = none") {
		t.Errorf("seed conf %q", seed)
	}
}

func TestJoinNetworkURLs(t *testing.T) {
	nodes := []BrokerNode{{AMQPURLNetwork: "amqp://guest:guest@rabbitmq-1:5672/"}, {AMQPURLNetwork: "amqp://guest:guest@rabbitmq-2:5672/"}}
	if got, want := joinNetworkURLs(nodes), "amqp://guest:guest@rabbitmq-1:5672/,amqp://guest:guest@rabbitmq-2:5672/"; got != want {
		t.Errorf("joinNetworkURLs = %q, want %q", got, want)
	}
}

// TestBrokerNodesBounds: a bad node count is refused before anything
// starts (no Docker needed).
func TestBrokerNodesBounds(t *testing.T) {
	for _, n := range []int{-1, MaxBrokerNodes + 1} {
		s, err := StartBrokers(context.Background(), Options{BrokerNodes: n})
		if err == nil || s != nil || !strings.Contains(err.Error(), "broker nodes") {
			t.Errorf("StartBrokers(BrokerNodes=%d) = %v, %v; want an error naming broker nodes", n, s, err)
		}
	}
	var s Stack
	if _, _, err := s.broker(0); err == nil {
		t.Error("broker(0) on a stack without brokers: no error")
	}
}
