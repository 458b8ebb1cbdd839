//go:build integration

package worker

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/testcontainers/testcontainers-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// withChannel runs f on a fresh channel of a fresh connection to url.
func withChannel(t *testing.T, url string, f func(ch *amqp.Channel) error) {
	t.Helper()
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatalf("dial broker: %v", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := f(ch); err != nil {
		t.Fatal(err)
	}
}

// publishBodies declares the topology of queue and publishes bodies to it
// with confirms.
func publishBodies(t *testing.T, url, queue string, bodies ...[]byte) {
	t.Helper()
	withChannel(t, url, func(ch *amqp.Channel) error {
		if err := queues.DefaultTopology(queue).Declare(ch); err != nil {
			return err
		}
		pub, err := NewConfirmPublisher(ch)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for i, b := range bodies {
			if err := pub.Publish(ctx, queue, amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: b}); err != nil {
				return fmt.Errorf("publish %d: %w", i, err)
			}
		}
		return nil
	})
}

func encode(t *testing.T, n message.Notification) []byte {
	t.Helper()
	b, err := n.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func recordsByRefKey(recs []records.Record) map[string][]records.Record {
	out := map[string][]records.Record{}
	for _, r := range recs {
		out[r.RefKey] = append(out[r.RefKey], r)
	}
	return out
}

// TestIntegrationUnknownQueueDeleted: notifications.unknown is deleted
// while the worker runs, just before a send ends UNKNOWN. The copy is
// returned unroutable; the worker declares the topology again (the queue is
// back) and the second copy lands. Today's code nacked and requeued that
// message forever (each redelivery UNKNOWN again, unroutable again), so the
// run never handled its three messages.
func TestIntegrationUnknownQueueDeleted(t *testing.T) {
	url, _ := startRabbit(t)
	queue := "it-deleted"
	names := queues.NamesFor(queue)
	v := newFakeVendor(t)
	v.hold = func(refkey string) {
		if refkey != "d-1" {
			return
		}
		withChannel(t, url, func(ch *amqp.Channel) error {
			_, err := ch.QueueDelete(names.Unknown, false, false, false)
			return err
		})
		panic(http.ErrAbortHandler) // the request was read, no answer: UNKNOWN
	}
	publishN(t, url, queue, "d", 3)
	cfg := integrationConfig(t, url, v, "pooled", 3)
	cfg.Queue = queue
	waitRun(t, runAsync(context.Background(), cfg), 45*time.Second)

	by := recordsByRefKey(readRecordFile(t, cfg.RecordsPath))
	if d1 := by["d-1"]; len(d1) != 1 || d1[0].Outcome != outcome.Unknown || d1[0].Queue != names.Unknown {
		t.Errorf("d-1 records %+v, want one UNKNOWN in %s", d1, names.Unknown)
	}
	for _, rk := range []string{"d-2", "d-3"} {
		if r := by[rk]; len(r) != 1 || r[0].Outcome != outcome.Sent {
			t.Errorf("%s records %+v, want one SENT", rk, r)
		}
	}
	if got := queueDepth(t, url, names.Unknown); got != 1 {
		t.Errorf("%s holds %d, want the one UNKNOWN copy", names.Unknown, got)
	}
	if got := queueDepth(t, url, queue); got != 0 {
		t.Errorf("main queue holds %d, want 0", got)
	}
	if n := v.counts()["d-1"]; n != 1 {
		t.Errorf("d-1 reached the vendor %d times, want 1", n)
	}
}

// TestIntegrationDrainRepairsDeletedQueue: the failed queue is deleted
// while a settled REJECTED copy waits in the unknown queue. RabbitMQ
// returns the drain's mandatory copy unroutable before it confirms it;
// the drain's publisher declares the topology again and the second copy
// lands: the message leaves the unknown queue for the failed one. Before
// the fix (found by the simulator) every drain pass stopped at that
// message, for as long as nothing declared the queue again.
func TestIntegrationDrainRepairsDeletedQueue(t *testing.T) {
	url, _ := startRabbit(t)
	queue := "it-drain-deleted"
	names := queues.NamesFor(queue)
	ctx := context.Background()
	store, err := ledger.Open(t.TempDir() + "/ledger.db")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	t0 := time.Now().Add(-time.Hour)
	_, e, _ := store.Begin(ctx, "r-1", "", t0)
	if err := store.Finish(ctx, "r-1", "", e.Attempts, outcome.Unknown, "timeout", t0); err != nil {
		t.Fatal(err)
	}
	res := ledger.Resolution{By: "report", Why: "FAILED", At: t0.Add(time.Minute), Source: ledger.SourceReport, Code: "RF"}
	if err := store.Resolve(ctx, "r-1", outcome.Rejected, res, time.Minute); err != nil {
		t.Fatal(err)
	}
	publishBodies(t, url, queue) // declares the topology
	body := encode(t, message.Notification{RefKey: "r-1", Category: message.Info, Recipient: "+821000005678",
		TemplateCode: "T1", Text: "hi", CreatedAt: t0})
	withChannel(t, url, func(ch *amqp.Channel) error {
		pub, err := NewConfirmPublisher(ch)
		if err != nil {
			return err
		}
		if err := pub.Publish(ctx, names.Unknown, amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: body}); err != nil {
			return err
		}
		_, err = ch.QueueDelete(names.Failed, false, false, false)
		return err
	})
	cfg := Config{AMQPURL: url, Queue: queue, DialTimeout: 10 * time.Second}.WithDefaults()
	u := &unknownDrain{cfg: cfg, store: store}
	st, err := u.drainOnce(ctx)
	if err != nil || st.Failed != 1 {
		t.Fatalf("drain: %+v, %v; want the copy moved to %s", st, err, names.Failed)
	}
	if got := queueDepth(t, url, names.Failed); got != 1 {
		t.Errorf("%s holds %d, want the REJECTED copy", names.Failed, got)
	}
	if got := queueDepth(t, url, names.Unknown); got != 0 {
		t.Errorf("%s holds %d, want 0", names.Unknown, got)
	}
}

// TestIntegrationCopyTooLarge: the broker's max_message_size is lowered
// below an ad's body after it was queued; outside the send window its copy
// to the held queue is refused (406, the publish channel closed). The
// worker repairs its publish channel, tries a bounded number of times, then
// rejects the original: the broker dead-letters it to the dead queue. It was
// never attempted, and nothing says otherwise: no ledger entry, no outcome
// header, no send. The next message is handled as usual. Today's code lost
// its session on the closed publish channel, reconnected and took the same
// message again, forever.
func TestIntegrationCopyTooLarge(t *testing.T) {
	url, c := startRabbit(t)
	queue := "it-large"
	names := queues.NamesFor(queue)
	v := newFakeVendor(t)
	big := encode(t, message.Notification{RefKey: "big-ad", Category: message.Ad, Recipient: "+821000005678",
		TemplateCode: "PROMO_01", Text: strings.Repeat("sale ", 190), CreatedAt: time.Now()})
	small := encode(t, message.Notification{RefKey: "small-info", Category: message.Info, Recipient: "+821000005678",
		TemplateCode: "SHIP_01", Text: "shipped", CreatedAt: time.Now()})
	const limit = 512
	if len(big) <= limit || len(small) >= limit {
		t.Fatalf("body sizes %d and %d do not straddle the limit %d", len(big), len(small), limit)
	}
	publishBodies(t, url, queue, big, small)
	setMaxMessageSize(t, c, limit)

	cfg := integrationConfig(t, url, v, "pooled", 2)
	cfg.Queue = queue
	cfg.ClockStart = time.Date(2026, 11, 30, 21, 0, 0, 0, seoul) // the window is closed
	waitRun(t, runAsync(context.Background(), cfg), 45*time.Second)

	by := recordsByRefKey(readRecordFile(t, cfg.RecordsPath))
	if r := by["big-ad"]; len(r) != 1 || r[0].Outcome != outcome.OutsideSendWindow || r[0].Queue != names.Dead ||
		r[0].Code != CodeRepublishFailed || !strings.Contains(r[0].PublishError, "406") {
		t.Errorf("big-ad records %+v, want one OUTSIDE_SEND_WINDOW given up to %s with a 406", r, names.Dead)
	}
	if r := by["small-info"]; len(r) != 1 || r[0].Outcome != outcome.Sent {
		t.Errorf("small-info records %+v, want one SENT", r)
	}
	if n := v.counts()["big-ad"]; n != 0 {
		t.Errorf("big-ad reached the vendor %d times, want 0", n)
	}
	// The original is in the dead queue, dead-lettered by the broker
	// ("rejected"), with no outcome header of the worker's.
	withChannel(t, url, func(ch *amqp.Channel) error {
		d, ok, err := ch.Get(names.Dead, false)
		if err != nil || !ok {
			return fmt.Errorf("get from %s: ok %v err %v, want the original", names.Dead, ok, err)
		}
		if string(d.Body) != string(big) {
			t.Errorf("dead-lettered body differs from the original")
		}
		if _, set := d.Headers[queues.HeaderOutcome]; set {
			t.Errorf("outcome header %v on a message never attempted", d.Headers[queues.HeaderOutcome])
		}
		deaths, _ := d.Headers["x-death"].([]any)
		if len(deaths) == 0 {
			t.Errorf("no x-death header: %v", d.Headers)
		} else if death, _ := deaths[0].(amqp.Table); death["reason"] != "rejected" || death["queue"] != queue {
			t.Errorf("x-death %v, want reason rejected from %s", death, queue)
		}
		return nil
	})
	led, err := ledger.Open(cfg.LedgerPath)
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	if e, ok, err := led.Get(context.Background(), "big-ad"); err != nil || ok {
		t.Errorf("ledger entry %+v (err %v) for an ad never attempted, want none", e, err)
	}
}

// setMaxMessageSize sets the broker's max_message_size (bytes) at run time;
// channels opened afterwards enforce it.
func setMaxMessageSize(t *testing.T, c testcontainers.Container, n int) {
	t.Helper()
	// rabbitmqctl boots an Erlang VM: slow on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, _, err := c.Exec(ctx, []string{"rabbitmqctl", "eval", fmt.Sprintf("application:set_env(rabbit, max_message_size, %d).", n)})
	if err != nil || code != 0 {
		t.Fatalf("rabbitmqctl eval set max_message_size: code %d err %v", code, err)
	}
}
