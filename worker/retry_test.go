package worker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

func TestRetryDelay(t *testing.T) {
	tests := []struct {
		name                 string
		def, after, maxDelay time.Duration
		want                 time.Duration
	}{
		{"no Retry-After", 5 * time.Second, 0, 5 * time.Minute, 5 * time.Second},
		{"longer Retry-After honoured", 5 * time.Second, 30 * time.Second, 5 * time.Minute, 30 * time.Second},
		{"shorter Retry-After: own delay", 5 * time.Second, time.Second, 5 * time.Minute, 5 * time.Second},
		{"bounded", 5 * time.Second, time.Hour, 5 * time.Minute, 5 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RetryDelay(tt.def, tt.after, tt.maxDelay); got != tt.want {
				t.Errorf("RetryDelay(%v, %v, %v) = %v, want %v", tt.def, tt.after, tt.maxDelay, got, tt.want)
			}
		})
	}
}

// TestHandleRetryExpiration: a NOT_SENT message goes to the retry queue
// with its own expiration (the retry queue's x-message-ttl is only a cap):
// the vendor's Retry-After (bounded), else the worker's retry delay. The
// record names the replica.
func TestHandleRetryExpiration(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter time.Duration
		wantExp    string
		wantReason string
	}{
		{"default delay", 0, "2000", "retry in 2s"},
		{"Retry-After", 7 * time.Second, "7000", "vendor Retry-After 7s"},
		{"Retry-After bounded", time.Hour, "60000", "retry in 1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil, inWindow)
			r.h = NewHandler(HandlerConfig{
				Publisher: r.pub, Sender: r.send, Ledger: r.led, Window: r.h.c.Window, Clock: r.h.c.Clock,
				Names: names, MaxAttempts: 5, RetryDelay: 2 * time.Second, RetryMaxDelay: time.Minute,
				Replica: "replica-a",
			})
			r.send.err = &vendorapi.SendError{Class: outcome.NotSent, Op: "send", Code: "429", RetryAfter: tt.retryAfter,
				Err: errors.New("http status 429")}
			ack := &fakeAcker{}
			rec, err := r.h.Handle(context.Background(), delivery(ack, 1, body(t, "rl-1", message.Info), nil))
			if err != nil {
				t.Fatal(err)
			}
			if rec.Outcome != outcome.NotSent || rec.Queue != names.Retry || rec.Replica != "replica-a" {
				t.Fatalf("record %+v, want NOT_SENT to %s by replica-a", rec, names.Retry)
			}
			if len(r.pub.pubs) != 1 {
				t.Fatalf("%d re-publishes, want 1", len(r.pub.pubs))
			}
			p := r.pub.pubs[0].p
			if p.Expiration != tt.wantExp {
				t.Errorf("expiration %q, want %q", p.Expiration, tt.wantExp)
			}
			if reason, _ := p.Headers[queues.HeaderReason].(string); !strings.Contains(reason, tt.wantReason) {
				t.Errorf("reason %q lacks %q", reason, tt.wantReason)
			}
		})
	}
}
