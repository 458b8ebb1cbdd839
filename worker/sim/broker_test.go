package sim

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

func newTestBroker(quorum bool) (*Broker, *Clock) {
	clock := NewClock(noon)
	topo := queues.DefaultTopology("notifications")
	if quorum {
		topo.Type, topo.DeliveryLimit = queues.Quorum, 2
	}
	return NewBroker(clock, topo), clock
}

func msg(id string) amqp.Publishing {
	return amqp.Publishing{Headers: amqp.Table{HeaderMessage: id}, Body: []byte(id)}
}

// TestBrokerExpiresAtTheHead: per-message TTLs expire only at the head of
// the queue (a longer one blocks a shorter one behind it), then the
// message is dead-lettered to its target with its expiration removed.
func TestBrokerExpiresAtTheHead(t *testing.T) {
	b, clock := newTestBroker(false)
	pub := b.Publisher("handler")
	long, short := msg("long"), msg("short")
	long.Expiration, short.Expiration = "5000", "1000"
	for _, p := range []amqp.Publishing{long, short} {
		if err := pub.Publish(context.Background(), b.names.Retry, p); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(2 * time.Second)
	b.Expire()
	if b.Len(b.names.Retry) != 2 || b.Len(b.names.Main) != 0 {
		t.Fatalf("after 2 s: retry %d, main %d; want 2, 0 (the head blocks)", b.Len(b.names.Retry), b.Len(b.names.Main))
	}
	clock.Advance(3 * time.Second)
	b.Expire()
	cs := b.Copies()
	if len(cs) != 2 || cs[0].Message != "long" || cs[1].Message != "short" || cs[0].Queue != b.names.Main || cs[0].DeathReason != "expired" {
		t.Fatalf("after 5 s: %+v; want long then short in main, reason expired", cs)
	}
	ch := b.OpenChannel(2)
	if d, _ := ch.Next(); d.Expiration != "" {
		t.Errorf("a dead-lettered message kept its expiration %q", d.Expiration)
	}
	// The retry queue's x-message-ttl caps a longer expiration.
	huge := msg("huge")
	huge.Expiration = "999999999"
	_ = pub.Publish(context.Background(), b.names.Retry, huge)
	if next, ok := b.NextExpiry(); !ok || next.Sub(clock.Now()) != queues.DefaultRetryMaxDelay {
		t.Errorf("next expiry in %s; want the queue's cap %s", next.Sub(clock.Now()), queues.DefaultRetryMaxDelay)
	}
}

// TestBrokerRequeuesInOrderOnClose: a closed channel's unacked deliveries
// (prefetched ones included) go back to the head in order, redelivered;
// a settle on the closed channel fails and Live says so.
func TestBrokerRequeuesInOrderOnClose(t *testing.T) {
	b, _ := newTestBroker(false)
	for _, id := range []string{"a", "b", "c"} {
		b.Produce(msg(id))
	}
	ch := b.OpenChannel(2)
	d, _ := ch.Next()
	if b.Unacked() != 2 || b.Len(b.names.Main) != 1 {
		t.Fatalf("prefetch 2: unacked %d, ready %d", b.Unacked(), b.Len(b.names.Main))
	}
	ch.Close()
	if err := d.Ack(false); !errors.Is(err, amqp.ErrClosed) {
		t.Errorf("ack on a closed channel: %v; want amqp.ErrClosed", err)
	}
	if l, ok := d.Acknowledger.(interface{ Live() bool }); !ok || l.Live() {
		t.Error("a delivery of a closed channel says it is live")
	}
	ch2 := b.OpenChannel(2)
	for _, want := range []struct {
		id          string
		redelivered bool
	}{{"a", true}, {"b", true}, {"c", false}} {
		d, ok := ch2.Next()
		if !ok || string(d.Body) != want.id || d.Redelivered != want.redelivered {
			t.Fatalf("got %q redelivered=%t; want %q redelivered=%t", d.Body, d.Redelivered, want.id, want.redelivered)
		}
		_ = d.Ack(false)
	}
}

// TestBrokerDeliveryLimit: a quorum queue counts every return (a nack with
// requeue, a closed channel) and dead-letters a message over its limit;
// a classic queue never does.
func TestBrokerDeliveryLimit(t *testing.T) {
	for _, quorum := range []bool{true, false} {
		b, _ := newTestBroker(quorum)
		b.Produce(msg("a"))
		for range 3 {
			ch := b.OpenChannel(1)
			d, ok := ch.Next()
			if !ok {
				break
			}
			_ = d.Nack(false, true)
			ch.Close() // nothing unacked: no return counted; the next channel is the active consumer
		}
		dead := b.Len(b.names.Dead)
		if quorum && (dead != 1 || b.Copies()[0].DeathReason != "delivery_limit") {
			t.Errorf("quorum, limit 2, 3 returns: %+v; want dead-lettered, reason delivery_limit", b.Copies())
		}
		if !quorum && dead != 0 {
			t.Errorf("classic: %d dead-lettered", dead)
		}
	}
}

// TestBrokerPublishFaults: a nacked publish enqueues nothing; a lost
// confirm enqueues the copy and still fails; a reject without requeue
// dead-letters from main.
func TestBrokerPublishFaults(t *testing.T) {
	b, _ := newTestBroker(false)
	pub := b.Publisher("handler")
	b.ArmPublishFault("nack")
	if err := pub.Publish(context.Background(), b.names.Retry, msg("a")); err == nil || b.Len(b.names.Retry) != 0 {
		t.Errorf("nack: err %v, %d enqueued", err, b.Len(b.names.Retry))
	}
	b.ArmPublishFault("confirm-lost")
	if err := pub.Publish(context.Background(), b.names.Retry, msg("a")); err == nil || b.Len(b.names.Retry) != 1 {
		t.Errorf("confirm-lost: err %v, %d enqueued", err, b.Len(b.names.Retry))
	}
	if err := pub.Publish(context.Background(), b.names.Retry, msg("b")); err != nil {
		t.Errorf("a fault fired twice: %v", err)
	}
	b.Produce(msg("c"))
	d, _ := b.OpenChannel(1).Next()
	_ = d.Reject(false)
	if b.Len(b.names.Dead) != 1 {
		t.Errorf("rejected without requeue: %d in dead", b.Len(b.names.Dead))
	}
	if mv := b.TakeMoves(); len(mv) != 4 || mv[0].Who != "handler" || mv[3].Who != "broker" {
		t.Errorf("moves %+v", mv)
	}
}

// TestBrokerSingleActiveConsumer: with x-single-active-consumer on the
// main queue only the first registered consumer gets deliveries; when its
// channel closes, its unacked delivery goes back redelivered and the next
// registered consumer becomes active. Without the argument both consume
// at once (competing consumers).
func TestBrokerSingleActiveConsumer(t *testing.T) {
	cases := []struct {
		name string
		sac  bool
	}{
		{"single active consumer", true},
		{"competing consumers", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clock := NewClock(noon)
			topo := queues.DefaultTopology("notifications")
			topo.SingleActiveConsumer = c.sac
			b := NewBroker(clock, topo)
			for _, id := range []string{"a", "b", "c"} {
				b.Produce(msg(id))
			}
			first, second := b.OpenChannel(1), b.OpenChannel(1)
			d1, ok1 := first.Next()
			d2, ok2 := second.Next()
			if !ok1 || headerString(d1.Headers, HeaderMessage) != "a" {
				t.Fatalf("the first consumer got %v %v; want a", ok1, headerString(d1.Headers, HeaderMessage))
			}
			if c.sac {
				if ok2 {
					t.Fatalf("the standby got %s while the active consumer's channel was open", headerString(d2.Headers, HeaderMessage))
				}
				first.Close()
				d2, ok2 = second.Next()
				if !ok2 || headerString(d2.Headers, HeaderMessage) != "a" || !d2.Redelivered {
					t.Fatalf("after the active consumer's close the standby got %v %s redelivered=%t; want a redelivered",
						ok2, headerString(d2.Headers, HeaderMessage), d2.Redelivered)
				}
				return
			}
			if !ok2 || headerString(d2.Headers, HeaderMessage) != "b" {
				t.Fatalf("the second competing consumer got %v %s; want b", ok2, headerString(d2.Headers, HeaderMessage))
			}
		})
	}
}

// TestBrokerReturnsUnroutable: a nack wraps worker.ErrPublishNacked; the
// fault "unroutable" deletes the empty target queue, so the publish comes
// back as a mandatory return (worker.ErrUnroutable), nothing enqueued,
// and so does every publish to it until a declaration creates it again.
// It waits for a deletable target: never the main or the dead queue (a
// dead-letter target), never a queue that holds a message.
func TestBrokerReturnsUnroutable(t *testing.T) {
	b, _ := newTestBroker(false)
	pub := b.Publisher("handler")
	ctx := context.Background()
	b.ArmPublishFault("nack")
	if err := pub.Publish(ctx, b.names.Retry, msg("a")); !errors.Is(err, worker.ErrPublishNacked) {
		t.Errorf("nack: %v", err)
	}
	if err := pub.Publish(ctx, b.names.Failed, msg("f")); err != nil { // failed holds one
		t.Fatal(err)
	}
	b.ArmPublishFault("unroutable")
	for _, q := range []string{b.names.Main, b.names.Dead, b.names.Failed} {
		if err := pub.Publish(ctx, q, msg("m")); err != nil {
			t.Errorf("publish to %s with unroutable armed: %v", q, err)
		}
	}
	for range 2 {
		if err := pub.Publish(ctx, b.names.Unknown, msg("u")); !errors.Is(err, worker.ErrUnroutable) || b.Len(b.names.Unknown) != 0 {
			t.Errorf("publish to the deleted queue: %v, %d enqueued", err, b.Len(b.names.Unknown))
		}
	}
	if got := b.Missing(); !slices.Equal(got, []string{b.names.Unknown}) || b.Faults["unroutable"] != 1 {
		t.Errorf("missing %v, fired %d", got, b.Faults["unroutable"])
	}
	if made := b.Declare(); !slices.Equal(made, []string{b.names.Unknown}) {
		t.Errorf("declared %v", made)
	}
	if err := pub.Publish(ctx, b.names.Unknown, msg("u")); err != nil || b.Len(b.names.Unknown) != 1 {
		t.Errorf("after the declaration: %v, %d enqueued", err, b.Len(b.names.Unknown))
	}
}
