//go:build integration

package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// TestIntegrationPublishConfirms: ConfirmPublisher's pipelined confirms on
// the lab's RabbitMQ. 64 callers on one publisher, every other publish to
// a queue that does not exist (RabbitMQ returns it, 312 NO_ROUTE, before
// its ack): each caller is told its own outcome, the queue holds exactly
// the bodies told nil, each with the caller's header and the publisher's
// HeaderPublish, and several publishes were at the broker at once.
// Negative control: the same callers taking turns (a mutex held across
// the wait, the publisher before pipelining) have one at a time. Last, a
// body over the broker's max_message_size among concurrent publishes: the
// broker closes the channel (406); every caller returns, those told nil
// are in the queue, no small one is told the 406 as its own, and the big
// one is told ErrPublishNacked with the *amqp.Error when alone (at once,
// or through PublishAlone after ErrCloseNotAttributed). About 30 s on the 2-core machine (rabbitmqctl's Erlang VM
// is most of it).
func TestIntegrationPublishConfirms(t *testing.T) {
	url, c := startRabbit(t)
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatalf("dial broker: %v", err)
	}
	defer conn.Close()
	admin, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	const queue = "copies"
	if _, err := admin.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	// drain gets every message of the queue: the bodies, and what is wrong
	// with a message's headers.
	drain := func(t *testing.T) []string {
		t.Helper()
		var bodies []string
		for {
			d, ok, err := admin.Get(queue, true)
			if err != nil {
				t.Fatalf("get from %s: %v", queue, err)
			}
			if !ok {
				return bodies
			}
			if _, ok := d.Headers[queues.HeaderPublish].(int64); !ok || d.Headers["k"] != string(d.Body) {
				t.Errorf("message %q has headers %v: want the caller's k and an int64 %s", d.Body, d.Headers, queues.HeaderPublish)
			}
			bodies = append(bodies, string(d.Body))
		}
	}
	newPublisher := func(t *testing.T) *ConfirmPublisher {
		t.Helper()
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewConfirmPublisher(ch)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	for _, serial := range []bool{false, true} {
		t.Run(fmt.Sprintf("serial=%v", serial), func(t *testing.T) {
			p := newPublisher(t)
			defer p.Close()
			publish := p.Publish
			if serial {
				var mu sync.Mutex
				publish = func(ctx context.Context, q string, m amqp.Publishing) error {
					mu.Lock()
					defer mu.Unlock()
					return p.Publish(ctx, q, m)
				}
			}
			for _, problem := range concurrentOutcomes(t, publish, func() []string { return drain(t) }, 64, 4) {
				t.Error(problem)
			}
			maxOut := p.maxOutstanding.Load()
			t.Logf("at most %d publishes outstanding at once", maxOut)
			if serial && maxOut != 1 {
				t.Errorf("taking turns: %d publishes outstanding at once, want 1", maxOut)
			}
			if !serial && maxOut < 2 {
				t.Errorf("pipelined: at most %d publish outstanding at once, want several", maxOut)
			}
			if n := p.pendingCount(); n != 0 || len(p.window) != 0 {
				t.Errorf("%d pending, %d window places after every call returned, want 0", n, len(p.window))
			}
		})
	}

	t.Run("over max_message_size", func(t *testing.T) {
		const limit = 512
		setMaxMessageSize(t, c, limit)
		p := newPublisher(t) // a channel opened after the change enforces it
		defer p.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		big := strings.Repeat("x", 2*limit)
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			told  = map[string]error{}
			start = make(chan struct{})
		)
		for i := range 32 {
			body := fmt.Sprintf("small-%d", i)
			if i == 16 {
				body = big
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := p.Publish(ctx, queue, amqp.Publishing{Body: []byte(body), Headers: amqp.Table{"k": body}})
				mu.Lock()
				told[body] = err
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		// The big copy's own 406 is wrapped only when it was alone at the
		// broker; beside others it is told ErrCloseNotAttributed, and
		// alone, on a new channel, the 406 is its own.
		var ae *amqp.Error
		bigErr := told[big]
		if !errors.Is(bigErr, ErrPublishNacked) || !strings.Contains(bigErr.Error(), "PRECONDITION_FAILED") {
			t.Errorf("body over max_message_size: %v, want ErrPublishNacked over the broker's 406", bigErr)
		}
		if errors.Is(bigErr, ErrCloseNotAttributed) {
			p2 := newPublisher(t)
			defer p2.Close()
			bigErr = p2.PublishAlone(ctx, queue, amqp.Publishing{Body: []byte(big)})
		}
		if !errors.Is(bigErr, ErrPublishNacked) || !errors.As(bigErr, &ae) || ae.Code != amqp.PreconditionFailed {
			t.Errorf("body over max_message_size, alone: %v, want ErrPublishNacked and the broker's 406", bigErr)
		}
		inQueue := map[string]bool{}
		for _, b := range drain(t) {
			inQueue[b] = true
		}
		nacked := 0
		for body, err := range told {
			switch {
			case body == big:
			case err == nil && !inQueue[body]:
				t.Errorf("%s told nil but not in %s", body, queue)
			case err == nil:
			case errors.As(err, &ae) && ae.Code == amqp.PreconditionFailed:
				t.Errorf("%s (small) told the 406 as its own: %v", body, err)
			case errors.Is(err, ErrPublishNacked) || errors.Is(err, amqp.ErrClosed):
				nacked++
			default:
				t.Errorf("%s: %v, want nil, ErrPublishNacked or amqp.ErrClosed", body, err)
			}
		}
		t.Logf("31 small publishes beside the big one: %d not confirmed (the channel closed under them)", nacked)
		if inQueue[big] {
			t.Errorf("the body over the limit is in %s", queue)
		}
		if n := p.pendingCount(); n != 0 || len(p.window) != 0 {
			t.Errorf("%d pending, %d window places after the close, want 0", n, len(p.window))
		}
	})
}

// TestIntegrationRepublishTooLargeBesideOthers: TestIntegrationCopyTooLarge
// at concurrency 8: outside the send window, one ad over the broker's
// max_message_size and 15 small ones are copied to the held queue at once
// on the session's confirm channel. The big copy closes the channel (406)
// under the copies beside it. Only the big ad is given up on (dead queue,
// REPUBLISH_FAILED with the 406); every small one lands in the held queue
// (some twice: see below).
// With pipelined confirms and the 406 wrapped into every nacked copy's
// error, a small copy whose attempts all met the big one's closes was
// judged refused for good and its original dead-lettered.
func TestIntegrationRepublishTooLargeBesideOthers(t *testing.T) {
	url, c := startRabbit(t)
	queue := "it-large-beside"
	names := queues.NamesFor(queue)
	v := newFakeVendor(t)
	ad := func(refkey, text string) []byte {
		return encode(t, message.Notification{RefKey: refkey, Category: message.Ad, Recipient: "+821000005678",
			TemplateCode: "PROMO_01", Text: text, CreatedAt: time.Now()})
	}
	const limit, small = 512, 15
	bodies := [][]byte{ad("big-ad", strings.Repeat("sale ", 190))}
	for i := 1; i <= small; i++ {
		bodies = append(bodies, ad(fmt.Sprintf("small-%d", i), "sale"))
	}
	if len(bodies[0]) <= limit || len(bodies[1]) >= limit {
		t.Fatalf("body sizes %d and %d do not straddle the limit %d", len(bodies[0]), len(bodies[1]), limit)
	}
	publishBodies(t, url, queue, bodies...)
	setMaxMessageSize(t, c, limit)

	cfg := integrationConfig(t, url, v, "pooled", len(bodies))
	cfg.Queue, cfg.Concurrency = queue, 8
	cfg.ClockStart = time.Date(2026, 11, 30, 21, 0, 0, 0, seoul) // the window is closed
	waitRun(t, runAsync(context.Background(), cfg), 90*time.Second)

	by := recordsByRefKey(readRecordFile(t, cfg.RecordsPath))
	if r := by["big-ad"]; len(r) != 1 || r[0].Queue != names.Dead || r[0].Code != CodeRepublishFailed ||
		!strings.Contains(r[0].PublishError, "406") {
		t.Errorf("big-ad records %+v, want one given up to %s with a 406", r, names.Dead)
	}
	for i := 1; i <= small; i++ {
		rk := fmt.Sprintf("small-%d", i)
		if r := by[rk]; len(r) != 1 || r[0].Outcome != outcome.OutsideSendWindow || r[0].Queue != names.Held {
			t.Errorf("%s records %+v, want one OUTSIDE_SEND_WINDOW in %s", rk, r, names.Held)
		}
	}
	// A small copy nacked by the close may have been routed before it
	// (RabbitMQ confirms once the copy is persisted; the close cancels
	// that): its next attempt then leaves a second copy, which the ledger
	// answers as a DUPLICATE when it comes back. Each small one is there
	// at least once; the big one never.
	held := map[string]int{}
	withChannel(t, url, func(ch *amqp.Channel) error {
		for {
			d, ok, err := ch.Get(names.Held, true)
			if err != nil || !ok {
				return err
			}
			n, err := message.Decode(d.Body)
			if err != nil {
				return fmt.Errorf("decode a copy in %s: %w", names.Held, err)
			}
			held[n.RefKey]++
		}
	})
	extra := 0
	for i := 1; i <= small; i++ {
		rk := fmt.Sprintf("small-%d", i)
		if held[rk] < 1 {
			t.Errorf("%s has no copy in %s", rk, names.Held)
		}
		extra += max(held[rk]-1, 0)
	}
	t.Logf("%s: %d small copies, %d of them second copies of a copy nacked by a close it did not cause", names.Held, small+extra, extra)
	if held["big-ad"] != 0 {
		t.Errorf("%s holds %d copies of big-ad, want none", names.Held, held["big-ad"])
	}
	if got := queueDepth(t, url, names.Dead); got != 1 {
		t.Errorf("%s holds %d, want the big original alone", names.Dead, got)
	}
}
