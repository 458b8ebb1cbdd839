package worker

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// rangeBroker is a channel as RabbitMQ keeps it, with the handlers'
// side known: finished marks a delivery whose handler is done (Finish
// durable, copy confirmed) and acks it. A multiple ack settles every
// unsettled tag up to its own; one covering a delivery not finished is a
// violation (the broker would forget a message whose outcome is not yet
// recorded). live false refuses everything, as a lost generation does.
type rangeBroker struct {
	mu         sync.Mutex
	finished   map[uint64]bool
	settled    map[uint64]int // times each tag was settled
	violations []string
	frames     int
	dead       bool
}

func newRangeBroker() *rangeBroker {
	return &rangeBroker{finished: map[uint64]bool{}, settled: map[uint64]int{}}
}

func (r *rangeBroker) finish(tag uint64) {
	r.mu.Lock()
	r.finished[tag] = true
	r.mu.Unlock()
}

func (r *rangeBroker) Ack(tag uint64, multiple bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frames++
	// RabbitMQ's channel (rabbit_channel collect_acks) fails an ack,
	// multiple or not, whose own tag is not outstanding: "unknown
	// delivery tag", a channel error.
	if r.settled[tag] > 0 {
		r.violations = append(r.violations, fmt.Sprintf("ack names tag %d, already settled (unknown delivery tag)", tag))
		return nil
	}
	from := tag
	if multiple {
		from = 1
	}
	for t := from; t <= tag; t++ {
		if r.settled[t] > 0 {
			continue
		}
		if !r.finished[t] {
			r.violations = append(r.violations, fmt.Sprintf("ack up to %d covers tag %d, not finished", tag, t))
		}
		r.settled[t]++
	}
	return nil
}

func (r *rangeBroker) Nack(tag uint64, multiple, requeue bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settled[tag]++
	return nil
}

func (r *rangeBroker) Reject(tag uint64, requeue bool) error { return r.Nack(tag, false, requeue) }

func (r *rangeBroker) Live() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.dead
}

// check reports the violations, and any tag of 1..n not settled exactly
// once.
func (r *rangeBroker) check(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.violations...)
	for t := uint64(1); t <= uint64(n); t++ {
		if r.settled[t] != 1 {
			out = append(out, fmt.Sprintf("tag %d settled %d times", t, r.settled[t]))
		}
	}
	return out
}

// registerAll registers tags 1..n and returns their Acknowledgers.
func registerAll(t *testing.T, b *ackBatcher, n int) []batchedAck {
	t.Helper()
	out := make([]batchedAck, n+1)
	for tag := uint64(1); tag <= uint64(n); tag++ {
		a, ok := b.register(tag)
		if !ok {
			t.Fatalf("register %d refused", tag)
		}
		out[tag] = a.(batchedAck)
	}
	return out
}

// TestAckBatcherWaitsForTheLowestTag: deliveries 2 and 3 finish before 1:
// nothing is acked until 1 is; then one multiple ack settles 1..3. 5
// finished without 4 stays unacked through a Flush.
func TestAckBatcherWaitsForTheLowestTag(t *testing.T) {
	br := newRangeBroker()
	b := newAckBatcher(br, 3, 0)
	acks := registerAll(t, b, 5)
	for _, tag := range []uint64{2, 3} {
		br.finish(tag)
		if err := acks[tag].Ack(tag, false); err != nil {
			t.Fatal(err)
		}
	}
	if br.frames != 0 {
		t.Fatalf("%d ack frames before delivery 1 finished; want 0", br.frames)
	}
	br.finish(1)
	_ = acks[1].Ack(1, false)
	if br.frames != 1 || br.settled[3] != 1 {
		t.Fatalf("after 1..3 finished: %d frames, tag 3 settled %d; want one multiple ack up to 3", br.frames, br.settled[3])
	}
	br.finish(5)
	_ = acks[5].Ack(5, false)
	b.Flush()
	if br.settled[5] != 0 || br.frames != 1 {
		t.Errorf("5 acked with 4 unfinished (frames %d)", br.frames)
	}
	br.finish(4)
	_ = acks[4].Ack(4, false)
	b.Flush()
	if p := br.check(5); len(p) > 0 {
		t.Errorf("problems: %v", p)
	}
	if err := acks[4].Ack(4, false); err == nil {
		t.Error("a second ack of tag 4 was accepted")
	}
	if err := acks[1].Ack(1, true); err == nil {
		t.Error("a handler's multiple ack was accepted")
	}
}

// TestAckBatcherNackGoesAlone: a nack is sent at once, alone, and the
// multiple ack after it passes over it (not outstanding any more).
func TestAckBatcherNackGoesAlone(t *testing.T) {
	br := newRangeBroker()
	b := newAckBatcher(br, 10, 0)
	acks := registerAll(t, b, 3)
	br.finish(1)
	_ = acks[1].Ack(1, false)
	if err := acks[2].Nack(2, false, true); err != nil {
		t.Fatal(err)
	}
	if br.settled[2] != 1 || br.settled[1] != 0 {
		t.Fatalf("after the nack of 2: settled %v; want 2 alone", br.settled)
	}
	br.finish(3)
	_ = acks[3].Ack(3, false)
	b.Flush()
	if p := br.check(3); len(p) > 0 {
		t.Errorf("problems: %v", p)
	}
	if br.frames != 1 {
		t.Errorf("%d ack frames; want 1 (1 and 3 together)", br.frames)
	}
}

// TestAckBatcherNackLastOfARun: a run of settled tags that ends with a
// nack (1 acked, 2 nacked alone) is flushed with a multiple ack up to 1,
// not 2: 2 is no longer outstanding, and RabbitMQ closes the channel on
// a multiple ack naming it. Before the fix the batcher sent Ack(2,
// multiple), and this test printed "ack names tag 2, already settled
// (unknown delivery tag)".
func TestAckBatcherNackLastOfARun(t *testing.T) {
	for _, reject := range []bool{false, true} {
		br := newRangeBroker()
		b := newAckBatcher(br, 10, 0)
		acks := registerAll(t, b, 4)
		br.finish(1)
		_ = acks[1].Ack(1, false)
		var err error
		if reject {
			err = acks[2].Reject(2, false)
		} else {
			err = acks[2].Nack(2, false, true)
		}
		if err != nil {
			t.Fatal(err)
		}
		b.Flush()
		// And a run that goes on after the nack: 3 acked, 4 nacked.
		br.finish(3)
		_ = acks[3].Ack(3, false)
		_ = acks[4].Nack(4, false, false)
		b.Flush()
		if p := br.check(4); len(p) > 0 {
			t.Errorf("reject %v: problems: %v", reject, p)
		}
		if br.frames != 2 {
			t.Errorf("reject %v: %d ack frames; want 2 (up to 1, then up to 3)", reject, br.frames)
		}
	}
}

// TestAckBatcherStaleGeneration: an ack of a lost generation's delivery
// is refused at once with ErrStaleDelivery (the Record says so).
func TestAckBatcherStaleGeneration(t *testing.T) {
	br := newRangeBroker()
	b := newAckBatcher(br, 2, 0)
	acks := registerAll(t, b, 1)
	br.dead = true
	if err := acks[1].Ack(1, false); !errors.Is(err, ErrStaleDelivery) {
		t.Errorf("ack on a lost generation = %v; want ErrStaleDelivery", err)
	}
}

// TestAckBatcherDelayFlushes: a lone ack goes out once the delay passed.
func TestAckBatcherDelayFlushes(t *testing.T) {
	br := newRangeBroker()
	b := newAckBatcher(br, 100, time.Millisecond)
	acks := registerAll(t, b, 1)
	br.finish(1)
	_ = acks[1].Ack(1, false)
	for deadline := time.Now().Add(10 * time.Second); len(br.check(1)) > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the lone ack was not sent: %v", br.check(1))
		}
	}
}

// naiveBatcher is the negative control's planted batcher: it acks up to
// the highest finished tag at once, whatever is below it.
type naiveBatcher struct {
	mu   sync.Mutex
	br   *rangeBroker
	high uint64
}

func (n *naiveBatcher) settle(tag uint64, nack bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if nack {
		_ = n.br.Nack(tag, false, true)
		return
	}
	n.high = max(n.high, tag)
	_ = n.br.Ack(n.high, true)
}

// randomRun finishes n deliveries in a random order (seeded; every tenth
// nacked) on 8 goroutines, settling each through settle, calling flush
// now and then and at the end; it returns the broker's problems and its
// ack frames.
func randomRun(seed uint64, n int, br *rangeBroker, settle func(tag uint64, nack bool), flush func()) ([]string, int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	work := make(chan uint64)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for tag := range work {
				br.finish(tag)
				settle(tag, tag%10 == 3)
			}
		})
	}
	for i, k := range rng.Perm(n) {
		work <- uint64(k + 1)
		if i%17 == 0 {
			flush()
		}
	}
	close(work)
	wg.Wait()
	flush()
	return br.check(n), br.frames
}

// TestAckBatcherRandomOrder: 500 deliveries finishing in random orders
// (10 seeds) never have a multiple ack cover an unfinished one, each is
// settled exactly once, in fewer ack frames than deliveries. The negative
// control: the same check catches the naive batcher (ack up to the
// highest finished tag) in at least one seed.
func TestAckBatcherRandomOrder(t *testing.T) {
	const n = 500
	for seed := range uint64(10) {
		br := newRangeBroker()
		b := newAckBatcher(br, 4, 0)
		acks := registerAll(t, b, n)
		probs, frames := randomRun(seed, n, br, func(tag uint64, nack bool) {
			var err error
			if nack {
				err = acks[tag].Nack(tag, false, true)
			} else {
				err = acks[tag].Ack(tag, false)
			}
			if err != nil {
				t.Errorf("settle %d: %v", tag, err)
			}
		}, b.Flush)
		if len(probs) > 0 {
			t.Errorf("seed %d: %d problems, first %q", seed, len(probs), probs[0])
		}
		if frames >= n {
			t.Errorf("seed %d: %d ack frames for %d deliveries; want fewer (grouped)", seed, frames, n)
		}
	}
	caught := 0
	for seed := range uint64(10) {
		br := newRangeBroker()
		nb := &naiveBatcher{br: br}
		if probs, _ := randomRun(seed, n, br, nb.settle, func() {}); len(probs) > 0 {
			caught++
		}
	}
	if caught == 0 {
		t.Error("the check passed the naive batcher (ack up to the highest finished tag) in 10 seeds: it cannot see an ack of an unfinished delivery")
	}
}
