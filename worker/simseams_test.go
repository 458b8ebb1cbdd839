package worker

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
)

// callAcker records every call it gets, in order ("ack 3 multiple").
type callAcker struct {
	mu    sync.Mutex
	calls []string
}

func (a *callAcker) add(s string) {
	a.mu.Lock()
	a.calls = append(a.calls, s)
	a.mu.Unlock()
}

func (a *callAcker) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

func (a *callAcker) Ack(tag uint64, multiple bool) error {
	a.add(fmt.Sprintf("ack %d multiple=%t", tag, multiple))
	return nil
}

func (a *callAcker) Nack(tag uint64, multiple, requeue bool) error {
	a.add(fmt.Sprintf("nack %d", tag))
	return nil
}

func (a *callAcker) Reject(tag uint64, requeue bool) error { return a.Nack(tag, false, requeue) }

// fakeTimer is a timer the test fires by hand (ackBatcher.after).
type fakeTimer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (t *fakeTimer) Stop() bool {
	was := !t.stopped
	t.stopped = true
	return was
}

// TestAckBatcherFlushTimerSeam: with after set, the flush delay is the
// caller's timer: a lone ack waits for it (nothing sent), and firing it
// sends one multiple ack; a group that fills up first stops the timer.
func TestAckBatcherFlushTimerSeam(t *testing.T) {
	br := &callAcker{}
	b := newAckBatcher(br, 2, AckFlushDelay)
	var timers []*fakeTimer
	b.after = func(d time.Duration, f func()) stopper {
		ft := &fakeTimer{d: d, f: f}
		timers = append(timers, ft)
		return ft
	}
	acks := registerAll(t, b, 3)
	if err := acks[1].Ack(1, false); err != nil {
		t.Fatal(err)
	}
	if len(timers) != 1 || timers[0].d != AckFlushDelay || len(br.got()) != 0 {
		t.Fatalf("after one ack: timers %v, broker %v; want one timer of %s and nothing sent", timers, br.got(), AckFlushDelay)
	}
	timers[0].f()
	if got, want := br.got(), []string{"ack 1 multiple=true"}; !slices.Equal(got, want) {
		t.Fatalf("the timer fired: broker got %v; want %v", got, want)
	}
	// Tags 2 and 3: the first starts a timer, the second fills the
	// group (2): one multiple ack, and the timer is stopped.
	_ = acks[2].Ack(2, false)
	_ = acks[3].Ack(3, false)
	if len(timers) != 2 || !timers[1].stopped {
		t.Fatalf("timers %d (second stopped: %t); want a second timer, stopped by the full group", len(timers), len(timers) > 1 && timers[1].stopped)
	}
	if got, want := br.got(), []string{"ack 1 multiple=true", "ack 3 multiple=true"}; !slices.Equal(got, want) {
		t.Errorf("broker got %v; want %v", got, want)
	}
}

// TestServeSeamsRunHandlersInTheCallersOrder: at concurrency 3 with
// SimLoop's seams (idle, spawn, afterFunc) serve takes three deliveries
// and holds their handlers until the test runs them, in the order 3, 1,
// 2: the ack batcher acks nothing while 1 is unfinished, starts its flush
// timer on the caller's clock once 1 is done, and one multiple ack
// settles 1..3 once 2 is. idle tells every wait: inflight 0..3 in the
// main wait, and, once the session is lost with a handler held, draining.
func TestServeSeamsRunHandlersInTheCallersOrder(t *testing.T) {
	r := newRig(t, nil, inWindow)
	var recs, logs bytes.Buffer
	c := concurrentConsumer(t, r, r.send, 3, 0, &recs, &logs)
	type wait struct {
		inflight int
		draining bool
	}
	waits := make(chan wait, 100)
	held := make(chan func(), 10)
	var timers []*fakeTimer
	var tmu sync.Mutex
	c.idle = func(inflight int, draining bool) { waits <- wait{inflight, draining} }
	c.spawn = func(f func()) { held <- f }
	c.afterFunc = func(d time.Duration, f func()) stopper {
		tmu.Lock()
		defer tmu.Unlock()
		ft := &fakeTimer{d: d, f: f}
		timers = append(timers, ft)
		return ft
	}
	next := func(want wait) {
		t.Helper()
		select {
		case got := <-waits:
			if got != want {
				t.Fatalf("serve waits with %+v; want %+v", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("serve did not wait (%+v) within 5 s", want)
		}
	}
	gen := c.gens.start()
	br := &callAcker{}
	deliveries := make(chan amqp.Delivery)
	lost := make(chan struct{})
	res := serveAsync(context.Background(), c, gen, deliveries, lost)
	var fs []func()
	for i := 1; i <= 3; i++ {
		next(wait{i - 1, false})
		deliveries <- delivery(br, uint64(i), body(t, fmt.Sprintf("r-seam%d", i), message.Info), nil)
		fs = append(fs, <-held)
	}
	next(wait{3, false}) // every slot taken: it takes no delivery now
	go fs[2]()
	next(wait{2, false})
	go fs[0]()
	next(wait{1, false})
	if got := br.got(); len(got) != 0 {
		t.Fatalf("with 2 unfinished the broker got %v; want nothing", got)
	}
	tmu.Lock()
	n := len(timers)
	tmu.Unlock()
	if n != 1 {
		t.Fatalf("%d flush timers; want one, started when 1 was done", n)
	}
	go fs[1]()
	next(wait{0, false})
	if got, want := br.got(), []string{"ack 3 multiple=true"}; !slices.Equal(got, want) {
		t.Fatalf("broker got %v; want %v", got, want)
	}
	// A fourth delivery held when the session is lost: serve drains it.
	deliveries <- delivery(br, 4, body(t, "r-seam4", message.Info), nil)
	f4 := <-held
	next(wait{1, false})
	close(lost)
	next(wait{1, true})
	go f4()
	if got := waitServe(t, res); !got.lost || got.err != nil {
		t.Fatalf("serve: %+v; want lost", got)
	}
	if got, want := br.got(), []string{"ack 3 multiple=true", "ack 4 multiple=true"}; !slices.Equal(got, want) {
		t.Errorf("broker got %v; want %v (the last ack sent before serve returned)", got, want)
	}
}
