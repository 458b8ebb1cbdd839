package worker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
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
