//go:build integration

package worker

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// A three-node RabbitMQ cluster from $LAB_IMAGE_RABBITMQ (vendormock's
// StartBrokers), shared by the subtests: about a minute to start on a
// 2-core machine.

type clusterLog struct{ t *testing.T }

func (l clusterLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func startCluster(t *testing.T, ctx context.Context) *vendormock.Stack {
	t.Helper()
	image := os.Getenv("LAB_IMAGE_RABBITMQ")
	if image == "" {
		t.Fatal("LAB_IMAGE_RABBITMQ is not set: build the lab images with vendormock/images/ensure-images.sh, then `set -a; . .lab/images.env; set +a` and run again")
	}
	s, err := vendormock.StartBrokers(ctx, vendormock.Options{BrokerNodes: 3, Images: vendormock.Images{RabbitMQ: image}, Log: clusterLog{t}})
	if err != nil {
		t.Fatalf("StartBrokers: %v", err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Close(cctx); err != nil {
			t.Errorf("close cluster: %v", err)
		}
	})
	t.Logf("cluster ready in %.1f s", s.StartDuration.Seconds())
	return s
}

func clusterChannel(t *testing.T, url string) *amqp.Channel {
	t.Helper()
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// deadLettered returns, for each quorum queue named, the messages it
// holds as dead-lettered and not yet confirmed by the target (rabbit_fifo's
// num_discarded + num_discard_checked_out, read from node 1's member):
// RabbitMQ 3.10.8's list_queues has no messages_dlx column yet.
func deadLettered(t *testing.T, ctx context.Context, s *vendormock.Stack, names ...string) map[string]int {
	t.Helper()
	var bins []string
	for _, n := range names {
		bins = append(bins, `<<"`+n+`">>`)
	}
	expr := `[begin {ok, Q} = rabbit_amqqueue:lookup(rabbit_misc:r(<<"/">>, queue, N)), ` +
		`{ok, {_, O}, _} = ra:local_query(amqqueue:get_pid(Q), fun rabbit_fifo:overview/1), ` +
		`{N, maps:get(num_discarded, O) + maps:get(num_discard_checked_out, O)} end || N <- [` + strings.Join(bins, ",") + `]].`
	out, err := s.RabbitMQCtl(ctx, 0, "eval", expr)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int{}
	for _, n := range names {
		re := regexp.MustCompile(`\{<<"` + regexp.QuoteMeta(n) + `">>,(\d+)\}`)
		sm := re.FindStringSubmatch(out)
		if sm == nil {
			t.Fatalf("dead-lettered count of %s not in %q", n, out)
		}
		m[n], _ = strconv.Atoi(sm[1])
	}
	return m
}

// TestIntegrationCluster runs the cluster cases on one cluster.
func TestIntegrationCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s := startCluster(t, ctx)
	t.Run("dead-letter hop into a queue without a leader", func(t *testing.T) { testDeadLetterHop(t, ctx, s) })
	t.Run("worker moves to another node", func(t *testing.T) { testWorkerFailover(t, ctx, s) })
}

// testDeadLetterHop is issue 14's measured fact, with its negative
// control: 100 confirmed messages expire by TTL from a three-member quorum
// queue (declared with the worker's own Held arguments) into a quorum queue
// whose only member, node 3, is killed. With RabbitMQ's default
// at-most-once dead-lettering (Topology.DeadLetterAtMostOnce) all 100 are
// lost; with the topology's at-least-once they stay in the source
// (dead-lettered, unconfirmed) and all 100 reach the target once node 3
// is back.
func testDeadLetterHop(t *testing.T, ctx context.Context, s *vendormock.Stack) {
	const n = 100
	nodes := s.Brokers()
	// One member, on node 3: declared through node 3 (RabbitMQ places a
	// new queue's leader on the declaring client's node by default).
	ch3 := clusterChannel(t, nodes[2].AMQPURL)
	ch1 := clusterChannel(t, nodes[0].AMQPURL)
	type hop struct{ source, target string }
	hops := map[string]hop{"at-most-once": {"hop.amo", "hop.amo.target"}, "at-least-once": {"hop.alo", "hop.alo.target"}}
	for strategy, h := range hops {
		if _, err := ch3.QueueDeclare(h.target, true, false, false, false, amqp.Table{"x-queue-type": "quorum", "x-quorum-initial-group-size": int64(1)}); err != nil {
			t.Fatal(err)
		}
		top := queues.DefaultTopology("hop")
		top.Type = queues.Quorum
		top.DeadLetterAtMostOnce = strategy == "at-most-once"
		args := amqp.Table{}
		for k, v := range top.Queues()[3].Args { // Held, as the worker declares it
			args[k] = v
		}
		args[queues.ArgDeadLetterRoutingKey] = h.target
		if _, err := ch1.QueueDeclare(h.source, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
	}
	members := func(q string) []string {
		m, err := s.QueueMembers(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, h := range hops {
		if m := members(h.target); !slices.Equal(m, []string{nodes[2].Name}) {
			t.Fatalf("%s members %v, want only %s", h.target, m, nodes[2].Name)
		}
		if m := members(h.source); len(m) != 3 {
			t.Fatalf("%s members %v, want 3", h.source, m)
		}
	}
	depth := func(q string) int {
		ch := clusterChannel(t, nodes[0].AMQPURL)
		st, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
		if err != nil {
			t.Fatalf("inspect %s: %v", q, err)
		}
		return st.Messages
	}

	if err := s.KillBrokerNode(ctx, 2); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = s.StartBrokerNode(context.WithoutCancel(ctx), 2)
		}
	}()
	if err := ch1.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for _, h := range hops {
		var dcs []*amqp.DeferredConfirmation
		for i := range n {
			dc, err := ch1.PublishWithDeferredConfirmWithContext(ctx, "", h.source, true, false, amqp.Publishing{
				DeliveryMode: amqp.Persistent, Expiration: "500", Body: fmt.Appendf(nil, "%s-%d", h.source, i)})
			if err != nil {
				t.Fatal(err)
			}
			dcs = append(dcs, dc)
		}
		for i, dc := range dcs {
			if ok, err := dc.WaitContext(ctx); !ok || err != nil {
				t.Fatalf("%s publish %d: confirmed %v, %v", h.source, i, ok, err)
			}
		}
	}
	// Every message expired: nothing ready in either source; the
	// at-least-once source still holds all 100 as dead-lettered.
	deadline := time.Now().Add(30 * time.Second)
	for depth("hop.amo") != 0 || depth("hop.alo") != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("with node 3 down: %d and %d ready in the sources 30 s after publishing, want 0", depth("hop.amo"), depth("hop.alo"))
		}
		time.Sleep(500 * time.Millisecond)
	}
	held := deadLettered(t, ctx, s, "hop.amo", "hop.alo")
	for try := 0; held["hop.alo"] != n && try < 5; try++ {
		time.Sleep(time.Second)
		held = deadLettered(t, ctx, s, "hop.amo", "hop.alo")
	}
	t.Logf("node 3 down, all expired: hop.amo holds %d dead-lettered, hop.alo holds %d", held["hop.amo"], held["hop.alo"])
	if held["hop.alo"] != n || held["hop.amo"] != 0 {
		t.Fatalf("with node 3 down: dead-lettered held %v, want hop.alo %d and hop.amo 0", held, n)
	}

	t0 := time.Now()
	if err := s.StartBrokerNode(ctx, 2); err != nil {
		t.Fatal(err)
	}
	restarted = true
	running, err := s.RunningBrokerNodes(ctx, 0)
	if err != nil || len(running) != 3 {
		t.Fatalf("after the restart node 1 sees %v running (%v), want 3", running, err)
	}
	// RabbitMQ re-publishes the dead letters the target did not confirm
	// every dead_letter_worker_publisher_confirm_timeout: the lab's cluster
	// sets it to vendormock.DeadLetterConfirmTimeout (RabbitMQ's default,
	// 3 min, made this wait up to 8 min). Three rounds and a margin.
	deadline = time.Now().Add(3*vendormock.DeadLetterConfirmTimeout + 30*time.Second)
	for depth("hop.alo.target") < n {
		if time.Now().After(deadline) {
			t.Fatalf("at-least-once target holds %d of %d after %v", depth("hop.alo.target"), n, time.Since(t0))
		}
		time.Sleep(time.Second)
	}
	t.Logf("at-least-once: %d of %d in the target %.1f s after node 3 was started", depth("hop.alo.target"), n, time.Since(t0).Seconds())
	held = deadLettered(t, ctx, s, "hop.amo", "hop.alo")
	survived := depth("hop.amo.target") + depth("hop.amo") + held["hop.amo"]
	t.Logf("at-most-once (negative control): %d of %d survived", survived, n)
	if survived != 0 {
		t.Errorf("at-most-once: %d of %d survived, want 0 (the loss this topology exists to prevent)", survived, n)
	}
	if got := depth("hop.alo.target"); got != n {
		t.Errorf("at-least-once target holds %d, want exactly %d", got, n)
	}
	if held["hop.alo"] != 0 {
		t.Errorf("at-least-once source still holds %d dead-lettered", held["hop.alo"])
	}
}

// testWorkerFailover: the worker is given every node's URL (node 1
// first) and quorum queues; node 1, the node it is connected to and the
// leader of its queues, is killed mid-run. The worker reconnects to another
// node and every message reaches the vendor exactly once.
func testWorkerFailover(t *testing.T, ctx context.Context, s *vendormock.Stack) {
	const n = 30
	nodes := s.Brokers()
	v := newFakeVendor(t)
	release := make(chan struct{})
	sent := make(chan string, n*2)
	v.hold = func(refkey string) {
		sent <- refkey
		if refkey == "failover-5" {
			<-release // node 1 dies while this send is in flight
		}
	}
	var urls []string
	for _, b := range nodes {
		urls = append(urls, b.AMQPURL)
	}
	cfg := integrationConfig(t, strings.Join(urls, ","), v, "pooled", 0)
	cfg.Queue = "failover"
	cfg.QueueType = "quorum"
	cfg.Heartbeat = 2 * time.Second

	ch := clusterChannel(t, nodes[1].AMQPURL)
	top := cfg.WithDefaults().Topology()
	if err := top.Declare(ch); err != nil {
		t.Fatalf("declare: %v", err)
	}
	pub, err := NewConfirmPublisher(ch)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		b, err := message.Notification{RefKey: fmt.Sprintf("failover-%d", i), Category: message.Info, Recipient: "+821000005678",
			TemplateCode: "SHIP_01", Text: "shipped", CreatedAt: time.Now()}.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := pub.Publish(ctx, "failover", amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: b}); err != nil {
			t.Fatal(err)
		}
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := runAsync(wctx, cfg)
	for rk := range sent {
		if rk == "failover-5" {
			break
		}
	}
	if err := s.KillBrokerNode(ctx, 0); err != nil {
		t.Fatal(err)
	}
	close(release)
	deadline := time.After(2 * time.Minute)
	for {
		c := v.counts()
		if len(c) == n {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("worker ended early: %v (vendor saw %d of %d)", err, len(c), n)
		case <-deadline:
			t.Fatalf("vendor saw %d of %d refkeys 2 min after node 1 was killed", len(c), n)
		case <-time.After(200 * time.Millisecond):
		}
	}
	time.Sleep(2 * time.Second) // a late duplicate would show up here
	stop()
	waitRun(t, done, 30*time.Second)
	for rk, k := range v.counts() {
		if k != 1 {
			t.Errorf("%s sent %d times", rk, k)
		}
	}
	if err := s.StartBrokerNode(context.WithoutCancel(ctx), 0); err != nil {
		t.Errorf("restart node 1: %v", err)
	}
}
