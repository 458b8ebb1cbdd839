package sim

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// deliverAll opens a consume channel with prefetch n over ids and
// returns its n deliveries.
func deliverAll(t *testing.T, b *Broker, ids ...string) (*Channel, []amqp.Delivery) {
	t.Helper()
	for _, id := range ids {
		b.Produce(msg(id))
	}
	ch := b.OpenChannel(len(ids))
	var ds []amqp.Delivery
	for range ids {
		d, ok := ch.Next()
		if !ok {
			t.Fatalf("%d of %d delivered", len(ds), len(ids))
		}
		ds = append(ds, d)
	}
	return ch, ds
}

// TestBrokerTagsPerChannel: each channel numbers its deliveries 1, 2,
// 3, ..., as RabbitMQ scopes delivery tags per channel.
func TestBrokerTagsPerChannel(t *testing.T) {
	b, _ := newTestBroker(false)
	ch, ds := deliverAll(t, b, "a", "b")
	_ = ds[1].Ack(true)
	ch.Close() // the next channel is the active consumer
	_, es := deliverAll(t, b, "c", "d")
	got := []uint64{ds[0].DeliveryTag, ds[1].DeliveryTag, es[0].DeliveryTag, es[1].DeliveryTag}
	if !slices.Equal(got, []uint64{1, 2, 1, 2}) {
		t.Errorf("tags %v; want 1 2 on each channel", got)
	}
}

// TestBrokerMultipleAck: Ack(3, multiple) settles every unsettled
// delivery of the channel up to 3 (2, nacked and requeued before, is no
// longer one) and leaves 4; each settled delivery is told to the acked
// hook. Ack(0, multiple) settles the rest; Nack(tag, multiple) returns a
// range.
func TestBrokerMultipleAck(t *testing.T) {
	b, _ := newTestBroker(false)
	var acked []string
	b.acked = func(_ *Channel, id string, _ bool) { acked = append(acked, id) }
	ch, ds := deliverAll(t, b, "a", "b", "c", "d", "e")
	if err := ds[1].Nack(false, true); err != nil {
		t.Fatal(err)
	}
	if err := ds[2].Ack(true); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(acked, []string{"a", "c"}) || len(ch.unacked) != 2 || b.Len(b.names.Main) != 1 {
		t.Fatalf("after Ack(3, multiple): acked %v, unacked %d, main %d; want a c, 2 (d, e), 1 (b)", acked, len(ch.unacked), b.Len(b.names.Main))
	}
	if err := ds[3].Nack(true, true); err != nil { // tag 4, multiple: only 4 is left below it
		t.Fatal(err)
	}
	if err := (acker{ch}).Ack(0, true); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(acked, []string{"a", "c", "e"}) || len(ch.unacked) != 0 || b.Len(b.names.Main) != 2 {
		t.Errorf("acked %v, unacked %d, main %d; want a c e, 0, 2 (b, d)", acked, len(ch.unacked), b.Len(b.names.Main))
	}
	if errs := b.TakeChannelErrors(); len(errs) > 0 {
		t.Errorf("valid settlements caused channel errors: %v", errs)
	}
	if b.Acks["multiple acks"] != 2 || b.Acks["deliveries settled by a multiple ack"] != 3 {
		t.Errorf("counted %v; want 2 multiple acks settling 3 deliveries", b.Acks)
	}
}

// TestBrokerUnknownTagIsAChannelError: an ack naming a tag the channel
// does not hold unsettled (a double ack; a multiple ack naming a tag a
// nack settled, the ack batcher's defect of issue 29; a tag never
// delivered; tag 0 without multiple) closes the channel with 406
// PRECONDITION_FAILED: its unsettled deliveries go back redelivered, the
// session is told, and the step records it. The call returns nil, as
// amqp091-go's Ack does (the close comes after).
func TestBrokerUnknownTagIsAChannelError(t *testing.T) {
	cases := []struct {
		name string
		bad  func(ds []amqp.Delivery) error
	}{
		{"double ack", func(ds []amqp.Delivery) error {
			_ = ds[0].Ack(false)
			return ds[0].Ack(false)
		}},
		{"multiple ack naming a nacked tag", func(ds []amqp.Delivery) error {
			_ = ds[1].Nack(false, true)
			return ds[0].Acknowledger.Ack(2, true)
		}},
		{"a tag never delivered", func(ds []amqp.Delivery) error { return ds[0].Acknowledger.Ack(9, false) }},
		{"tag 0 without multiple", func(ds []amqp.Delivery) error { return ds[0].Acknowledger.Nack(0, false, true) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, _ := newTestBroker(false)
			ch, ds := deliverAll(t, b, "a", "b", "c")
			var told error
			ch.failed = func(err error) { told = err }
			if err := c.bad(ds); err != nil {
				t.Errorf("the call returned %v; want nil (amqp091 sends it and waits for no reply)", err)
			}
			var ae *amqp.Error
			if !errors.As(told, &ae) || ae.Code != amqp.PreconditionFailed {
				t.Errorf("the session was told %v; want 406 PRECONDITION_FAILED", told)
			}
			if ch.Open() || len(b.TakeChannelErrors()) != 1 {
				t.Errorf("channel open %t; want closed, one channel error recorded", ch.Open())
			}
			for _, cp := range b.Copies() {
				if cp.Queue != b.names.Main {
					t.Errorf("%s in %s", cp.Message, cp.Queue)
				}
			}
			if err := ds[2].Ack(false); !errors.Is(err, amqp.ErrClosed) {
				t.Errorf("an ack after the channel error: %v; want amqp.ErrClosed", err)
			}
		})
	}
	// The negative control: the same acks, valid, cause none.
	b, _ := newTestBroker(false)
	_, ds := deliverAll(t, b, "a", "b", "c")
	_ = ds[1].Nack(false, true)
	_ = ds[0].Ack(false)
	_ = ds[2].Acknowledger.Ack(3, true)
	if errs := b.TakeChannelErrors(); len(errs) > 0 || b.Unacked() != 0 {
		t.Errorf("valid acks: channel errors %v, unacked %d", errs, b.Unacked())
	}
}

// TestBrokerAckTellsWhetherACopyCame: the acked hook says whether the
// worker enqueued a copy of the message since its delivery (the checker's
// ack-after-outcome).
func TestBrokerAckTellsWhetherACopyCame(t *testing.T) {
	b, _ := newTestBroker(false)
	got := map[string]bool{}
	b.acked = func(_ *Channel, id string, copied bool) { got[id] = copied }
	_, ds := deliverAll(t, b, "a", "b")
	pub := b.Publisher("handler")
	if err := pub.Publish(t.Context(), b.names.Retry, msg("b")); err != nil {
		t.Fatal(err)
	}
	_ = ds[1].Acknowledger.Ack(2, true)
	if want := map[string]bool{"a": false, "b": true}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("acked %v; want %v", got, want)
	}
}
