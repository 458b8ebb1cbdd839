package worker

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// fakeConfirmBroker is what ConfirmPublisher relies on of RabbitMQ and
// amqp091-go, and no more: each publish comes out on sent in publish
// order with its own confirmation; a mandatory publish's return is pushed
// into the returns buffer before its confirmation is done (the test, or
// run, does both in that order, on one goroutine like the library's
// reader). A return that finds the buffer full is counted: the library
// would block its reader, then drop the return after 5 s.
type fakeConfirmBroker struct {
	returns     chan amqp.Return
	closes      chan *amqp.Error
	sent        chan *fakePublish
	fullReturns atomic.Int64
	closed      atomic.Bool
}

type fakePublish struct {
	queue string
	msg   amqp.Publishing
	done  chan struct{}
	ack   bool
}

func (f *fakePublish) Done() <-chan struct{} { return f.done }

func (f *fakePublish) Acked() bool {
	select {
	case <-f.done:
		return f.ack
	default:
		return false
	}
}

func newFakeConfirmBroker(returnsCap int) *fakeConfirmBroker {
	return &fakeConfirmBroker{returns: make(chan amqp.Return, returnsCap),
		closes: make(chan *amqp.Error, 1), sent: make(chan *fakePublish, 4096)}
}

// publisher is a ConfirmPublisher on b, its window the returns capacity.
func (b *fakeConfirmBroker) publisher() *ConfirmPublisher {
	return newConfirmPublisher(b.publish, b.returns, b.closes)
}

func (b *fakeConfirmBroker) publish(ctx context.Context, queue string, msg amqp.Publishing) (confirmation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.closed.Load() {
		return nil, amqp.ErrClosed
	}
	h := make(amqp.Table, len(msg.Headers))
	for k, v := range msg.Headers {
		h[k] = v // what the wire and the return carry
	}
	msg.Headers = h
	fp := &fakePublish{queue: queue, msg: msg, done: make(chan struct{})}
	b.sent <- fp
	return fp, nil
}

// ret pushes fp's basic.return (312 NO_ROUTE) into the returns buffer.
func (b *fakeConfirmBroker) ret(fp *fakePublish) {
	r := amqp.Return{ReplyCode: 312, ReplyText: "NO_ROUTE", RoutingKey: fp.queue, Headers: fp.msg.Headers, Body: fp.msg.Body}
	select {
	case b.returns <- r:
	default:
		b.fullReturns.Add(1)
	}
}

func (b *fakeConfirmBroker) confirm(fp *fakePublish, ack bool) {
	fp.ack = ack
	close(fp.done)
}

// closeChannel is the broker closing the channel with e: the close reason
// first, then the returns channel closed and every pending confirmation
// nacked (channel.go shutdown, closeResources).
func (b *fakeConfirmBroker) closeChannel(e *amqp.Error, pending ...*fakePublish) {
	b.closed.Store(true)
	b.closes <- e
	close(b.returns)
	for _, fp := range pending {
		b.confirm(fp, false)
	}
}

// run is the reader of an automatic broker until stop: it takes the
// publishes on the wire in batches of up to batch (waiting up to 2 ms for
// more), pushes the returns of those to a queue named "missing-..." in
// order, then confirms the batch in a shuffled order (RabbitMQ may confirm
// out of order; each return still precedes its own confirm). Routed
// bodies go to stored.
func (b *fakeConfirmBroker) run(stop <-chan struct{}, seed uint64, batch int, stored *sync.Map) {
	rng := rand.New(rand.NewPCG(seed, 29))
	for {
		var got []*fakePublish
		select {
		case fp := <-b.sent:
			got = append(got, fp)
		case <-stop:
			return
		}
		wait := time.NewTimer(2 * time.Millisecond)
	more:
		for len(got) < batch {
			select {
			case fp := <-b.sent:
				got = append(got, fp)
			case <-wait.C:
				break more
			}
		}
		wait.Stop()
		for _, fp := range got {
			if strings.HasPrefix(fp.queue, "missing-") {
				b.ret(fp)
			} else {
				stored.Store(string(fp.msg.Body), fp.queue)
			}
		}
		rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		for _, fp := range got {
			b.confirm(fp, true)
		}
	}
}

// storedBodies lists the bodies a fake broker stored.
func storedBodies(m *sync.Map) func() []string {
	return func() []string {
		var out []string
		m.Range(func(k, _ any) bool { out = append(out, k.(string)); return true })
		return out
	}
}

// waitFor polls cond until it holds, failing after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
