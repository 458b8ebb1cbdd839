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

	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// concurrentOutcomes publishes perCaller messages from each of callers
// goroutines through publish, every other one to a missing queue
// ("missing-<caller>"), the others to "copies", and returns what went
// wrong: a caller not told its own outcome, a body told nil but not in
// stored (the bodies the broker holds, asked once every call returned) or
// the other way round, a call that did not return within 20 s.
func concurrentOutcomes(t *testing.T, publish func(context.Context, string, amqp.Publishing) error,
	stored func() []string, callers, perCaller int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		mu       sync.Mutex
		problems []string
		routed   = map[string]bool{}
		wg       sync.WaitGroup
	)
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perCaller {
				body := fmt.Sprintf("g%d-%d", g, i)
				queue := "copies"
				if (g+i)%2 == 1 {
					queue = fmt.Sprintf("missing-%d", g)
				}
				err := publish(ctx, queue, amqp.Publishing{Body: []byte(body), Headers: amqp.Table{"k": body}})
				mu.Lock()
				switch {
				case queue == "copies" && err == nil:
					routed[body] = true
				case queue == "copies":
					problems = append(problems, fmt.Sprintf("%s to %s: %v, want nil", body, queue, err))
				case !errors.Is(err, ErrUnroutable):
					problems = append(problems, fmt.Sprintf("%s to %s: %v, want ErrUnroutable", body, queue, err))
				}
				mu.Unlock()
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(20 * time.Second):
		t.Fatalf("publishes did not all return within 20 s")
	}
	for _, body := range stored() {
		if !routed[body] {
			problems = append(problems, fmt.Sprintf("%s stored but its caller was not told nil", body))
		}
		delete(routed, body)
	}
	for body := range routed {
		problems = append(problems, fmt.Sprintf("%s told nil but not stored", body))
	}
	return problems
}

// TestConfirmPublisherOwnOutcomes: 64 callers on one publisher, half of
// their publishes to missing queues, the broker answering in batches with
// confirms out of order: each caller is told its own outcome, publishes
// were outstanding together, no return found the buffer full, and nothing
// is left pending. Negative control: the same callers taking turns (a
// mutex held across the wait, the publisher before pipelining) never have
// two publishes outstanding.
func TestConfirmPublisherOwnOutcomes(t *testing.T) {
	for _, serial := range []bool{false, true} {
		t.Run(fmt.Sprintf("serial=%v", serial), func(t *testing.T) {
			b := newFakeConfirmBroker(ConfirmWindow)
			p := b.publisher()
			stop := make(chan struct{})
			var stored sync.Map
			go b.run(stop, 7, 16, &stored)
			defer close(stop)
			publish := p.Publish
			if serial {
				var mu sync.Mutex
				publish = func(ctx context.Context, q string, m amqp.Publishing) error {
					mu.Lock()
					defer mu.Unlock()
					return p.Publish(ctx, q, m)
				}
			}
			for _, problem := range concurrentOutcomes(t, publish, storedBodies(&stored), 64, 10) {
				t.Error(problem)
			}
			maxOut := p.maxOutstanding.Load()
			if serial && maxOut != 1 {
				t.Errorf("taking turns: %d publishes outstanding at once, want 1", maxOut)
			}
			if !serial && maxOut < 2 {
				t.Errorf("pipelined: at most %d publish outstanding at once, want several", maxOut)
			}
			if n := b.fullReturns.Load(); n != 0 {
				t.Errorf("%d returns found the buffer full", n)
			}
			if n := p.pendingCount(); n != 0 || len(p.window) != 0 || p.outstanding.Load() != 0 {
				t.Errorf("after every call returned: %d pending, %d window places, %d outstanding; want 0",
					n, len(p.window), p.outstanding.Load())
			}
		})
	}
}

// naivePublish is the publisher before pipelining without its mutex: after
// its confirm a caller takes whatever return is buffered as its own.
func naivePublish(b *fakeConfirmBroker) func(context.Context, string, amqp.Publishing) error {
	return func(ctx context.Context, queue string, msg amqp.Publishing) error {
		c, err := b.publish(ctx, queue, msg)
		if err != nil {
			return err
		}
		<-c.Done()
		select {
		case <-b.returns:
			return ErrUnroutable
		default:
			return nil
		}
	}
}

// TestConfirmPublisherReturnGoesToItsOwner: U's publish is returned, then
// R's publish (routed) is confirmed before U's: R drains U's return and
// must leave it to U. The publisher tells R nil and U ErrUnroutable.
// Negative control: the old matching without the mutex (naivePublish)
// gives U's return to R, and the same checks catch it.
func TestConfirmPublisherReturnGoesToItsOwner(t *testing.T) {
	script := func(b *fakeConfirmBroker, publish func(context.Context, string, amqp.Publishing) error) (errU, errR error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		outU, outR := make(chan error, 1), make(chan error, 1)
		go func() { outU <- publish(ctx, "missing-u", amqp.Publishing{Body: []byte("u")}) }()
		go func() { outR <- publish(ctx, "copies", amqp.Publishing{Body: []byte("r")}) }()
		var u, r *fakePublish
		for u == nil || r == nil {
			fp := <-b.sent
			if fp.queue == "copies" {
				r = fp
			} else {
				u = fp
			}
		}
		b.ret(u)
		b.confirm(r, true)
		errR = <-outR
		b.confirm(u, true)
		return <-outU, errR
	}
	check := func(errU, errR error) []string {
		var out []string
		if errR != nil {
			out = append(out, fmt.Sprintf("routed publish: %v, want nil", errR))
		}
		if !errors.Is(errU, ErrUnroutable) {
			out = append(out, fmt.Sprintf("returned publish: %v, want ErrUnroutable", errU))
		}
		return out
	}
	b := newFakeConfirmBroker(ConfirmWindow)
	p := b.publisher()
	for _, problem := range check(script(b, p.Publish)) {
		t.Error(problem)
	}
	if n := p.pendingCount(); n != 0 {
		t.Errorf("%d publishes left pending", n)
	}
	nb := newFakeConfirmBroker(ConfirmWindow)
	if got := check(script(nb, naivePublish(nb))); len(got) != 2 {
		t.Errorf("negative control (a caller takes any buffered return): %d problems found %v, want both outcomes wrong", len(got), got)
	}
}

// TestConfirmPublisherAbandonedPublish: a caller gives up (ctx) while its
// publish is at the broker. It is told ctx's error at once; the publish
// keeps its window place until its confirm, its late return is dropped,
// not handed to the next caller, and nothing stays pending.
func TestConfirmPublisherAbandonedPublish(t *testing.T) {
	b := newFakeConfirmBroker(2)
	p := b.publisher()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan error, 1)
	go func() { out <- p.Publish(ctx, "missing-a", amqp.Publishing{Body: []byte("a")}) }()
	a := <-b.sent
	cancel()
	if err := <-out; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned publish: %v, want context.Canceled", err)
	}
	if n := len(p.window); n != 1 {
		t.Errorf("abandoned publish still at the broker holds %d window places, want 1", n)
	}
	b.ret(a)
	b.confirm(a, true)
	waitFor(t, "the abandoned publish settled", func() bool { return p.pendingCount() == 0 && len(p.window) == 0 })
	if n := len(b.returns); n != 0 {
		t.Errorf("%d returns left in the buffer after the abandoned publish settled, want 0", n)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	go func() { out <- p.Publish(ctx2, "copies", amqp.Publishing{Body: []byte("b")}) }()
	b.confirm(<-b.sent, true)
	if err := <-out; err != nil {
		t.Errorf("next publish after an abandoned returned one: %v, want nil", err)
	}
}

// TestConfirmPublisherWindowBoundsReturns: with a returns buffer of 4 and
// 32 callers publishing to missing queues, a broker that returns a whole
// batch before confirming any never finds the buffer full: at most 4
// publishes are at the broker. Negative control: a window larger than the
// buffer overflows it (the library would block its reader, then drop
// returns).
func TestConfirmPublisherWindowBoundsReturns(t *testing.T) {
	for _, window := range []int{4, 16} {
		t.Run(fmt.Sprintf("window=%d", window), func(t *testing.T) {
			b := newFakeConfirmBroker(4)
			p := b.publisher()
			p.window = make(chan struct{}, window)
			stop := make(chan struct{})
			var stored sync.Map
			go b.run(stop, 3, 16, &stored)
			defer close(stop)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for g := range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 10 {
						_ = p.Publish(ctx, fmt.Sprintf("missing-%d", g), amqp.Publishing{Body: []byte(fmt.Sprint(g, i))})
					}
				}()
			}
			wg.Wait()
			full, maxOut := b.fullReturns.Load(), p.maxOutstanding.Load()
			if window == 4 && (full != 0 || maxOut > 4) {
				t.Errorf("window 4: %d returns found the buffer full, %d outstanding at most; want 0 and at most 4", full, maxOut)
			}
			if window == 16 && full == 0 {
				t.Errorf("negative control, window 16 over a buffer of 4: no return found the buffer full (%d outstanding at most)", maxOut)
			}
		})
	}
}

// TestConfirmPublisherChannelClosed: the broker closes the channel (406).
// A publish alone at the broker is told ErrPublishNacked with the broker's
// *amqp.Error; two publishes side by side are both told ErrPublishNacked
// and ErrCloseNotAttributed, the 406 as text only (either may have caused
// it); a publish on the closed channel wraps the client's error and the
// 406; nothing stays pending.
func TestConfirmPublisherChannelClosed(t *testing.T) {
	tooLarge := &amqp.Error{Code: amqp.PreconditionFailed, Reason: "PRECONDITION_FAILED - message size 900 is larger than configured max size 512"}
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("outstanding=%d", n), func(t *testing.T) {
			b := newFakeConfirmBroker(8)
			p := b.publisher()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out := make(chan error, n)
			for i := range n {
				go func() { out <- p.Publish(ctx, "copies", amqp.Publishing{Body: []byte(fmt.Sprint(i))}) }()
			}
			var fps []*fakePublish
			for range n {
				fps = append(fps, <-b.sent)
			}
			b.closeChannel(tooLarge, fps...)
			for range n {
				err := <-out
				var ae *amqp.Error
				attributed := errors.As(err, &ae) && ae.Code == amqp.PreconditionFailed
				if !errors.Is(err, ErrPublishNacked) || attributed != (n == 1) ||
					errors.Is(err, ErrCloseNotAttributed) == (n == 1) || !strings.Contains(err.Error(), "PRECONDITION_FAILED") {
					t.Errorf("publish outstanding when the channel closed: %v; want ErrPublishNacked and the 406 %s",
						err, map[bool]string{true: "wrapped (alone)", false: "as text with ErrCloseNotAttributed"}[n == 1])
				}
			}
			err := p.Publish(ctx, "copies", amqp.Publishing{})
			if !errors.Is(err, amqp.ErrClosed) || !errors.Is(err, tooLarge) {
				t.Errorf("publish on the closed channel: %v, want amqp.ErrClosed and the 406", err)
			}
			if k := p.pendingCount(); k != 0 || len(p.window) != 0 {
				t.Errorf("%d pending, %d window places after the close, want 0", k, len(p.window))
			}
		})
	}
}

// TestConfirmPublisherPublishAlone: PublishAlone waits for the publish at
// the broker to settle and holds the whole window, so no publish is ever
// beside it, and a close while it is out is its own (the 406 wrapped).
func TestConfirmPublisherPublishAlone(t *testing.T) {
	b := newFakeConfirmBroker(4)
	p := b.publisher()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	outA, outB := make(chan error, 1), make(chan error, 1)
	go func() { outA <- p.Publish(ctx, "copies", amqp.Publishing{Body: []byte("a")}) }()
	a := <-b.sent
	go func() { outB <- p.PublishAlone(ctx, "copies", amqp.Publishing{Body: []byte("b")}) }()
	// B holds every place but A's and waits for it.
	waitFor(t, "PublishAlone holding the rest of the window", func() bool { return len(p.window) == cap(p.window) })
	if n := len(b.sent); n != 0 {
		t.Fatalf("PublishAlone sent beside A (%d on the wire), want it to wait until A is settled", n)
	}
	b.confirm(a, true)
	if err := <-outA; err != nil {
		t.Fatal(err)
	}
	bp := <-b.sent
	tooLarge := &amqp.Error{Code: amqp.PreconditionFailed, Reason: "PRECONDITION_FAILED - message size 900 is larger than configured max size 512"}
	b.closeChannel(tooLarge, bp)
	var ae *amqp.Error
	if err := <-outB; !errors.Is(err, ErrPublishNacked) || !errors.As(err, &ae) || ae.Code != amqp.PreconditionFailed {
		t.Errorf("PublishAlone over a close: %v, want ErrPublishNacked and the 406", err)
	}
	if m := p.maxOutstanding.Load(); m != 1 {
		t.Errorf("%d publishes outstanding at once, want 1", m)
	}
}

// TestConfirmPublisherHeaders: the published copy carries the caller's
// headers and HeaderPublish (int64, a new one per publish); the caller's
// map is not changed.
func TestConfirmPublisherHeaders(t *testing.T) {
	b := newFakeConfirmBroker(8)
	p := b.publisher()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := amqp.Table{queues.HeaderOutcome: "UNKNOWN", queues.HeaderPublish: int64(99)}
	ids := map[int64]bool{}
	for range 2 {
		out := make(chan error, 1)
		go func() { out <- p.Publish(ctx, "copies", amqp.Publishing{Headers: h}) }()
		fp := <-b.sent
		b.confirm(fp, true)
		if err := <-out; err != nil {
			t.Fatal(err)
		}
		id, ok := fp.msg.Headers[queues.HeaderPublish].(int64)
		if !ok || id == 99 || ids[id] || fp.msg.Headers[queues.HeaderOutcome] != "UNKNOWN" {
			t.Errorf("published headers %v: want the caller's outcome and a new int64 %s", fp.msg.Headers, queues.HeaderPublish)
		}
		ids[id] = true
	}
	if len(h) != 2 || h[queues.HeaderPublish] != int64(99) {
		t.Errorf("caller's headers changed to %v", h)
	}
}
