//go:build integration

package queues

import (
	"errors"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// testMismatch: queues declared classic, then the worker's topology with
// quorum: the broker's 406 comes back as one *MismatchError naming the
// main queue, the first argument the broker found different (RabbitMQ
// 3.10.8 checks x-overflow before x-queue-type) with both values, and
// every argument the worker declares. Quorum queues declared by an older
// worker (at-most-once dead-lettering) are refused the same way.
func testMismatch(t *testing.T, url string) {
	conn, ch := dial(t, url)
	classic := DefaultTopology("mm")
	if err := classic.Declare(ch); err != nil {
		t.Fatalf("declare classic: %v", err)
	}
	ch2, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	quorum := classic
	quorum.Type = Quorum
	err = quorum.Declare(ch2)
	me, ok := errors.AsType[*MismatchError](err)
	if !ok {
		t.Fatalf("declare quorum over classic = %v, want *MismatchError", err)
	}
	if me.Queue != "mm" || (me.Argument != ArgQueueType && me.Argument != ArgOverflow && me.Argument != ArgDeadLetterStrategy) {
		t.Fatalf("mismatch %+v", me)
	}
	if msg := err.Error(); !strings.Contains(msg, "x-queue-type=quorum") || !strings.Contains(msg, "x-dead-letter-strategy=at-least-once") {
		t.Errorf("message does not name the declared arguments: %s", msg)
	}
	t.Logf("worker would log: %v", err)
	if !ch2.IsClosed() {
		t.Error("the broker did not close the channel after 406")
	}

	// Turning single active consumer on for a queue declared without it
	// is refused the same way.
	ch3, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	plain := DefaultTopology("mm-sac")
	plain.SingleActiveConsumer = false
	if err := plain.Declare(ch3); err != nil {
		t.Fatalf("declare without SAC: %v", err)
	}
	ch4, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	err = DefaultTopology("mm-sac").Declare(ch4)
	if me, ok := errors.AsType[*MismatchError](err); !ok || me.Argument != ArgSingleActiveConsumer {
		t.Fatalf("turn SAC on = %v, want a mismatch on %s", err, ArgSingleActiveConsumer)
	}
	// Quorum queues of an older worker: no at-least-once arguments.
	ch5, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	old := DefaultTopology("mm-dlx")
	old.Type, old.DeadLetterAtMostOnce = Quorum, true
	if err := old.Declare(ch5); err != nil {
		t.Fatalf("declare old quorum topology: %v", err)
	}
	ch6, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	current := old
	current.DeadLetterAtMostOnce = false
	err = current.Declare(ch6)
	me, ok = errors.AsType[*MismatchError](err)
	if !ok || me.Queue != "mm-dlx" || (me.Argument != ArgOverflow && me.Argument != ArgDeadLetterStrategy) || me.Current != "none" {
		t.Fatalf("redeclare with at-least-once = %v, want a mismatch on mm-dlx naming x-overflow or x-dead-letter-strategy", err)
	}
	for _, want := range []string{"x-dead-letter-strategy=at-least-once", "x-overflow=reject-publish"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
	t.Logf("worker would log: %v", err)
}

// consume starts a consumer at prefetch 1 on its own connection.
func consume(t *testing.T, url, q, tag string) (*amqp.Connection, <-chan amqp.Delivery) {
	t.Helper()
	conn, ch := dial(t, url)
	if err := ch.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume(q, tag, false, false, false, false, nil)
	if err != nil {
		t.Fatalf("consume %s: %v", q, err)
	}
	return conn, ds
}

func next(t *testing.T, ds <-chan amqp.Delivery, within time.Duration) (amqp.Delivery, bool) {
	t.Helper()
	select {
	case d, ok := <-ds:
		return d, ok
	case <-time.After(within):
		return amqp.Delivery{}, false
	}
}

// testSingleActiveConsumer: with x-single-active-consumer two consumers
// share the queue but only the first receives; when its connection dies
// holding an unacked message, the standby one becomes active and receives
// that message again (redelivered). Without the argument (the negative
// control) both receive at once.
func testSingleActiveConsumer(t *testing.T, url string) {
	for _, qt := range QueueTypes {
		t.Run(string(qt), func(t *testing.T) {
			_, ch := dial(t, url)
			top := DefaultTopology("sac-" + string(qt))
			top.Type = qt
			if err := top.Declare(ch); err != nil {
				t.Fatal(err)
			}
			connA, dsA := consume(t, url, top.Names.Main, "a")
			_, dsB := consume(t, url, top.Names.Main, "b")
			publish(t, ch, top.Names.Main, amqp.Publishing{Body: []byte("m1")})
			publish(t, ch, top.Names.Main, amqp.Publishing{Body: []byte("m2")})
			d, ok := next(t, dsA, 10*time.Second)
			if !ok || string(d.Body) != "m1" {
				t.Fatalf("active consumer got %q %v, want m1", d.Body, ok)
			}
			if d, ok := next(t, dsB, 500*time.Millisecond); ok {
				t.Fatalf("standby consumer received %q while the active one holds m1", d.Body)
			}
			_ = connA.Close() // dies holding m1 unacked
			got := map[string]bool{}
			for range 2 {
				d, ok := next(t, dsB, 10*time.Second)
				if !ok {
					t.Fatalf("standby got nothing after the active one died (so far %v)", got)
				}
				got[string(d.Body)] = true
				if string(d.Body) == "m1" && !d.Redelivered {
					t.Error("m1 not marked redelivered")
				}
				_ = d.Ack(false)
			}
			if !got["m1"] || !got["m2"] {
				t.Fatalf("standby got %v, want m1 and m2", got)
			}
		})
	}
	t.Run("negative control without SAC", func(t *testing.T) {
		_, ch := dial(t, url)
		top := DefaultTopology("nosac")
		top.SingleActiveConsumer = false
		if err := top.Declare(ch); err != nil {
			t.Fatal(err)
		}
		_, dsA := consume(t, url, top.Names.Main, "a")
		_, dsB := consume(t, url, top.Names.Main, "b")
		publish(t, ch, top.Names.Main, amqp.Publishing{Body: []byte("m1")})
		publish(t, ch, top.Names.Main, amqp.Publishing{Body: []byte("m2")})
		_, okA := next(t, dsA, 5*time.Second)
		_, okB := next(t, dsB, 5*time.Second)
		if !okA || !okB {
			t.Fatalf("without SAC both consumers should hold a message at once: a=%v b=%v", okA, okB)
		}
	})
}

// testDeliveryLimit: on a quorum main queue a message whose consumer dies
// holding it DeliveryLimit+1 times is dead-lettered to Dead instead of
// being redelivered for ever, with x-death reason delivery_limit.
func testDeliveryLimit(t *testing.T, url string) {
	_, ch := dial(t, url)
	top := DefaultTopology("poison")
	top.Type, top.DeliveryLimit = Quorum, 2
	if err := top.Declare(ch); err != nil {
		t.Fatal(err)
	}
	publish(t, ch, top.Names.Main, amqp.Publishing{Body: []byte("poison")})
	deliveries := 0
	for range top.DeliveryLimit + 1 {
		conn, ds := consume(t, url, top.Names.Main, "crashing")
		if _, ok := next(t, ds, 10*time.Second); !ok {
			break
		}
		deliveries++
		_ = conn.Close() // the worker "crashes" holding it
	}
	if deliveries != top.DeliveryLimit+1 {
		t.Fatalf("%d deliveries, want %d (limit %d, then dead-lettered)", deliveries, top.DeliveryLimit+1, top.DeliveryLimit)
	}
	d := receive(t, ch, top.Names.Dead, 10*time.Second)
	if string(d.Body) != "poison" {
		t.Fatalf("dead queue got %q", d.Body)
	}
	deaths, _ := d.Headers["x-death"].([]any)
	if len(deaths) == 0 {
		t.Fatalf("no x-death header: %v", d.Headers)
	}
	death, _ := deaths[0].(amqp.Table)
	t.Logf("x-death %v", death)
	if death["reason"] != "delivery_limit" {
		t.Errorf("x-death reason %v, want delivery_limit", death["reason"])
	}
	_ = d.Ack(false)
	q, err := ch.QueueDeclarePassive(top.Names.Main, true, false, false, false, nil)
	if err != nil || q.Messages != 0 {
		t.Errorf("main still holds %d messages (%v)", q.Messages, err)
	}
}
