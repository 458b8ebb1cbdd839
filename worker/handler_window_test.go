package worker

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// seoulAt is 2026-11-30 h:m:s in Asia/Seoul.
func seoulAt(h, m, s int) time.Time { return time.Date(2026, 11, 30, h, m, s, 0, seoul) }

// TestHandleWindowBoundaries: an ad is sent from 08:00:00 (inclusive) to
// 20:50:00 (exclusive) Asia/Seoul and held otherwise, until the next
// 08:00. A check moved by a second or a minute at either end fails here.
func TestHandleWindowBoundaries(t *testing.T) {
	nextMorning := time.Date(2026, 12, 1, 8, 0, 0, 0, seoul)
	for _, tc := range []struct {
		now      time.Time
		sent     bool
		heldTill time.Time
	}{
		{seoulAt(7, 59, 59), false, seoulAt(8, 0, 0)},
		{seoulAt(8, 0, 0), true, time.Time{}},
		{seoulAt(8, 0, 30), true, time.Time{}},
		{seoulAt(20, 49, 59), true, time.Time{}},
		{seoulAt(20, 50, 0), false, nextMorning},
		{seoulAt(20, 50, 30), false, nextMorning},
		{seoulAt(20, 51, 0), false, nextMorning},
		// The same instants seen from a UTC host clock.
		{seoulAt(20, 49, 59).UTC(), true, time.Time{}},
		{seoulAt(20, 50, 30).UTC(), false, nextMorning},
	} {
		t.Run(tc.now.Format("15:04:05 MST"), func(t *testing.T) {
			r := newRig(t, nil, tc.now)
			ack := &fakeAcker{}
			rec, err := r.h.Handle(context.Background(), delivery(ack, 1, body(t, "r-edge", message.Ad), nil))
			if err != nil {
				t.Fatal(err)
			}
			if tc.sent {
				if rec.Outcome != outcome.Sent || r.send.calls() != 1 {
					t.Errorf("outcome %q sends %d, want SENT once", rec.Outcome, r.send.calls())
				}
				return
			}
			if rec.Outcome != outcome.OutsideSendWindow || rec.Queue != names.Held || r.send.calls() != 0 {
				t.Fatalf("outcome %q queue %q sends %d, want held, not sent", rec.Outcome, rec.Queue, r.send.calls())
			}
			if !rec.HeldUntil.Equal(tc.heldTill) {
				t.Errorf("held until %v, want %v", rec.HeldUntil, tc.heldTill)
			}
			if want := fmt.Sprint(tc.heldTill.Sub(tc.now).Milliseconds()); r.pub.pubs[0].p.Expiration != want {
				t.Errorf("expiration %q ms, want %s", r.pub.pubs[0].p.Expiration, want)
			}
			if got := r.state(t, "r-edge"); got != "" {
				t.Errorf("ledger %q for an ad never attempted, want no entry", got)
			}
		})
	}
}

// TestWindowRecheckedBeforeSend: the window is open when the ad is taken
// (20:49:59) but Begin is slow and the clock passes 20:50 before the
// request: the ad is not sent, it is held until 08:00, and the ledger
// closes the attempt NOT_SENT so the held copy is sent in the morning.
// An info message in the same position is sent (the window is for ads).
func TestWindowRecheckedBeforeSend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cat   message.Category
		after time.Time
		sent  bool
	}{
		{"ad past 20:50 during begin", message.Ad, seoulAt(20, 50, 1), false},
		{"ad still 20:49:59 after begin", message.Ad, seoulAt(20, 49, 59), true},
		{"info past 20:50 during begin", message.Info, seoulAt(20, 50, 1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil, seoulAt(20, 49, 59))
			clk := &stepClock{t: seoulAt(20, 49, 59)}
			r.h.c.Clock = clk
			r.h.c.Ledger = hookLedger{ledgerGetter: r.led, beforeBegin: func(context.Context) error {
				clk.set(tc.after)
				return nil
			}}
			ack := &fakeAcker{}
			b := body(t, "r-late", tc.cat)
			rec, err := r.h.Handle(context.Background(), delivery(ack, 1, b, nil))
			if err != nil {
				t.Fatal(err)
			}
			if tc.sent {
				if rec.Outcome != outcome.Sent || r.send.calls() != 1 {
					t.Errorf("outcome %q sends %d, want SENT once", rec.Outcome, r.send.calls())
				}
				return
			}
			if r.send.calls() != 0 {
				t.Fatalf("ad sent at %s, after the window closed", tc.after.Format("15:04:05"))
			}
			if rec.Outcome != outcome.OutsideSendWindow || rec.Queue != names.Held || len(r.pub.pubs) != 1 {
				t.Fatalf("outcome %q queue %q copies %d, want held", rec.Outcome, rec.Queue, len(r.pub.pubs))
			}
			// The record names the reading the ad was held by, not the one
			// before Begin: a held record stamped 20:49:59 reads as a hold
			// inside the window (the send-window scenario's check).
			if !rec.Clock.Equal(tc.after) {
				t.Errorf("record clock %s, want %s (the re-check that held it)", rec.Clock.In(seoul).Format("15:04:05"), tc.after.Format("15:04:05"))
			}
			if acks, _ := ack.counts(); acks != 1 {
				t.Errorf("acks %d, want 1", acks)
			}
			if got := r.state(t, "r-late"); got != outcome.NotSent {
				t.Errorf("ledger %q, want %q (nothing left the worker)", got, outcome.NotSent)
			}
			// The held copy comes back at 08:00 and is sent once.
			clk.set(time.Date(2026, 12, 1, 8, 0, 0, 0, seoul))
			r.h.c.Ledger = r.led
			rec2, err := r.h.Handle(context.Background(), delivery(ack, 2, r.pub.pubs[0].p.Body, r.pub.pubs[0].p.Headers))
			if err != nil || rec2.Outcome != outcome.Sent || r.send.calls() != 1 {
				t.Errorf("morning: outcome %q err %v sends %d, want SENT once", rec2.Outcome, err, r.send.calls())
			}
		})
	}
}

// callVendor is a plain-HTTP vendor for a real vendorapi.Client: onToken
// and onMessage run with each call's number (from 1) before it answers;
// onMessage returning a status other than 0 answers that status instead
// of success.
type callVendor struct {
	srv              *httptest.Server
	tokens, messages atomic.Int64
	onToken          func(n int64)
	onMessage        func(n int64) int
}

func startCallVendor(t *testing.T, v *callVendor) *vendorapi.Client {
	t.Helper()
	v.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case vendorapi.TokenPath:
			n := v.tokens.Add(1)
			if v.onToken != nil {
				v.onToken(n)
			}
			fmt.Fprintf(w, `{"accesstoken":"tok-%d","type":"Bearer","expired":%q}`, n, time.Now().Add(time.Hour).Format(time.RFC3339))
		case vendorapi.MessagePath:
			n := v.messages.Add(1)
			if v.onMessage != nil {
				if status := v.onMessage(n); status != 0 {
					w.WriteHeader(status)
					fmt.Fprintf(w, `{"code":"%d","description":"refused"}`, status)
					return
				}
			}
			fmt.Fprintf(w, `{"code":"1000","description":"success","messagekey":"mk-%d"}`, n)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(v.srv.Close)
	c := vendorapi.NewClient(v.srv.URL, vendorapi.Credentials{ClientID: "lab", ClientSecret: "s"},
		vendorapi.NewPooled(vendorapi.Config{ResponseTimeout: 5 * time.Second}))
	t.Cleanup(func() { c.Close() })
	return c
}

// TestWindowRecheckedInsideSend: the window is open when the handler's
// last look passes (20:49:59), but inside the vendor call the clock
// crosses 20:50 before the message POST: during the token call, or during
// the token refetch after a 401 on the first POST. The ad's POST is not
// made (the vendor sees none, or only the one answered 401): it is held
// until 08:00 as OUTSIDE_SEND_WINDOW, its attempt closed NOT_SENT, and the
// held copy is sent once in the morning. An info message in the same
// position is sent (the window is for ads), and an ad whose token call
// ends before 20:50 is sent too.
func TestWindowRecheckedInsideSend(t *testing.T) {
	unauthorizedFirst := func(n int64) int {
		if n == 1 {
			return http.StatusUnauthorized
		}
		return 0
	}
	for _, tc := range []struct {
		name       string
		cat        message.Category
		crossOn    int64             // the token call during which the clock moves
		after      time.Time         // where it moves to
		onMessage  func(n int64) int // nil: every POST succeeds
		sent       bool
		wantPosts  int64 // message POSTs the vendor saw
		wantTokens int64
	}{
		{"ad, token call crosses 20:50", message.Ad, 1, seoulAt(20, 50, 1), nil, false, 0, 1},
		{"ad, refetch after 401 crosses 20:50", message.Ad, 2, seoulAt(20, 50, 1), unauthorizedFirst, false, 1, 2},
		{"ad, token call ends 20:49:59", message.Ad, 1, seoulAt(20, 49, 59), nil, true, 1, 1},
		{"info, token call crosses 20:50", message.Info, 1, seoulAt(20, 50, 1), nil, true, 1, 1},
		{"info, refetch after 401 crosses 20:50", message.Info, 2, seoulAt(20, 50, 1), unauthorizedFirst, true, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil, seoulAt(20, 49, 59))
			clk := &stepClock{t: seoulAt(20, 49, 59)}
			r.h.c.Clock = clk
			v := &callVendor{onMessage: tc.onMessage, onToken: func(n int64) {
				if n == tc.crossOn {
					clk.set(tc.after)
				}
			}}
			r.h.c.Sender = startCallVendor(t, v)
			ack := &fakeAcker{}
			rec, err := r.h.Handle(context.Background(), delivery(ack, 1, body(t, "r-call", tc.cat), nil))
			if err != nil {
				t.Fatal(err)
			}
			if posts, tokens := v.messages.Load(), v.tokens.Load(); posts != tc.wantPosts || tokens != tc.wantTokens {
				t.Errorf("vendor saw %d message POSTs and %d token calls, want %d and %d", posts, tokens, tc.wantPosts, tc.wantTokens)
			}
			if tc.sent {
				if rec.Outcome != outcome.Sent || r.state(t, "r-call") != outcome.Sent {
					t.Errorf("outcome %q ledger %q error %q, want SENT", rec.Outcome, r.state(t, "r-call"), rec.Error)
				}
				return
			}
			if rec.Outcome != outcome.OutsideSendWindow || rec.Queue != names.Held || len(r.pub.pubs) != 1 || r.pub.pubs[0].queue != names.Held {
				t.Fatalf("outcome %q queue %q copies %d error %q, want held (POSTed at %s, after the window closed)",
					rec.Outcome, rec.Queue, len(r.pub.pubs), rec.Error, tc.after.Format("15:04:05"))
			}
			nextMorning := time.Date(2026, 12, 1, 8, 0, 0, 0, seoul)
			if !rec.HeldUntil.Equal(nextMorning) || !rec.Clock.Equal(tc.after) {
				t.Errorf("held until %v by the reading %v, want %v by %v", rec.HeldUntil, rec.Clock, nextMorning, tc.after)
			}
			if want := fmt.Sprint(nextMorning.Sub(tc.after).Milliseconds()); r.pub.pubs[0].p.Expiration != want {
				t.Errorf("expiration %q ms, want %s", r.pub.pubs[0].p.Expiration, want)
			}
			if acks, nacks := ack.counts(); acks != 1 || nacks != 0 {
				t.Errorf("acks %d nacks %d, want 1 ack", acks, nacks)
			}
			if got := r.state(t, "r-call"); got != outcome.NotSent {
				t.Errorf("ledger %q, want %q (no POST of it was processed)", got, outcome.NotSent)
			}
			// The held copy comes back at 08:00 and is sent once.
			clk.set(nextMorning)
			rec2, err := r.h.Handle(context.Background(), delivery(ack, 2, r.pub.pubs[0].p.Body, r.pub.pubs[0].p.Headers))
			if err != nil || rec2.Outcome != outcome.Sent || v.messages.Load() != tc.wantPosts+1 {
				t.Errorf("morning: outcome %q err %v POSTs %d, want SENT with one more POST", rec2.Outcome, err, v.messages.Load())
			}
		})
	}
}

// A worker frozen inside the vendor call (here: during the token call) past
// PostFence does not POST: a report or the horizon may have settled its
// attempt meanwhile (the sweep settles an ATTEMPTING entry once it is older
// than the worst-case send time) and a copy been sent. The message is
// NOT_SENT (nothing of it was processed) and goes to the retry queue.
// gate's SendFence alone did not see it: its check is before the call.
func TestPostFenceInsideSend(t *testing.T) {
	for _, tc := range []struct {
		name      string
		frozen    time.Duration // how far the clock moves during the token call
		sent      bool
		wantPosts int64
	}{
		{"frozen past the POST fence", 36 * time.Second, false, 0},
		{"slow token call inside the fence (control)", 30 * time.Second, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := seoulAt(12, 0, 0)
			r := newRig(t, nil, start)
			clk := &stepClock{t: start}
			r.h.c.Clock = clk
			r.h.c.PostFence = 35 * time.Second
			v := &callVendor{onToken: func(int64) { clk.set(start.Add(tc.frozen)) }}
			r.h.c.Sender = startCallVendor(t, v)
			ack := &fakeAcker{}
			rec, err := r.h.Handle(context.Background(), delivery(ack, 1, body(t, "r-frozen", message.Info), nil))
			if err != nil {
				t.Fatal(err)
			}
			if got := v.messages.Load(); got != tc.wantPosts {
				t.Errorf("vendor saw %d message POSTs; want %d", got, tc.wantPosts)
			}
			if tc.sent {
				if rec.Outcome != outcome.Sent {
					t.Errorf("outcome %q error %q; want SENT", rec.Outcome, rec.Error)
				}
				return
			}
			if rec.Outcome != outcome.NotSent || rec.Queue != names.Retry || r.state(t, "r-frozen") != outcome.NotSent {
				t.Errorf("outcome %q queue %q ledger %q error %q; want NOT_SENT to the retry queue",
					rec.Outcome, rec.Queue, r.state(t, "r-frozen"), rec.Error)
			}
			if !strings.Contains(rec.Error, "POST fence") {
				t.Errorf("error %q does not name the POST fence", rec.Error)
			}
		})
	}
}
