//go:build integration

package queues

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Run with a local RabbitMQ image (see vendormock/images/ensure-images.sh):
//
//	set -a; . .lab/images.env; set +a
//	go test -tags integration -run Integration -v ./worker/queues/
//
// The image must keep the official image's contract: AMQP on 5672,
// guest/guest allowed from the network, "Server startup complete" on stdout.

// startRabbit starts RabbitMQ from $LAB_IMAGE_RABBITMQ and returns an AMQP
// URL; the container is terminated when the test ends.
func startRabbit(t *testing.T) string {
	t.Helper()
	image := os.Getenv("LAB_IMAGE_RABBITMQ")
	if image == "" {
		t.Fatal("LAB_IMAGE_RABBITMQ is not set: build the lab images with vendormock/images/ensure-images.sh, then `set -a; . .lab/images.env; set +a` and run again")
	}
	vendormock.EnsureTestcontainersEnv()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := vendormock.StartContainer(ctx, testcontainers.ContainerRequest{
		Image:              image,
		ExposedPorts:       []string{"5672/tcp"},
		HostConfigModifier: vendormock.PublishOnLoopback([]string{"5672/tcp"}, nil),
		WaitingFor: wait.ForAll(
			wait.ForLog("Server startup complete"),
			wait.ForListeningPort("5672/tcp"),
		).WithDeadline(90 * time.Second),
	})
	if c != nil {
		t.Cleanup(func() {
			if err := testcontainers.TerminateContainer(c); err != nil {
				t.Errorf("terminate rabbitmq: %v", err)
			}
		})
	}
	if err != nil {
		t.Fatalf("start rabbitmq from %s: %v", image, err)
	}
	host, err := c.Host(ctx)
	if err != nil {
		t.Fatalf("rabbitmq host: %v", err)
	}
	port, err := c.MappedPort(ctx, "5672/tcp")
	if err != nil {
		t.Fatalf("rabbitmq port: %v", err)
	}
	return fmt.Sprintf("amqp://guest:guest@%s:%s/", host, port.Port())
}

func dial(t *testing.T, url string) (*amqp.Connection, *amqp.Channel) {
	t.Helper()
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("open channel: %v", err)
	}
	return conn, ch
}

// receive waits up to timeout for one message on q. It consumes at
// prefetch 1 and cancels its consumer after the first message, so no
// consumer is left behind to swallow the next test's messages. (basic.get
// would be simpler, but RabbitMQ refuses it on a quorum queue with single
// active consumer: 405 RESOURCE_LOCKED.)
func receive(t *testing.T, ch *amqp.Channel, q string, timeout time.Duration) amqp.Delivery {
	t.Helper()
	if err := ch.Qos(1, 0, false); err != nil {
		t.Fatalf("qos: %v", err)
	}
	receiveSeq++
	tag := fmt.Sprintf("receive-%d", receiveSeq)
	ds, err := ch.Consume(q, tag, false, false, false, false, nil)
	if err != nil {
		t.Fatalf("consume %s: %v", q, err)
	}
	defer func() { _ = ch.Cancel(tag, false) }()
	select {
	case d, ok := <-ds:
		if !ok {
			t.Fatalf("channel closed while waiting on %s", q)
		}
		return d
	case <-time.After(timeout):
		t.Fatalf("nothing arrived on %s within %v", q, timeout)
	}
	return amqp.Delivery{}
}

var receiveSeq int

func publish(t *testing.T, ch *amqp.Channel, q string, p amqp.Publishing) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ch.PublishWithContext(ctx, "", q, true, false, Persistent(p)); err != nil {
		t.Fatalf("publish to %s: %v", q, err)
	}
}

// TestIntegrationTopology runs the topology's broker behaviour on classic
// and on quorum queues of the same broker: the retry and held queues work
// on both (RabbitMQ 3.10 and later support message TTL on quorum queues).
func TestIntegrationTopology(t *testing.T) {
	url := startRabbit(t)
	for _, qt := range QueueTypes {
		t.Run(string(qt), func(t *testing.T) { testTopology(t, url, qt) })
	}
	t.Run("mismatch", func(t *testing.T) { testMismatch(t, url) })
	t.Run("single active consumer", func(t *testing.T) { testSingleActiveConsumer(t, url) })
	t.Run("delivery limit", func(t *testing.T) { testDeliveryLimit(t, url) })
}

func testTopology(t *testing.T, url string, qt QueueType) {
	conn, ch := dial(t, url)
	top := DefaultTopology("it-" + string(qt))
	top.RetryDelay, top.MaxAttempts, top.Type = 700*time.Millisecond, 3, qt

	t.Run("declare twice is idempotent", func(t *testing.T) {
		for i := 1; i <= 2; i++ {
			if err := top.Declare(ch); err != nil {
				t.Fatalf("declare #%d: %v", i, err)
			}
		}
		for _, name := range top.Names.All() {
			q, err := ch.QueueDeclarePassive(name, true, false, false, false, nil)
			if err != nil {
				t.Fatalf("queue %s missing: %v", name, err)
			}
			if q.Messages != 0 {
				t.Fatalf("queue %s has %d messages", name, q.Messages)
			}
		}
	})

	t.Run("other arguments are refused", func(t *testing.T) {
		ch2, err := conn.Channel()
		if err != nil {
			t.Fatalf("open channel: %v", err)
		}
		other := top
		other.RetryMaxDelay = 2 * time.Minute
		err = other.Declare(ch2)
		var ae *amqp.Error
		if !errors.As(err, &ae) || ae.Code != amqp.PreconditionFailed || !errors.Is(err, ErrQueueMismatch) {
			t.Fatalf("redeclare with another TTL = %v, want PRECONDITION_FAILED", err)
		}
		if me, _ := errors.AsType[*MismatchError](err); me == nil || me.Argument != ArgMessageTTL || me.Queue != top.Names.Retry {
			t.Fatalf("mismatch %#v, want %s on %s", err, ArgMessageTTL, top.Names.Retry)
		}
	})

	t.Run("retry comes back to main after its expiration", func(t *testing.T) {
		sent := time.Now()
		publish(t, ch, top.Names.Retry, amqp.Publishing{
			Body:       []byte(`{"refkey":"retry-1"}`),
			Headers:    WithAttempt(amqp.Table{HeaderReason: "dial refused"}, 1),
			Expiration: Expiration(top.RetryDelay), // as the worker sets it
		})
		d := receive(t, ch, top.Names.Main, 15*time.Second)
		waited := time.Since(sent)
		if waited > 10*time.Second {
			t.Fatalf("came back after %v: the per-message expiration was ignored", waited)
		}
		if string(d.Body) != `{"refkey":"retry-1"}` {
			t.Fatalf("body %q", d.Body)
		}
		if waited < top.RetryDelay-50*time.Millisecond {
			t.Fatalf("came back after %v, before RetryDelay %v", waited, top.RetryDelay)
		}
		if Attempt(d.Headers) != 1 || d.Headers[HeaderReason] != "dial refused" {
			t.Fatalf("headers lost on the way: %v", d.Headers)
		}
		if _, ok := d.Headers["x-death"]; !ok {
			t.Fatalf("no x-death header: not dead-lettered? %v", d.Headers)
		}
		if d.DeliveryMode != amqp.Persistent {
			t.Fatalf("delivery mode %d, want persistent", d.DeliveryMode)
		}
		t.Logf("retry round trip %v (RetryDelay %v)", waited, top.RetryDelay)
		if err := d.Ack(false); err != nil {
			t.Fatalf("ack: %v", err)
		}
	})

	t.Run("held comes back to main when its Expiration ends", func(t *testing.T) {
		ch3, err := conn.Channel()
		if err != nil {
			t.Fatalf("open channel: %v", err)
		}
		sent := time.Now()
		publish(t, ch3, top.Names.Held, amqp.Publishing{Body: []byte("held-1"), Expiration: Expiration(400 * time.Millisecond)})
		d := receive(t, ch3, top.Names.Main, 15*time.Second)
		if string(d.Body) != "held-1" || time.Since(sent) < 350*time.Millisecond {
			t.Fatalf("got %q after %v", d.Body, time.Since(sent))
		}
		if d.Expiration != "" {
			t.Fatalf("released message still has Expiration %q: it would expire again in main", d.Expiration)
		}
		if err := d.Ack(false); err != nil {
			t.Fatalf("ack: %v", err)
		}
	})

	// Documents the broker behaviour the held queue design accounts for:
	// per-message TTL expires only at the head, so a shorter TTL behind a
	// longer one waits for it. The worker never produces that order (its
	// expiry instants are non-decreasing), see the package doc.
	t.Run("per-message TTL expires only at the head of held", func(t *testing.T) {
		ch5, err := conn.Channel()
		if err != nil {
			t.Fatalf("open channel: %v", err)
		}
		sent := time.Now()
		publish(t, ch5, top.Names.Held, amqp.Publishing{Body: []byte("long"), Expiration: "1000"})
		publish(t, ch5, top.Names.Held, amqp.Publishing{Body: []byte("short"), Expiration: "50"})
		first := receive(t, ch5, top.Names.Main, 15*time.Second)
		second := receive(t, ch5, top.Names.Main, 15*time.Second)
		waited := time.Since(sent)
		if string(first.Body) != "long" || string(second.Body) != "short" || waited < 950*time.Millisecond {
			t.Fatalf("got %q then %q after %v; want long then short after about 1 s", first.Body, second.Body, waited)
		}
		_ = first.Ack(false)
		_ = second.Ack(false)
	})

	t.Run("reject without requeue on main lands in dead", func(t *testing.T) {
		ch4, err := conn.Channel()
		if err != nil {
			t.Fatalf("open channel: %v", err)
		}
		publish(t, ch4, top.Names.Main, amqp.Publishing{Body: []byte("poison")})
		d := receive(t, ch4, top.Names.Main, 10*time.Second)
		if err := d.Reject(false); err != nil {
			t.Fatalf("reject: %v", err)
		}
		dd := receive(t, ch4, top.Names.Dead, 10*time.Second)
		if string(dd.Body) != "poison" {
			t.Fatalf("dead queue got %q", dd.Body)
		}
		_ = dd.Ack(false)
	})
}
