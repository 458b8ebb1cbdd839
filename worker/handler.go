package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// ErrLedger is wrapped by Handle's error when the ledger could not be
// written. Before a send it means the message was NOT sent and was nacked
// with requeue; the worker must stop. A Finish refused as stale
// (ledger.ErrStaleAttempt) is not one: the ledger answered.
var ErrLedger = errors.New("ledger write failed")

// Publisher re-publishes a message to a queue (default exchange, routing key
// = queue) and returns nil only once the broker confirmed it. The production
// one is backed by publisher confirms and mandatory routing.
type Publisher interface {
	Publish(ctx context.Context, queue string, p amqp.Publishing) error
}

// Sender sends one notification to the vendor. *vendorapi.Client satisfies it.
// A nil error means SENT; otherwise the class comes from vendorapi.ClassOf.
// For an ad, ctx carries the send window's check (vendorapi.WithBeforePost):
// a Sender that makes its own calls before the message POST (a token call)
// should run it right before that POST and, when it refuses, return a
// NotSent error wrapping vendorapi.ErrRefusedBeforePost and the check's
// error, as *vendorapi.Client does; the handler then holds the ad. A Sender
// that ignores it is judged by the handler's look before Send alone.
type Sender interface {
	Send(ctx context.Context, n message.Notification) (vendorapi.Result, error)
	Close() error
}

// Ledger is the part of ledger.Store the handler uses: Begin before the
// send, Finish of the attempt Begin started (Entry.Attempts) after it.
// bodyHash is ledger.BodyHash of the delivery body.
type Ledger interface {
	Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (ledger.Decision, ledger.Entry, error)
	Finish(ctx context.Context, refkey, bodyHash string, attempt int, state outcome.Outcome, detail string, now time.Time) error
}

// CodeRefKeyConflict is the code and reason of a message whose refkey the
// ledger knows with another body: dead-lettered as INVALID, never sent
// (docs/outcomes.md).
const CodeRefKeyConflict = "REFKEY_CONFLICT"

// Window is the part of window.Window the handler uses.
type Window interface {
	Allowed(t time.Time) bool
	NextOpen(t time.Time) time.Time
}

var (
	_ Sender = (*vendorapi.Client)(nil)
	_ Ledger = (ledger.Store)(nil)
	_ Window = window.Window{}
)

// HandlerConfig builds a Handler. Publisher, Sender, Ledger, Window and
// Clock are required.
type HandlerConfig struct {
	Publisher Publisher
	Sender    Sender
	Ledger    Ledger
	Window    Window
	Clock     window.Clock
	// Names are the queue names (queues.NamesFor(main)).
	Names queues.Names
	// DeliveryLimit is the main queue's x-delivery-limit when it is a
	// quorum queue (queues.Topology.DeliveryLimit), 0 otherwise: a
	// delivery the broker returned before has its budget renewed (renew).
	DeliveryLimit int
	// MaxAttempts is the number of send attempts before a NOT_SENT message
	// is dead-lettered instead of retried. 0 = DefaultMaxAttempts.
	MaxAttempts int
	// PublishTimeout bounds one re-publish, all its attempts included.
	// 0 = DefaultPublishTimeout.
	PublishTimeout time.Duration
	// RepublishAttempts is how many times one copy is published (the
	// Publisher's path repaired in between, Repairer) before the Handler
	// gives up on it; 0 = DefaultRepublishAttempts.
	RepublishAttempts int
	// LedgerTimeout bounds each ledger Begin and Finish; 0 =
	// DefaultLedgerTimeout (docs/deployment.md, Deadlines).
	LedgerTimeout time.Duration
	// SendFence is the longest, by Clock, between the clock reading taken
	// before Begin and the start of the send; past it the send is refused
	// NOT_SENT. 0 = DefaultSendFence (docs/deployment.md, Fencing).
	SendFence time.Duration
	// PostFence is the longest, by Clock, between the clock reading taken
	// before Begin and any message POST of the attempt, checked inside the
	// vendor call right before each POST (the token call and a 401's
	// refetch come between SendFence's check and the POST). Past it the
	// POST is refused NOT_SENT: the worker was frozen inside the vendor
	// call, and a delivery report's or the horizon's settlement of the
	// attempt may already have sent a copy. 0 = SendFence + 3 x
	// DefaultResponseTimeout; run sets SendFence + 3 x the response timeout
	// (docs/deployment.md, Fencing).
	PostFence time.Duration
	// RetryDelay is how long a NOT_SENT message waits in the retry queue
	// (its per-message expiration) when the vendor sent no Retry-After;
	// 0 = DefaultRetryDelay. RetryMaxDelay bounds a Retry-After; 0 =
	// DefaultRetryMaxDelay.
	RetryDelay, RetryMaxDelay time.Duration
	// Replica is put into every Record (Record.Replica).
	Replica string
	// ReleaseAfterSend: the handler gives its slot back as soon as its
	// send is over (the release func serve passes), before the ledger's
	// Finish and the ack, so that the next delivery's Begin can share one
	// ledger transaction with this Finish (ledger.Ledger.GroupCommit).
	// Sends in flight stay at Concurrency. docs/worker.md, Cost per message.
	ReleaseAfterSend bool
	// Decode parses a body; nil = message.Decode.
	Decode func([]byte) (message.Notification, error)
	// Logger; nil = discard.
	Logger *slog.Logger
}

// Handler routes one delivery to exactly one place (docs/outcomes.md outcome
// table). It holds no channel: acks go through the delivery's
// amqp.Acknowledger, re-publishes through Publisher.
type Handler struct {
	c HandlerConfig
	// calls runs the ledger calls (withLedgerDeadline); shared by the
	// copies WithPublisher makes.
	calls *callRunner
	// finishing holds, per refkey, a channel closed when a handler that
	// released its slot after its send has finished that delivery
	// (ReleaseAfterSend): a delivery of the same refkey waits for it
	// before its Begin, so it sees the outcome, not the attempt. Shared by
	// the copies WithPublisher makes.
	finishing *sync.Map
}

// NewHandler returns a Handler for c.
func NewHandler(c HandlerConfig) *Handler {
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.PublishTimeout <= 0 {
		c.PublishTimeout = DefaultPublishTimeout
	}
	if c.RepublishAttempts <= 0 {
		c.RepublishAttempts = DefaultRepublishAttempts
	}
	if c.LedgerTimeout <= 0 {
		c.LedgerTimeout = DefaultLedgerTimeout
	}
	if c.SendFence <= 0 {
		c.SendFence = DefaultSendFence
	}
	if c.PostFence <= 0 {
		c.PostFence = c.SendFence + 3*DefaultResponseTimeout
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = DefaultRetryDelay
	}
	if c.RetryMaxDelay <= 0 {
		c.RetryMaxDelay = DefaultRetryMaxDelay
	}
	if c.Decode == nil {
		c.Decode = message.Decode
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{c: c, calls: newCallRunner(), finishing: &sync.Map{}}
}

// WithPublisher returns a copy of h that re-publishes through p (one per
// broker connection).
func (h *Handler) WithPublisher(p Publisher) *Handler {
	c := h.c
	c.Publisher = p
	return &Handler{c: c, calls: h.calls, finishing: h.finishing}
}

// Handle decides the outcome of d, re-publishes it where the outcome table
// says, and acks it (or nacks it with requeue when the re-publish failed,
// Record.Requeued). It returns the Record of what happened; Seq and CPUMS
// are left for the caller. The send and the re-publish are not cancelled by
// ctx (a shutdown finishes the in-flight message); they are bounded by the
// vendor's response timeout and PublishTimeout.
//
// The error is nil except when the worker must stop: it wraps ErrLedger
// (the ledger could not be written). When the ledger failed before a send,
// nothing was sent and d was nacked with requeue. A Finish the ledger
// refuses as stale (the entry was settled meanwhile) is no error: it is
// logged and d is routed and acked as usual (finishLedger, staleFinish).
func (h *Handler) Handle(ctx context.Context, d amqp.Delivery) (rec records.Record, err error) {
	return h.handle(ctx, d, nil, nil)
}

// decoded is a delivery's body decoded ahead of its turn (predecode).
type decoded struct {
	n   message.Notification
	err error
}

// predecode decodes d's body with the handler's Decode: what handle would
// do first, done by serve while the message before it is being sent.
func (h *Handler) predecode(d amqp.Delivery) *decoded {
	n, err := h.c.Decode(d.Body)
	return &decoded{n: n, err: err}
}

// handle is Handle; with HandlerConfig.ReleaseAfterSend it calls release
// (when not nil) once the send is over, before the Finish and the ack.
// pre, when not nil, is d's body already decoded (predecode).
func (h *Handler) handle(ctx context.Context, d amqp.Delivery, pre *decoded, release func()) (rec records.Record, err error) {
	ctx = context.WithoutCancel(ctx)
	now := h.c.Clock.Now()
	rec = records.Record{Redelivered: d.Redelivered, Start: time.Now(), Clock: now, Attempt: queues.Attempt(d.Headers), Replica: h.c.Replica}
	defer func() { rec.End = time.Now() }()

	if h.renew(ctx, d, &rec) {
		return rec, nil
	}
	var n message.Notification
	var derr error
	if pre != nil {
		n, derr = pre.n, pre.err
	} else {
		n, derr = h.c.Decode(d.Body) // no allocation for the common case
	}
	if derr != nil {
		rec.RefKey = refKeyOf(d.Body)
		reason := Redact(derr.Error(), "")
		rec.Error = reason
		h.route(ctx, d, &rec, route{outcome: outcome.Invalid, queue: h.c.Names.Dead, reason: reason})
		return rec, nil
	}
	rec.RefKey = n.RefKey
	rec.Category = string(n.Category)

	if n.Category == message.Ad && !h.c.Window.Allowed(now) {
		next := h.c.Window.NextOpen(now)
		rec.HeldUntil = next
		h.route(ctx, d, &rec, route{
			outcome:    outcome.OutsideSendWindow,
			queue:      h.c.Names.Held,
			reason:     "outside send window; opens at " + next.Format(time.RFC3339),
			expiration: queues.Expiration(next.Sub(now)),
		})
		return rec, nil
	}

	bodyHash := ledger.BodyHash(d.Body)
	h.awaitFinishing(n.RefKey)
	decision, entry, err := h.beginLedger(ctx, n.RefKey, bodyHash, now)
	// finish closes this delivery's own attempt (entry.Attempts of its
	// Proceed) and nothing else: the ledger refuses it if the entry moved on.
	finish := func(state outcome.Outcome, detail string) func() error {
		return func() error {
			return h.finishLedger(ctx, n.RefKey, bodyHash, entry.Attempts, state, detail)
		}
	}
	if err != nil {
		rec.Outcome, rec.Requeued = "", true
		rec.Error = "ledger begin failed: " + Redact(err.Error(), n.Recipient)
		if nerr := d.Nack(false, true); nerr != nil {
			rec.AckError = nerr.Error()
		}
		return rec, fmt.Errorf("begin ledger entry %q: %w", n.RefKey, errors.Join(ErrLedger, err))
	}
	switch decision {
	case ledger.Duplicate:
		rec.Outcome = outcome.Duplicate
		rec.Error = "already " + string(entry.State)
		h.ack(d, &rec)
		return rec, nil
	case ledger.Conflict:
		// The refkey was reused for another notification: never sent, never
		// acked as a duplicate, and the first one's entry is left as it is.
		reason := CodeRefKeyConflict + ": refkey already used for a different message body (ledger " + string(entry.State) + ")"
		rec.Error, rec.Code = reason, CodeRefKeyConflict
		return rec, h.route(ctx, d, &rec, route{
			outcome: outcome.Invalid, queue: h.c.Names.Dead, reason: reason, code: CodeRefKeyConflict,
		})
	case ledger.Unresolved:
		// The ATTEMPTING entry may be a live attempt (another delivery of the
		// refkey in flight here or on another replica), so this delivery
		// writes nothing: the attempt's own Finish records its outcome; a
		// crashed attempt stays ATTEMPTING for an operator to resolve.
		reason := "an earlier attempt has no recorded outcome (ledger " + string(entry.State) + "); may have reached the vendor"
		rec.Error, rec.NoCall = reason, true
		return rec, h.route(ctx, d, &rec, route{outcome: outcome.Unknown, queue: h.c.Names.Unknown, reason: reason})
	case ledger.Proceed:
	default:
		rec.Requeued = true
		_ = d.Nack(false, true)
		return rec, fmt.Errorf("begin ledger entry %q: %w: unknown decision %d", n.RefKey, ErrLedger, decision)
	}

	// The last look before Send: the session, the window and the fence
	// are read again now that Begin (however slow) is done. The window is
	// read once more inside Send, right before each message POST
	// (postCheck): the token call may come first.
	if refused, ferr := h.gate(ctx, d, n, &rec, now, entry, finish); refused {
		return rec, ferr
	}
	cpu0 := ProcessCPUMS()
	res, serr := h.c.Sender.Send(h.postCheck(ctx, n, now), n)
	if cpu0 >= 0 {
		rec.SendCPUMS = ProcessCPUMS() - cpu0
	}
	if release != nil && h.c.ReleaseAfterSend {
		defer h.markFinishing(n.RefKey)()
		release()
	}
	setTrace(&rec, res.Trace)
	if at, held := heldInSend(serr); held {
		// The vendor client refused the POST (the first, or the resend
		// after a 401, whose first POST was refused unprocessed) at this
		// reading: nothing of it was processed, NOT_SENT is true.
		return rec, h.holdClosed(ctx, d, &rec, at, "not sent: the send window closed inside the vendor call, before the request", finish)
	}
	class := vendorapi.ClassOf(serr)
	var se *vendorapi.SendError
	var retryAfter time.Duration
	if errors.As(serr, &se) {
		rec.Code = se.Code
		retryAfter = se.RetryAfter
	}
	if serr == nil {
		rec.Code = res.Code
	}
	errText := ""
	if serr != nil {
		errText = Redact(serr.Error(), n.Recipient)
		rec.Error = errText
	}
	attempts := max(rec.Attempt+1, entry.Attempts)
	rec.Attempt = attempts

	switch class {
	case outcome.Sent:
		rec.Outcome = outcome.Sent
		if err := finish(outcome.Sent, res.MessageKey)(); err != nil {
			// It was sent: ack it regardless, then stop (the ledger is
			// broken). The ledger keeps Attempting, so any copy becomes
			// UNKNOWN, never a second send; this line and the Record keep
			// the outcome for the operator (docs/deployment.md, Deadlines).
			h.c.Logger.Error("sent, but the ledger did not record it; resolve the refkey as sent",
				"refkey", n.RefKey, "message_key", res.MessageKey, "code", rec.Code, "error", Redact(err.Error(), n.Recipient))
			h.ack(d, &rec)
			return rec, fmt.Errorf("finish ledger entry %q: %w", n.RefKey, errors.Join(ErrLedger, err))
		}
		h.ack(d, &rec)
		return rec, nil
	case outcome.Rejected:
		detail := "code " + rec.Code + ": " + errText
		return rec, h.route(ctx, d, &rec, route{
			outcome: outcome.Rejected, queue: h.c.Names.Failed, reason: "vendor rejected it",
			errText: errText, code: rec.Code,
			finish: finish(outcome.Rejected, detail),
		})
	case outcome.NotSent:
		return rec, h.routeNotSent(ctx, d, &rec, attempts, errText, retryAfter, finish(outcome.NotSent, errText))
	default: // outcome.Unknown and anything unexpected: the conservative class.
		detail := errText
		return rec, h.route(ctx, d, &rec, route{
			outcome: outcome.Unknown, queue: h.c.Names.Unknown,
			reason:  "may have reached the vendor; never re-sent automatically",
			errText: errText, code: rec.Code, attempt: attempts, setAttempt: true,
			finish: finish(outcome.Unknown, detail),
		})
	}
}

// markFinishing records that refkey's delivery is finishing after its
// slot was released, and returns the func that ends that (deferred by
// handle).
func (h *Handler) markFinishing(refkey string) (done func()) {
	ch := make(chan struct{})
	if _, loaded := h.finishing.LoadOrStore(refkey, ch); loaded {
		return func() {} // another one is finishing it: its own done ends it
	}
	return func() {
		h.finishing.Delete(refkey)
		close(ch)
	}
}

// awaitFinishing waits until no delivery of refkey is finishing after a
// released slot (markFinishing).
func (h *Handler) awaitFinishing(refkey string) {
	if v, ok := h.finishing.Load(refkey); ok {
		<-v.(chan struct{})
	}
}

// refKeyOf returns the body's top-level "refkey" string when the body is a
// JSON object that has one, else "": an invalid message still names its
// refkey in the Record when it can, for reconciliation.
func refKeyOf(body []byte) string {
	var v struct {
		RefKey any `json:"refkey"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	s, _ := v.RefKey.(string)
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// RetryDelay is how long a NOT_SENT message waits in the retry queue: the
// vendor's Retry-After when it sent one (retryAfter > 0) and it is longer
// than the worker's own delay, else def; never more than maxDelay (the
// retry queue's x-message-ttl caps it anyway). Retry-After is a minimum
// wait (RFC 9110 10.2.3), so a longer wait honours it; a shorter one would
// not.
func RetryDelay(def, retryAfter, maxDelay time.Duration) time.Duration {
	return min(max(def, retryAfter), maxDelay)
}

// routeNotSent routes a message that provably did not leave the worker: to
// the retry queue with its attempt count, or to the dead queue once the
// attempts are exhausted. finish records NOT_SENT even when the re-publish
// fails, so the redelivery of the requeued original is sent again.
func (h *Handler) routeNotSent(ctx context.Context, d amqp.Delivery, rec *records.Record, attempts int, errText string, retryAfter time.Duration, finish func() error) error {
	r := route{
		outcome: outcome.NotSent, queue: h.c.Names.Retry, reason: "definitely not sent; retry",
		errText: errText, code: rec.Code, attempt: attempts, setAttempt: true,
		finish: finish, finishOnRequeue: true,
	}
	topo := queues.Topology{Names: h.c.Names, MaxAttempts: h.c.MaxAttempts}
	if q, dead := topo.AfterNotSent(attempts); dead {
		r.queue = q
		r.reason = fmt.Sprintf("definitely not sent; attempts exhausted (%d of %d)", attempts, h.c.MaxAttempts)
	} else {
		delay := RetryDelay(h.c.RetryDelay, retryAfter, h.c.RetryMaxDelay)
		r.expiration = queues.Expiration(delay)
		r.reason = "definitely not sent; retry in " + delay.String()
		if retryAfter > 0 {
			r.reason += " (vendor Retry-After " + retryAfter.String() + ")"
		}
	}
	return h.route(ctx, d, rec, r)
}
