package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

var (
	seoul = mustZone("Asia/Seoul")
	// inWindow and outWindow are worker clock readings on either side of
	// the default 08:00-20:50 Asia/Seoul window.
	inWindow  = time.Date(2026, 11, 30, 12, 0, 0, 0, seoul)
	outWindow = time.Date(2026, 11, 30, 21, 0, 0, 0, seoul)
	names     = queues.NamesFor("notifications")
)

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

// openLedger opens a real bbolt ledger in t.TempDir().
func openLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	l, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatalf("open ledger: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// ledgerGetter is a Ledger whose entries a test can read.
type ledgerGetter interface {
	Ledger
	Get(ctx context.Context, refkey string) (ledger.Entry, bool, error)
}

// rig is one handler with its fakes.
type rig struct {
	h      *Handler
	pub    *fakePublisher
	send   *fakeSender
	led    ledgerGetter
	logBuf *bytes.Buffer
}

func newRig(t *testing.T, led ledgerGetter, now time.Time) *rig {
	t.Helper()
	r := &rig{pub: &fakePublisher{}, send: &fakeSender{res: vendorapi.Result{Code: "1000", MessageKey: "mk-1"}}, led: led, logBuf: &bytes.Buffer{}}
	if r.led == nil {
		r.led = openLedger(t)
	}
	r.h = NewHandler(HandlerConfig{
		Publisher: r.pub, Sender: r.send, Ledger: r.led, Window: window.Default(),
		Clock: fixedClock{now}, Names: names, MaxAttempts: 5,
		Logger: newTestLogger(r.logBuf),
	})
	return r
}

func (r *rig) state(t *testing.T, refkey string) outcome.Outcome {
	t.Helper()
	e, ok, err := r.led.Get(context.Background(), refkey)
	if err != nil {
		t.Fatalf("ledger get: %v", err)
	}
	if !ok {
		return ""
	}
	return e.State
}

// TestHandleRouting covers every branch of the outcome table: where the
// message goes, its headers, ack or nack, the ledger state, whether it was
// sent.
func TestHandleRouting(t *testing.T) {
	tokenErr := errors.New(`dial: Authorization: Bearer eyJhbGciOi.secret-token for ` + testRecipient)
	tests := []struct {
		name       string
		body       []byte
		headers    amqp.Table
		now        time.Time
		prepare    func(t *testing.T, r *rig)
		sendRes    vendorapi.Result
		sendErr    error
		wantOut    outcome.Outcome
		wantQueue  string // "" = acked without re-publish
		wantSent   int
		wantState  outcome.Outcome
		wantAttHdr int // expected HeaderAttempt on the re-publish; 0 = absent
		wantCode   string
		check      func(t *testing.T, r *rig, rec records.Record, p *published)
	}{
		{
			name: "sent", body: body(t, "r-sent", message.Info), now: inWindow,
			wantOut: outcome.Sent, wantSent: 1, wantState: outcome.Sent, wantCode: "1000",
		},
		{
			name: "info outside window is sent", body: body(t, "r-info-night", message.Info), now: outWindow,
			wantOut: outcome.Sent, wantSent: 1, wantState: outcome.Sent, wantCode: "1000",
		},
		{
			name: "ad inside window is sent", body: body(t, "r-ad-day", message.Ad), now: inWindow,
			wantOut: outcome.Sent, wantSent: 1, wantState: outcome.Sent, wantCode: "1000",
		},
		{
			name: "invalid body", body: []byte(strings.Replace(string(body(t, "r-bad", message.Info)), `"info"`, `"promo"`, 1)), now: inWindow,
			wantOut: outcome.Invalid, wantQueue: names.Dead, wantSent: 0, wantState: "",
			check: func(t *testing.T, r *rig, rec records.Record, p *published) {
				reason, _ := p.p.Headers[queues.HeaderReason].(string)
				if !strings.Contains(reason, "category") {
					t.Errorf("reason header %q does not name the bad field", reason)
				}
				if rec.RefKey != "r-bad" {
					t.Errorf("record refkey %q, want the body's r-bad", rec.RefKey)
				}
			},
		},
		{
			name: "unparsable body", body: []byte(`not json at all`), now: inWindow,
			wantOut: outcome.Invalid, wantQueue: names.Dead,
			check: func(t *testing.T, r *rig, rec records.Record, p *published) {
				if rec.RefKey != "" {
					t.Errorf("record refkey %q, want empty", rec.RefKey)
				}
				if !bytes.Equal(p.p.Body, []byte(`not json at all`)) {
					t.Errorf("dead-lettered body %q, want the original", p.p.Body)
				}
			},
		},
		{
			name: "ad outside window is held", body: body(t, "r-ad-night", message.Ad), now: outWindow,
			wantOut: outcome.OutsideSendWindow, wantQueue: names.Held, wantSent: 0, wantState: "",
			check: func(t *testing.T, r *rig, rec records.Record, p *published) {
				// 21:00 -> 08:00 next day = 11 h.
				if want := fmt.Sprint((11 * time.Hour).Milliseconds()); p.p.Expiration != want {
					t.Errorf("expiration %q ms, want %s", p.p.Expiration, want)
				}
				if want := time.Date(2026, 12, 1, 8, 0, 0, 0, seoul); !rec.HeldUntil.Equal(want) {
					t.Errorf("held until %v, want %v", rec.HeldUntil, want)
				}
			},
		},
		{
			name: "duplicate of a sent refkey", body: body(t, "r-dup", message.Info), now: inWindow,
			prepare: func(t *testing.T, r *rig) {
				beginFinish(t, r.led, "r-dup", outcome.Sent)
			},
			wantOut: outcome.Duplicate, wantSent: 0, wantState: outcome.Sent,
		},
		{
			name: "unresolved attempt goes to unknown", body: body(t, "r-unres", message.Info), now: inWindow,
			prepare: func(t *testing.T, r *rig) {
				if _, _, err := r.led.Begin(context.Background(), "r-unres", "", inWindow); err != nil {
					t.Fatal(err)
				}
			},
			wantOut: outcome.Unknown, wantQueue: names.Unknown, wantSent: 0, wantState: outcome.Unknown,
		},
		{
			name: "rejected goes to failed with the vendor code", body: body(t, "r-rej", message.Info), now: inWindow,
			sendErr: sendErr(outcome.Rejected, "3016", errors.New("template mismatch")),
			wantOut: outcome.Rejected, wantQueue: names.Failed, wantSent: 1, wantState: outcome.Rejected, wantCode: "3016",
			wantAttHdr: 0,
			check: func(t *testing.T, r *rig, rec records.Record, p *published) {
				if got := p.p.Headers[queues.HeaderCode]; got != "3016" {
					t.Errorf("code header %v, want 3016", got)
				}
			},
		},
		{
			name: "not sent goes to retry with attempt 1", body: body(t, "r-ns", message.Info), now: inWindow,
			sendErr: sendErr(outcome.NotSent, "", vendorapi.ErrClientClosed),
			wantOut: outcome.NotSent, wantQueue: names.Retry, wantSent: 1, wantState: outcome.NotSent, wantAttHdr: 1,
		},
		{
			name: "not sent at the last attempt goes to dead", body: body(t, "r-ns-last", message.Info), now: inWindow,
			headers: amqp.Table{queues.HeaderAttempt: int32(4)},
			sendErr: sendErr(outcome.NotSent, "", errors.New("dial tcp: connection refused")),
			wantOut: outcome.NotSent, wantQueue: names.Dead, wantSent: 1, wantState: outcome.NotSent, wantAttHdr: 5,
			check: func(t *testing.T, r *rig, rec records.Record, p *published) {
				if reason, _ := p.p.Headers[queues.HeaderReason].(string); !strings.Contains(reason, "exhausted") {
					t.Errorf("reason %q does not say attempts are exhausted", reason)
				}
			},
		},
		{
			name: "unknown goes to unknown", body: body(t, "r-unk", message.Info), now: inWindow,
			sendErr: sendErr(outcome.Unknown, "", errors.New("read: connection reset by peer")),
			wantOut: outcome.Unknown, wantQueue: names.Unknown, wantSent: 1, wantState: outcome.Unknown, wantAttHdr: 1,
		},
		{
			name: "unclassified error is unknown", body: body(t, "r-plain", message.Info), now: inWindow,
			sendErr: errors.New("something odd"),
			wantOut: outcome.Unknown, wantQueue: names.Unknown, wantSent: 1, wantState: outcome.Unknown, wantAttHdr: 1,
		},
		{
			name: "error text is redacted", body: body(t, "r-redact", message.Info), now: inWindow,
			sendErr: sendErr(outcome.NotSent, "", tokenErr),
			wantOut: outcome.NotSent, wantQueue: names.Retry, wantSent: 1, wantState: outcome.NotSent, wantAttHdr: 1,
			check: func(t *testing.T, r *rig, rec records.Record, p *published) {
				hdr, _ := p.p.Headers[queues.HeaderError].(string)
				for _, s := range []string{hdr, rec.Error} {
					if strings.Contains(s, testRecipient) || strings.Contains(s, "secret-token") || strings.Contains(s, "eyJhbGciOi") {
						t.Errorf("error text not redacted: %q", s)
					}
					if !strings.Contains(s, "5678") {
						t.Errorf("error text %q lost the masked recipient's last digits", s)
					}
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil, tc.now)
			r.send.res, r.send.err = vendorapi.Result{Code: "1000", MessageKey: "mk-1"}, tc.sendErr
			if tc.sendRes != (vendorapi.Result{}) {
				r.send.res = tc.sendRes
			}
			if tc.prepare != nil {
				tc.prepare(t, r)
			}
			ack := &fakeAcker{}
			hdr := amqp.Table{"x-origin": "driver"}
			for k, v := range tc.headers {
				hdr[k] = v
			}
			d := delivery(ack, 7, tc.body, hdr)
			rec, err := r.h.Handle(context.Background(), d)
			if err != nil {
				t.Fatalf("Handle: %v", err)
			}
			if rec.Outcome != tc.wantOut {
				t.Errorf("outcome %q, want %q (error %q)", rec.Outcome, tc.wantOut, rec.Error)
			}
			if rec.Queue != tc.wantQueue {
				t.Errorf("record queue %q, want %q", rec.Queue, tc.wantQueue)
			}
			if got := r.send.calls(); got != tc.wantSent {
				t.Errorf("sends %d, want %d", got, tc.wantSent)
			}
			if acks, nacks := ack.counts(); acks != 1 || nacks != 0 || ack.acks[0] != 7 {
				t.Errorf("acks %v nacks %v, want exactly one ack of tag 7", ack.acks, ack.nacks)
			}
			if rec.Requeued || rec.AckError != "" {
				t.Errorf("requeued %v ack error %q", rec.Requeued, rec.AckError)
			}
			if tc.wantCode != "" && rec.Code != tc.wantCode {
				t.Errorf("record code %q, want %q", rec.Code, tc.wantCode)
			}
			refkey := rec.RefKey
			if refkey != "" {
				if got := r.state(t, refkey); got != tc.wantState {
					t.Errorf("ledger state %q, want %q", got, tc.wantState)
				}
			}
			if tc.wantQueue == "" {
				if len(r.pub.pubs) != 0 {
					t.Fatalf("re-published %d messages, want none", len(r.pub.pubs))
				}
				return
			}
			if len(r.pub.pubs) != 1 {
				t.Fatalf("re-published %d messages, want 1", len(r.pub.pubs))
			}
			p := r.pub.pubs[0]
			if p.queue != tc.wantQueue {
				t.Errorf("re-published to %q, want %q", p.queue, tc.wantQueue)
			}
			if !bytes.Equal(p.p.Body, tc.body) {
				t.Errorf("re-published body differs from the original")
			}
			if p.p.DeliveryMode != amqp.Persistent {
				t.Errorf("delivery mode %d, want persistent", p.p.DeliveryMode)
			}
			if p.p.MessageId != "m-1" || p.p.ContentType != "application/json" {
				t.Errorf("properties not copied: message id %q content type %q", p.p.MessageId, p.p.ContentType)
			}
			if p.p.Headers["x-origin"] != "driver" {
				t.Errorf("original header lost: %v", p.p.Headers)
			}
			if p.p.Headers[queues.HeaderOutcome] != string(tc.wantOut) {
				t.Errorf("outcome header %v, want %s", p.p.Headers[queues.HeaderOutcome], tc.wantOut)
			}
			if reason, _ := p.p.Headers[queues.HeaderReason].(string); reason == "" {
				t.Errorf("no reason header")
			}
			if tc.wantAttHdr != 0 && queues.Attempt(p.p.Headers) != tc.wantAttHdr {
				t.Errorf("attempt header %v, want %d", p.p.Headers[queues.HeaderAttempt], tc.wantAttHdr)
			}
			if tc.wantAttHdr == 0 && tc.headers[queues.HeaderAttempt] == nil {
				if _, ok := p.p.Headers[queues.HeaderAttempt]; ok && tc.wantOut != outcome.Unknown && tc.wantOut != outcome.NotSent {
					t.Errorf("unexpected attempt header %v", p.p.Headers[queues.HeaderAttempt])
				}
			}
			if _, ok := d.Headers[queues.HeaderOutcome]; ok {
				t.Errorf("the delivery's own headers were modified")
			}
			if tc.check != nil {
				tc.check(t, r, rec, &p)
			}
		})
	}
}

// beginFinish records a finished attempt in l.
func beginFinish(t *testing.T, l Ledger, refkey string, s outcome.Outcome) {
	t.Helper()
	if _, _, err := l.Begin(context.Background(), refkey, "", inWindow); err != nil {
		t.Fatal(err)
	}
	if err := l.Finish(context.Background(), refkey, "", s, "", inWindow); err != nil {
		t.Fatal(err)
	}
}

// TestRefKeyConflict: the same refkey with the same body is a DUPLICATE
// (acked, not sent); with another body it is dead-lettered as INVALID with
// REFKEY_CONFLICT, never sent, and the first entry is left as it was.
func TestRefKeyConflict(t *testing.T) {
	r := newRig(t, nil, inWindow)
	first := body(t, "r-reuse", message.Info)
	other := []byte(strings.Replace(string(first), "your order shipped", "your refund is on its way", 1))
	if string(other) == string(first) {
		t.Fatal("test bodies are equal")
	}
	for i, tc := range []struct {
		body      []byte
		wantOut   outcome.Outcome
		wantQueue string
		wantSends int
	}{
		{first, outcome.Sent, "", 1},
		{first, outcome.Duplicate, "", 1},
		{other, outcome.Invalid, names.Dead, 1},
	} {
		ack := &fakeAcker{}
		npub := len(r.pub.pubs)
		rec, err := r.h.Handle(context.Background(), delivery(ack, uint64(i+1), tc.body, nil))
		if err != nil {
			t.Fatalf("delivery %d: %v", i+1, err)
		}
		if rec.Outcome != tc.wantOut || rec.Queue != tc.wantQueue || r.send.calls() != tc.wantSends {
			t.Errorf("delivery %d: outcome %q queue %q sends %d; want %q %q %d",
				i+1, rec.Outcome, rec.Queue, r.send.calls(), tc.wantOut, tc.wantQueue, tc.wantSends)
		}
		if acks, nacks := ack.counts(); acks != 1 || nacks != 0 {
			t.Errorf("delivery %d: acks %d nacks %d; want 1 ack (after the copy was confirmed)", i+1, acks, nacks)
		}
		if tc.wantQueue == "" {
			continue
		}
		if len(r.pub.pubs) != npub+1 {
			t.Fatalf("delivery %d: %d re-publishes; want 1", i+1, len(r.pub.pubs)-npub)
		}
		p := r.pub.pubs[npub]
		if p.queue != names.Dead || p.p.Headers[queues.HeaderCode] != CodeRefKeyConflict ||
			!strings.Contains(fmt.Sprint(p.p.Headers[queues.HeaderReason]), CodeRefKeyConflict) ||
			p.p.Headers[queues.HeaderOutcome] != string(outcome.Invalid) {
			t.Errorf("conflict copy to %s headers %v; want %s with code and reason %s", p.queue, p.p.Headers, names.Dead, CodeRefKeyConflict)
		}
		if rec.Code != CodeRefKeyConflict {
			t.Errorf("record code %q; want %s", rec.Code, CodeRefKeyConflict)
		}
	}
	e, _, err := r.led.Get(context.Background(), "r-reuse")
	if err != nil || e.State != outcome.Sent || e.BodyHash != ledger.BodyHash(first) {
		t.Errorf("ledger entry %+v, %v; want the first message's SENT entry untouched", e, err)
	}
}

// TestRedeliveryOfSentIsNotSentAgain: a message whose ack was lost comes
// back Redelivered; the ledger stops the second send.
func TestRedeliveryOfSentIsNotSentAgain(t *testing.T) {
	r := newRig(t, nil, inWindow)
	b := body(t, "r-once", message.Info)
	lost := &fakeAcker{err: errors.New("channel/connection is not open")}
	rec1, err := r.h.Handle(context.Background(), delivery(lost, 1, b, nil))
	if err != nil || rec1.Outcome != outcome.Sent || rec1.AckError == "" {
		t.Fatalf("first delivery: outcome %q ack error %q err %v; want SENT with a failed ack", rec1.Outcome, rec1.AckError, err)
	}
	ack := &fakeAcker{}
	d := delivery(ack, 1, b, nil)
	d.Redelivered = true
	rec2, err := r.h.Handle(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if rec2.Outcome != outcome.Duplicate || !rec2.Redelivered {
		t.Errorf("redelivery outcome %q redelivered %v, want DUPLICATE true", rec2.Outcome, rec2.Redelivered)
	}
	if n := r.send.calls(); n != 1 {
		t.Errorf("vendor saw %d sends, want 1", n)
	}
	if acks, _ := ack.counts(); acks != 1 {
		t.Errorf("redelivery acked %d times, want 1", acks)
	}
	if len(r.pub.pubs) != 0 {
		t.Errorf("duplicate re-published %d times", len(r.pub.pubs))
	}
}

// TestCrashMidSendBecomesUnknown: the ledger holds Attempting (the worker
// died, or the channel was lost, mid-send); the redelivery is not sent and
// goes to the unknown queue; a third delivery is then a duplicate.
func TestCrashMidSendBecomesUnknown(t *testing.T) {
	r := newRig(t, nil, inWindow)
	b := body(t, "r-crash", message.Info)
	if dec, _, err := r.led.Begin(context.Background(), "r-crash", ledger.BodyHash(b), inWindow); err != nil || dec != ledger.Proceed {
		t.Fatalf("begin: %v %v", dec, err)
	}
	for i, want := range []outcome.Outcome{outcome.Unknown, outcome.Duplicate} {
		ack := &fakeAcker{}
		d := delivery(ack, uint64(i+1), b, nil)
		d.Redelivered = true
		rec, err := r.h.Handle(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Outcome != want {
			t.Errorf("delivery %d: outcome %q, want %q", i+1, rec.Outcome, want)
		}
	}
	if r.send.calls() != 0 {
		t.Errorf("sent %d times, want 0", r.send.calls())
	}
	if len(r.pub.pubs) != 1 || r.pub.pubs[0].queue != names.Unknown {
		t.Errorf("re-publishes %v, want one to %s", r.pub.pubs, names.Unknown)
	}
}

// TestPublishFailureRequeues: when the re-publish fails the original is
// nacked with requeue (never lost) and the handler carries on. A REJECTED
// send keeps Attempting in the ledger so its redelivery goes to the unknown
// queue without a second send; a NOT_SENT one is recorded so its
// redelivery is sent again.
func TestPublishFailureRequeues(t *testing.T) {
	tests := []struct {
		name         string
		sendErr      error
		wantState    outcome.Outcome
		wantRedeliv  outcome.Outcome
		wantSends    int
		wantRedQueue string
	}{
		{"rejected", sendErr(outcome.Rejected, "3016", errBoom), ledger.Attempting, outcome.Unknown, 1, names.Unknown},
		{"unknown", sendErr(outcome.Unknown, "", errBoom), ledger.Attempting, outcome.Unknown, 1, names.Unknown},
		{"not sent", sendErr(outcome.NotSent, "", vendorapi.ErrClientClosed), outcome.NotSent, outcome.Sent, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil, inWindow)
			r.send.err = tc.sendErr
			r.pub.err = errors.New("publish not confirmed")
			b := body(t, "r-pubfail", message.Info)
			ack := &fakeAcker{}
			rec, err := r.h.Handle(context.Background(), delivery(ack, 3, b, nil))
			if err != nil {
				t.Fatalf("Handle: %v (a publish failure must not stop the worker)", err)
			}
			if !rec.Requeued || rec.PublishError == "" {
				t.Errorf("requeued %v publish error %q", rec.Requeued, rec.PublishError)
			}
			if acks, nacks := ack.counts(); acks != 0 || nacks != 1 || !ack.requeues[0] {
				t.Errorf("acks %d nacks %d requeues %v; want one nack with requeue", acks, nacks, ack.requeues)
			}
			if got := r.state(t, "r-pubfail"); got != tc.wantState {
				t.Errorf("ledger %q, want %q", got, tc.wantState)
			}
			// The broker redelivers it; publishing works again.
			r.pub.err = nil
			r.send.err = nil
			ack2 := &fakeAcker{}
			d := delivery(ack2, 1, b, nil)
			d.Redelivered = true
			rec2, err := r.h.Handle(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			if rec2.Outcome != tc.wantRedeliv || rec2.Queue != tc.wantRedQueue {
				t.Errorf("redelivery: outcome %q queue %q, want %q %q", rec2.Outcome, rec2.Queue, tc.wantRedeliv, tc.wantRedQueue)
			}
			if r.send.calls() != tc.wantSends {
				t.Errorf("sends %d, want %d", r.send.calls(), tc.wantSends)
			}
		})
	}
}

// TestLedgerFailure: a ledger that cannot be written before the send means
// do not send, nack with requeue, stop; after a send, ack and stop.
func TestLedgerFailure(t *testing.T) {
	t.Run("begin fails: not sent, requeued, fatal", func(t *testing.T) {
		led := ledgertest.NewMem()
		led.SetErrors(errors.New("disk full"), nil)
		r := newRig(t, led, inWindow)
		ack := &fakeAcker{}
		rec, err := r.h.Handle(context.Background(), delivery(ack, 9, body(t, "r-lf", message.Info), nil))
		if !errors.Is(err, ErrLedger) {
			t.Fatalf("error %v, want ErrLedger", err)
		}
		if r.send.calls() != 0 {
			t.Errorf("sent %d times with a broken ledger", r.send.calls())
		}
		if acks, nacks := ack.counts(); acks != 0 || nacks != 1 || !ack.requeues[0] {
			t.Errorf("acks %d nacks %d, want one nack with requeue", acks, nacks)
		}
		if !rec.Requeued {
			t.Errorf("record not marked requeued")
		}
	})
	t.Run("finish fails after sent: acked, fatal", func(t *testing.T) {
		led := ledgertest.NewMem()
		led.SetErrors(nil, errors.New("disk full"))
		r := newRig(t, led, inWindow)
		ack := &fakeAcker{}
		rec, err := r.h.Handle(context.Background(), delivery(ack, 9, body(t, "r-lf2", message.Info), nil))
		if !errors.Is(err, ErrLedger) {
			t.Fatalf("error %v, want ErrLedger", err)
		}
		if acks, _ := ack.counts(); acks != 1 || rec.Outcome != outcome.Sent {
			t.Errorf("acks %d outcome %q, want the sent message acked", acks, rec.Outcome)
		}
	})
	t.Run("finish fails after re-publish: acked, fatal", func(t *testing.T) {
		led := ledgertest.NewMem()
		led.SetErrors(nil, errors.New("disk full"))
		r := newRig(t, led, inWindow)
		r.send.err = sendErr(outcome.Unknown, "", errBoom)
		ack := &fakeAcker{}
		_, err := r.h.Handle(context.Background(), delivery(ack, 9, body(t, "r-lf3", message.Info), nil))
		if !errors.Is(err, ErrLedger) {
			t.Fatalf("error %v, want ErrLedger", err)
		}
		if acks, _ := ack.counts(); acks != 1 || len(r.pub.pubs) != 1 {
			t.Errorf("acks %d re-publishes %d, want 1 and 1", acks, len(r.pub.pubs))
		}
	})
}

// TestHandleSendIgnoresCancel: the send of a message in hand is not
// cancelled by the worker's ctx (shutdown finishes it).
func TestHandleSendIgnoresCancel(t *testing.T) {
	r := newRig(t, nil, inWindow)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec, err := r.h.Handle(ctx, delivery(&fakeAcker{}, 1, body(t, "r-cancel", message.Info), nil))
	if err != nil || rec.Outcome != outcome.Sent {
		t.Fatalf("outcome %q err %v", rec.Outcome, err)
	}
	if r.send.ctxErr != nil {
		t.Errorf("send saw a cancelled ctx: %v", r.send.ctxErr)
	}
}

// TestHandleWithRealDecoderLogsNoRecipient: the debug line masks the
// recipient (checked in consumer tests); the handler's warn lines carry no
// recipient either.
func TestHandleLogsNoRecipient(t *testing.T) {
	r := newRig(t, nil, inWindow)
	r.send.err = sendErr(outcome.Unknown, "", errors.New("reset sending to "+testRecipient))
	r.pub.err = errors.New("publish to x: " + testRecipient)
	if _, err := r.h.Handle(context.Background(), delivery(&fakeAcker{}, 1, body(t, "r-log", message.Info), nil)); err != nil {
		t.Fatal(err)
	}
	if r.logBuf.Len() == 0 {
		t.Fatal("no log line for a requeued message")
	}
	if strings.Contains(r.logBuf.String(), testRecipient) {
		t.Errorf("log carries the recipient in clear: %s", r.logBuf)
	}
}

// BenchmarkHandleSent measures the worker's own cost per SENT message
// around the send: decode, window, two synced ledger writes (Begin before
// the send, Finish after), ack. The send itself is a fake.
func BenchmarkHandleSent(b *testing.B) {
	l, err := ledger.Open(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	h := NewHandler(HandlerConfig{
		Publisher: &fakePublisher{}, Sender: &fakeSender{res: vendorapi.Result{Code: "1000"}}, Ledger: l,
		Window: window.Default(), Clock: fixedClock{inWindow}, Names: names,
	})
	t := &testing.T{}
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = body(t, fmt.Sprintf("bench-%d", i), message.Info)
	}
	ack := &fakeAcker{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Handle(context.Background(), delivery(ack, uint64(i+1), bodies[i], nil)); err != nil {
			b.Fatal(err)
		}
	}
}
