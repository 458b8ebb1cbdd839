package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// newTestConsumer returns a consumer writing records to recs and logs to
// logs, with the handler of r.
func newTestConsumer(r *rig, recs, logs *bytes.Buffer, maxMessages int) *consumer {
	return &consumer{
		cfg:     Config{MaxMessages: maxMessages, SummaryEvery: 2},
		log:     newTestLogger(logs),
		handler: r.h,
		records: records.NewWriter(recs),
		now:     time.Now,
	}
}

// serveAsync runs c.serve in a goroutine and returns its result channel.
type serveResult struct {
	lost bool
	err  error
}

func serveAsync(ctx context.Context, c *consumer, gen uint64, deliveries <-chan amqp.Delivery, lost <-chan struct{}) <-chan serveResult {
	out := make(chan serveResult, 1)
	go func() {
		l, err := c.serve(ctx, gen, c.handler, deliveries, lost)
		out <- serveResult{l, err}
	}()
	return out
}

func waitServe(t *testing.T, ch <-chan serveResult) serveResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not return within 5 s")
		return serveResult{}
	}
}

func readRecords(t *testing.T, b *bytes.Buffer) []records.Record {
	t.Helper()
	var out []records.Record
	sc := bufio.NewScanner(bytes.NewReader(b.Bytes()))
	for sc.Scan() {
		var r records.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("record line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// TestShutdownFinishesInFlight: SIGTERM (ctx cancelled) while a send is in
// flight: the send finishes, is recorded and acked; the next delivery,
// already prefetched, is neither handled nor acked (the broker requeues it
// when the channel closes).
func TestShutdownFinishesInFlight(t *testing.T) {
	r := newRig(t, nil, inWindow)
	r.send.started = make(chan struct{}, 1)
	r.send.release = make(chan struct{})
	var recs, logs bytes.Buffer
	c := newTestConsumer(r, &recs, &logs, 0)
	gen := c.gens.start()
	ack := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, 2)
	deliveries <- delivery(ack, 1, body(t, "r-inflight", message.Info), nil)
	deliveries <- delivery(ack, 2, body(t, "r-next", message.Info), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := serveAsync(ctx, c, gen, deliveries, make(chan struct{}))

	select {
	case <-r.send.started:
	case <-time.After(5 * time.Second):
		t.Fatal("send did not start")
	}
	cancel() // SIGTERM
	close(r.send.release)
	got := waitServe(t, res)
	if !errors.Is(got.err, errStop) || got.lost {
		t.Fatalf("serve returned lost=%v err=%v, want errStop", got.lost, got.err)
	}
	if r.send.ctxErr != nil {
		t.Errorf("the in-flight send saw a cancelled ctx: %v", r.send.ctxErr)
	}
	if len(ack.acks) != 1 || ack.acks[0] != 1 || len(ack.nacks) != 0 {
		t.Errorf("acks %v nacks %v, want only tag 1 acked", ack.acks, ack.nacks)
	}
	if r.send.calls() != 1 {
		t.Errorf("sends %d, want 1", r.send.calls())
	}
	rs := readRecords(t, &recs)
	if len(rs) != 1 || rs[0].RefKey != "r-inflight" || rs[0].Outcome != outcome.Sent || rs[0].Seq != 1 {
		t.Fatalf("records %+v, want one SENT record of r-inflight with seq 1", rs)
	}
	if len(deliveries) != 1 {
		t.Errorf("%d deliveries left unread, want the prefetched one", len(deliveries))
	}
}

// TestStaleGenerationAckRefused: a delivery of generation 1 is never acked
// once its channel was lost, not even after generation 2 is live.
func TestStaleGenerationAckRefused(t *testing.T) {
	var g generations
	inner1, inner2 := &fakeAcker{}, &fakeAcker{}
	g1 := g.start()
	a1 := genAcker{gen: g1, gens: &g, inner: inner1}
	if err := a1.Ack(5, false); err != nil {
		t.Fatalf("ack on the live generation: %v", err)
	}
	g.retire(g1)
	if err := a1.Ack(6, false); !errors.Is(err, ErrStaleDelivery) {
		t.Errorf("ack after loss: %v, want ErrStaleDelivery", err)
	}
	g2 := g.start()
	a2 := genAcker{gen: g2, gens: &g, inner: inner2}
	for name, f := range map[string]func() error{
		"ack":    func() error { return a1.Ack(7, false) },
		"nack":   func() error { return a1.Nack(7, false, true) },
		"reject": func() error { return a1.Reject(7, true) },
	} {
		if err := f(); !errors.Is(err, ErrStaleDelivery) {
			t.Errorf("%s of generation %d while %d is live: %v, want ErrStaleDelivery", name, g1, g2, err)
		}
	}
	if err := a2.Ack(1, false); err != nil {
		t.Errorf("ack on generation 2: %v", err)
	}
	if len(inner1.acks) != 1 || inner1.acks[0] != 5 || len(inner1.nacks) != 0 {
		t.Errorf("generation 1 channel saw acks %v nacks %v, want only tag 5", inner1.acks, inner1.nacks)
	}
	if len(inner2.acks) != 1 || inner2.acks[0] != 1 {
		t.Errorf("generation 2 channel saw acks %v, want only its own tag 1", inner2.acks)
	}
	// A retire of an old generation does not end the live one.
	g.retire(g1)
	if !g.isLive(g2) {
		t.Errorf("retiring generation 1 ended generation 2")
	}
}

// TestConnectionLostMidSend: the session is lost while a send is in
// flight; the outcome is still recorded, the ack is refused (stale
// generation) and noted, and serve reports the loss. The redelivery on the
// next generation is suppressed by the ledger.
func TestConnectionLostMidSend(t *testing.T) {
	r := newRig(t, nil, inWindow)
	var recs, logs bytes.Buffer
	c := newTestConsumer(r, &recs, &logs, 0)
	g1 := c.gens.start()
	lost := make(chan struct{})
	r.send.during = func() {
		c.gens.retire(g1)
		close(lost)
	}
	ack1 := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, 1)
	b := body(t, "r-lost", message.Info)
	deliveries <- delivery(ack1, 1, b, nil)
	got := waitServe(t, serveAsync(context.Background(), c, g1, deliveries, lost))
	if !got.lost || got.err != nil {
		t.Fatalf("serve: lost=%v err=%v, want lost", got.lost, got.err)
	}
	if len(ack1.acks) != 0 {
		t.Errorf("a stale channel was acked: %v", ack1.acks)
	}
	rs := readRecords(t, &recs)
	if len(rs) != 1 || rs[0].Outcome != outcome.Sent || !strings.Contains(rs[0].AckError, "lost channel") {
		t.Fatalf("records %+v, want one SENT record with a stale-ack error", rs)
	}

	// Generation 2: the broker redelivers the same message with tag 1.
	r.send.during = nil
	g2 := c.gens.start()
	ack2 := &fakeAcker{}
	d := delivery(ack2, 1, b, nil)
	d.Redelivered = true
	deliveries2 := make(chan amqp.Delivery, 1)
	deliveries2 <- d
	close(deliveries2)
	got = waitServe(t, serveAsync(context.Background(), c, g2, deliveries2, make(chan struct{})))
	if !got.lost {
		t.Fatalf("serve did not report the closed delivery channel")
	}
	if len(ack2.acks) != 1 {
		t.Errorf("redelivery acked %d times on generation 2, want 1", len(ack2.acks))
	}
	if r.send.calls() != 1 {
		t.Errorf("vendor saw %d sends, want 1", r.send.calls())
	}
	rs = readRecords(t, &recs)
	if len(rs) != 2 || rs[1].Outcome != outcome.Duplicate || rs[1].Seq != 2 {
		t.Errorf("second record %+v, want DUPLICATE seq 2", rs[len(rs)-1])
	}
}

// TestMaxMessagesAndRecords: serve stops after MaxMessages handled
// messages; records count from 1, carry CPU time, and requeued deliveries
// are neither recorded nor counted.
func TestMaxMessagesAndRecords(t *testing.T) {
	r := newRig(t, nil, inWindow)
	var recs, logs bytes.Buffer
	c := newTestConsumer(r, &recs, &logs, 2)
	gen := c.gens.start()
	failing := &failOnce{Publisher: r.pub}
	c.handler = r.h.WithPublisher(failing)
	ack := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, 4)
	deliveries <- delivery(ack, 1, []byte("garbage"), nil) // INVALID, publish fails -> requeued
	deliveries <- delivery(ack, 2, body(t, "r-m1", message.Info), nil)
	deliveries <- delivery(ack, 3, []byte("garbage"), nil) // INVALID -> dead
	deliveries <- delivery(ack, 4, body(t, "r-m3", message.Info), nil)
	got := waitServe(t, serveAsync(context.Background(), c, gen, deliveries, make(chan struct{})))
	if !errors.Is(got.err, errStop) {
		t.Fatalf("serve err %v, want errStop after 2 messages", got.err)
	}
	rs := readRecords(t, &recs)
	if len(rs) != 2 {
		t.Fatalf("%d records, want 2", len(rs))
	}
	for i, want := range []outcome.Outcome{outcome.Sent, outcome.Invalid} {
		if rs[i].Seq != i+1 || rs[i].Outcome != want {
			t.Errorf("record %d: seq %d outcome %q, want %d %q", i, rs[i].Seq, rs[i].Outcome, i+1, want)
		}
		if rs[i].CPUMS <= 0 {
			t.Errorf("record %d: cpu_ms %v, want > 0", i, rs[i].CPUMS)
		}
		if rs[i].End.Before(rs[i].Start) {
			t.Errorf("record %d ends before it starts", i)
		}
	}
	if rs[1].CPUMS < rs[0].CPUMS {
		t.Errorf("cpu_ms went down: %v then %v", rs[0].CPUMS, rs[1].CPUMS)
	}
	if len(ack.nacks) != 1 || ack.nacks[0] != 1 || len(ack.acks) != 2 {
		t.Errorf("acks %v nacks %v, want tag 1 nacked, tags 2 and 3 acked", ack.acks, ack.nacks)
	}
	if len(deliveries) != 1 {
		t.Errorf("%d deliveries unread, want 1", len(deliveries))
	}
	if !strings.Contains(logs.String(), `"msg":"summary"`) {
		t.Errorf("no summary line after SummaryEvery=2 messages: %s", logs.String())
	}
	if !strings.Contains(logs.String(), `"msg":"message requeued"`) {
		t.Errorf("no log line for the requeued delivery")
	}
}

// failOnce fails every attempt of its first copy (DefaultRepublishAttempts
// publishes) with an error that is not permanent, so that copy's original
// is requeued.
type failOnce struct {
	Publisher
	failed int
}

func (f *failOnce) Publish(ctx context.Context, queue string, p amqp.Publishing) error {
	if f.failed < DefaultRepublishAttempts {
		f.failed++
		return errors.New("publish not confirmed")
	}
	return f.Publisher.Publish(ctx, queue, p)
}

// TestRecordJSONKeys pins the Record contract keys the lab reads.
func TestRecordJSONKeys(t *testing.T) {
	var buf bytes.Buffer
	w := records.NewWriter(&buf)
	if err := w.Write(records.Record{Seq: 1, RefKey: "r", Outcome: outcome.Sent}); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(buf.Bytes(), []byte("\n")) || bytes.Count(buf.Bytes(), []byte("\n")) != 1 {
		t.Fatalf("not one JSON line: %q", buf.String())
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"seq", "refkey", "outcome", "queue", "redelivered", "start", "end",
		"total_ms", "connect_ms", "tls_handshake_ms", "ttfb_ms", "reused", "tls_version", "got_conns", "cpu_ms"} {
		if _, ok := m[k]; !ok {
			t.Errorf("record JSON lacks key %q", k)
		}
	}
}

// TestDebugLineMasksRecipient: the per-message debug line carries the
// masked recipient, never the clear one.
func TestDebugLineMasksRecipient(t *testing.T) {
	r := newRig(t, nil, inWindow)
	var recs, logs bytes.Buffer
	c := newTestConsumer(r, &recs, &logs, 1)
	gen := c.gens.start()
	deliveries := make(chan amqp.Delivery, 1)
	deliveries <- delivery(&fakeAcker{}, 1, body(t, "r-mask", message.Info), nil)
	waitServe(t, serveAsync(context.Background(), c, gen, deliveries, make(chan struct{})))
	out := logs.String()
	if !strings.Contains(out, `"msg":"handled"`) || !strings.Contains(out, message.Mask(testRecipient)) {
		t.Errorf("no debug line with the masked recipient: %s", out)
	}
	if strings.Contains(out, testRecipient) || strings.Contains(recs.String(), testRecipient) {
		t.Errorf("recipient in clear in logs or records")
	}
}

// TestRequeuePause: consecutive requeued deliveries (a target queue
// unavailable) are spaced by a doubling pause instead of a hot loop.
func TestRequeuePause(t *testing.T) {
	r := newRig(t, nil, inWindow)
	r.pub.err = errors.New("publish not confirmed")
	var recs, logs bytes.Buffer
	tc := newTestConsumer(r, &recs, &logs, 0)
	// newBackoff: the first pause is in [30ms, 90ms].
	tc.cfg.ReconnectMin, tc.cfg.ReconnectMax = 60*time.Millisecond, time.Second
	gen := tc.gens.start()
	ack := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, 2)
	deliveries <- delivery(ack, 1, []byte("garbage"), nil)
	deliveries <- delivery(ack, 2, []byte("garbage"), nil)
	ctx, cancel := context.WithCancel(context.Background())
	res := serveAsync(ctx, tc, gen, deliveries, make(chan struct{}))
	start := time.Now()
	for len(deliveries) > 0 && time.Since(start) < 5*time.Second {
		time.Sleep(time.Millisecond)
	}
	// The second delivery is read only after the first pause.
	if el := time.Since(start); el < 25*time.Millisecond {
		t.Errorf("second requeued delivery read after %v, want a pause of at least 30ms", el)
	}
	cancel()
	waitServe(t, res)
	if len(ack.nacks) < 1 || recs.Len() != 0 {
		t.Errorf("nacks %v records %q; want requeues and no records", ack.nacks, recs.String())
	}
}

// TestOpenRecordsContinuesSeq: a restarted worker appending to the same
// records file continues the numbering.
func TestOpenRecordsContinuesSeq(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	w, err := records.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if w.LastSeq() != 0 {
		t.Errorf("new file: last seq %d, want 0", w.LastSeq())
	}
	for i := 1; i <= 3; i++ {
		if err := w.Write(records.Record{Seq: i, Outcome: outcome.Sent}); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(`{"seq":4,"outc`) // torn line from a crash
	_ = f.Close()
	w, err = records.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.LastSeq() != 3 {
		t.Errorf("reopened: last seq %d, want 3", w.LastSeq())
	}
	if err := w.Write(records.Record{Seq: 4, Outcome: outcome.Sent}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var r records.Record
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil || r.Seq != 4 {
		t.Errorf("record after a torn line: %q (%v)", lines[len(lines)-1], err)
	}
}

// TestServePrefetchedOneAtATime: at concurrency 1 with deliveries already
// prefetched (PrefetchAhead), serve starts one send at a time, in the order
// of delivery, and takes the next delivery only once the previous message
// was acked.
func TestServePrefetchedOneAtATime(t *testing.T) {
	r := newRig(t, nil, inWindow)
	r.send.started = make(chan struct{}, 3)
	r.send.release = make(chan struct{})
	var recs, logs bytes.Buffer
	c := newTestConsumer(r, &recs, &logs, 3)
	gen := c.gens.start()
	ack := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, 3)
	for i, k := range []string{"r-1", "r-2", "r-3"} {
		deliveries <- delivery(ack, uint64(i+1), body(t, k, message.Info), nil)
	}
	res := serveAsync(context.Background(), c, gen, deliveries, make(chan struct{}))
	for i := 1; i <= 3; i++ {
		select {
		case <-r.send.started:
		case <-time.After(5 * time.Second):
			t.Fatalf("send %d did not start", i)
		}
		select {
		case <-r.send.started:
			t.Fatalf("a second send started while send %d is in flight", i)
		case <-time.After(100 * time.Millisecond):
		}
		if acks, _ := ack.counts(); acks != i-1 {
			t.Fatalf("send %d started with %d acks, want %d", i, acks, i-1)
		}
		r.send.release <- struct{}{}
	}
	if got := waitServe(t, res); !errors.Is(got.err, errStop) {
		t.Fatalf("serve: %v, want errStop after 3 messages", got.err)
	}
	for i, s := range r.send.sent {
		if want := []string{"r-1", "r-2", "r-3"}[i]; s.RefKey != want {
			t.Errorf("send %d was %s, want %s (queue order)", i+1, s.RefKey, want)
		}
	}
}
