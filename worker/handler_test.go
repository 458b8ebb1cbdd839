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
			// The attempt may be live elsewhere: the ledger is left to it.
			wantOut: outcome.Unknown, wantQueue: names.Unknown, wantSent: 0, wantState: ledger.Attempting,
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
