package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// getter reads one message of a queue with manual ack (amqp.Channel.Get).
type getter interface {
	Get(queue string, autoAck bool) (amqp.Delivery, bool, error)
}

// drainStats counts what one drain of the unknown queue did.
type drainStats struct {
	Acked  int // SENT: acked away
	Failed int // REJECTED: moved to the failed queue
	Resent int // NOT_SENT: moved to the main queue, to be sent
	Kept   int // still UNKNOWN or ATTEMPTING (or undecodable, or no entry): put back at the tail
}

// drainUnknown looks at up to limit messages of names.Unknown (the number
// it held when the drain began, so a copy put back is not read twice) and
// moves each by its refkey's ledger state, settled by a delivery report,
// the horizon or an operator (docs/outcomes.md#delivery-reports):
//
//	SENT      -> acked away
//	REJECTED  -> copy to names.Failed (outcome REJECTED, the ledger's detail as the vendor code), then ack
//	NOT_SENT  -> copy to names.Main (outcome headers removed, attempt kept), then ack
//	otherwise -> copy to names.Unknown (the tail), then ack
//
// Every copy is confirmed before the original is acked, so nothing is lost
// (a crash in between leaves two copies, which the ledger decides alike).
// A copy is published as the Handler publishes one (publishCopy): at most
// DefaultRepublishAttempts times, the publisher repairing its path in
// between when it is a Repairer (a queue deleted while the worker runs is
// declared again). Errors: a get, a ledger read or a publish failed; the
// message at hand is then nacked with requeue and the drain stops.
func drainUnknown(ctx context.Context, q getter, pub Publisher, store ledger.Store, names queues.Names, limit int) (drainStats, error) {
	var st drainStats
	for range limit {
		d, ok, err := q.Get(names.Unknown, false)
		if err != nil {
			return st, fmt.Errorf("get from %s: %w", names.Unknown, err)
		}
		if !ok {
			return st, nil
		}
		to, p, counter := names.Unknown, copyOf(d), &st.Kept
		if n, err := message.Decode(d.Body); err == nil {
			e, found, err := store.Get(ctx, n.RefKey)
			if err != nil {
				_ = d.Nack(false, true)
				return st, fmt.Errorf("drain %s: %w", names.Unknown, err)
			}
			switch {
			case !found:
			case e.State == outcome.Sent:
				to, counter = "", &st.Acked
			case e.State == outcome.Rejected:
				to, counter = names.Failed, &st.Failed
				p.Headers[queues.HeaderOutcome] = string(outcome.Rejected)
				p.Headers[queues.HeaderReason] = "SETTLED_" + settledBy(e)
				if e.Detail != "" {
					p.Headers[queues.HeaderCode] = e.Detail
				}
			case e.State == outcome.NotSent:
				to, counter = names.Main, &st.Resent
				for _, h := range []string{queues.HeaderOutcome, queues.HeaderReason, queues.HeaderError, queues.HeaderCode} {
					delete(p.Headers, h)
				}
			}
		}
		if to != "" {
			if err := publishCopy(ctx, pub, to, p); err != nil {
				_ = d.Nack(false, true)
				return st, fmt.Errorf("drain %s: copy to %s: %w", names.Unknown, to, err)
			}
		}
		if err := d.Ack(false); err != nil {
			return st, fmt.Errorf("drain %s: ack: %w", names.Unknown, err)
		}
		*counter++
	}
	return st, nil
}

// publishCopy publishes p to queue up to DefaultRepublishAttempts times,
// repairing pub's path between two attempts (Repairer: the topology
// declared again, so a queue deleted while the worker runs is created
// again); a publisher that cannot repair is tried once. It returns the
// last publish error, or the repair's.
func publishCopy(ctx context.Context, pub Publisher, queue string, p amqp.Publishing) error {
	rp, repairs := pub.(Repairer)
	alone := false
	for i := 1; ; i++ {
		err := publishOnce(ctx, pub, queue, p, alone)
		if err == nil || !repairs || i >= DefaultRepublishAttempts || ctx.Err() != nil {
			return err
		}
		alone = alone || errors.Is(err, ErrCloseNotAttributed)
		if rerr := rp.Repair(ctx); rerr != nil {
			return fmt.Errorf("after publish error %v: %w", err, rerr)
		}
	}
}

// settledBy names the source of e's settlement in upper case ("REPORT").
func settledBy(e ledger.Entry) string {
	if e.Resolution == nil {
		return "OUTCOME"
	}
	s := e.Resolution.SourceOf()
	out := make([]byte, len(s))
	for i := range len(s) {
		out[i] = s[i] &^ 0x20
	}
	return string(out)
}

// copyOf copies d into a persistent Publishing with its own header table.
func copyOf(d amqp.Delivery) amqp.Publishing {
	h := make(amqp.Table, len(d.Headers)+3)
	for k, v := range d.Headers {
		h[k] = v
	}
	return amqp.Publishing{Headers: h, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding,
		DeliveryMode: amqp.Persistent, Priority: d.Priority, CorrelationId: d.CorrelationId,
		MessageId: d.MessageId, Timestamp: d.Timestamp, Type: d.Type, AppId: d.AppId, Body: append([]byte(nil), d.Body...)}
}

// unknownDrain is the reports.Copies of the worker: Settled marks the
// unknown queue as worth a drain, and Drain (called after each report
// sweep) drains it on a connection of its own when marked.
type unknownDrain struct {
	cfg   Config
	store ledger.Store
	log   *slog.Logger
	dirty atomic.Bool
	// node is the position in Config.AMQPURL of the broker node that
	// answered the last dial: the next drain dials it first.
	node atomic.Int64
	// dial opens a broker connection; nil = amqp.DialConfig (tests
	// replace it).
	dial func(url string, c amqp.Config) (*amqp.Connection, error)
}

// Settled marks the queue for the next Drain.
func (u *unknownDrain) Settled(context.Context, string, outcome.Outcome) error {
	u.dirty.Store(true)
	return nil
}

// Drain drains the unknown queue when a settlement happened since the last
// drain (or none ran yet: copies of settlements made before a restart).
func (u *unknownDrain) Drain(ctx context.Context) {
	if !u.dirty.Swap(false) {
		return
	}
	st, err := u.drainOnce(ctx)
	if err != nil {
		u.dirty.Store(true)
		u.log.Warn("unknown queue drain stopped; the next sweep tries again", "error", err.Error())
	}
	if st != (drainStats{}) {
		u.log.Info("unknown queue drained", "acked", st.Acked, "failed", st.Failed, "resent", st.Resent, "kept", st.Kept)
	}
}

// drainOnce drains the unknown queue once on a connection of its own
// (dialBroker), publishing its copies through a sessionPublisher (a
// confirm channel whose Repair declares the topology again).
func (u *unknownDrain) drainOnce(ctx context.Context) (drainStats, error) {
	conn, err := u.dialBroker(ctx)
	if err != nil {
		return drainStats{}, err
	}
	defer func() { _ = conn.CloseDeadline(time.Now().Add(2 * time.Second)) }()
	ch, err := conn.Channel()
	if err != nil {
		return drainStats{}, fmt.Errorf("open channel: %w", err)
	}
	names := u.cfg.Topology().Names
	q, err := ch.QueueDeclarePassive(names.Unknown, true, false, false, false, nil)
	if err != nil {
		return drainStats{}, fmt.Errorf("inspect %s: %w", names.Unknown, err)
	}
	pub, err := newSessionPublisher(conn, u.cfg.Topology())
	if err != nil {
		return drainStats{}, err
	}
	return drainUnknown(ctx, ch, pub, u.store, names, q.Messages)
}

// dialBroker dials the broker nodes of Config.AMQPURL in turn, wrapping
// around, from the one that answered last (the first at start) until one
// answers, each dial bounded by Config.DialTimeout; no further node is
// dialled once ctx is done. Errors: a *brokerDialError when no node
// answered.
func (u *unknownDrain) dialBroker(ctx context.Context) (*amqp.Connection, error) {
	urls := AMQPURLs(u.cfg.AMQPURL)
	if len(urls) == 0 {
		return nil, fmt.Errorf("dial broker: no amqp url")
	}
	dial := u.dial
	if dial == nil {
		dial = amqp.DialConfig
	}
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("notifier-worker-reports")
	cfg := amqp.Config{Heartbeat: u.cfg.Heartbeat, Locale: "en_US",
		Dial: amqp.DefaultDial(u.cfg.DialTimeout), Properties: props}
	start := int(u.node.Load()) % len(urls)
	fail := &brokerDialError{}
	for i := range urls {
		if err := ctx.Err(); err != nil {
			fail.urls, fail.errs = append(fail.urls, "(stopped)"), append(fail.errs, err)
			break
		}
		k := (start + i) % len(urls)
		conn, err := dial(urls[k], cfg)
		if err == nil {
			u.node.Store(int64(k))
			return conn, nil
		}
		fail.urls, fail.errs = append(fail.urls, RedactURL(urls[k])), append(fail.errs, err)
	}
	return nil, fail
}

// brokerDialError is dialBroker's error: every broker URL it dialled
// (password redacted) with its dial error, in the order tried. It wraps
// each of them (errors.Is and As look into all).
type brokerDialError struct {
	urls []string
	errs []error
}

// Error reads "dial broker, no node answered: URL1: err1; URL2: err2".
func (e *brokerDialError) Error() string {
	var b strings.Builder
	b.WriteString("dial broker, no node answered: ")
	for i, url := range e.urls {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(url + ": " + e.errs[i].Error())
	}
	return b.String()
}

// Unwrap returns every dial error.
func (e *brokerDialError) Unwrap() []error { return e.errs }
