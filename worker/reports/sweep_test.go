package reports

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// pulls answers reports from a map.
type pulls map[string]vendorapi.Report

func (p pulls) Pull(_ context.Context, refkey string) (vendorapi.Report, bool, error) {
	r, ok := p[refkey]
	return r, ok, nil
}

func TestSweepPullSettles(t *testing.T) {
	f := newFixture(t, specJSON)
	f.unknown(t, "k1")
	f.unknown(t, "k2")
	s := &Sweeper{Resolver: f.res, Puller: pulls{"k1": report("k1", "DELIVERED", "")}}
	st, err := s.Sweep(context.Background(), t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if st.Unknown != 2 || st.Pulled != 1 || st.Settled != 1 || st.NotSent != 0 {
		t.Errorf("stats = %+v; want 2 unknown, 1 pulled and settled", st)
	}
	if e := f.get(t, "k1"); e.State != outcome.Sent || e.Resolution.Source != ledger.SourcePull {
		t.Errorf("k1 = %+v; want SENT from pull", e)
	}
	if e := f.get(t, "k2"); e.State != outcome.Unknown {
		t.Errorf("k2 = %+v; want UNKNOWN (no report, inside the horizon)", e)
	}
}

func TestHorizonCompleteVendorRetries(t *testing.T) {
	f := newFixture(t, specJSON)
	f.unknown(t, "k1")
	s := &Sweeper{Resolver: f.res, Puller: pulls{}}
	if st, _ := s.Sweep(context.Background(), t0.Add(10*time.Minute-time.Second)); st.NotSent != 0 {
		t.Fatalf("stats = %+v before the horizon; want nothing settled", st)
	}
	at := t0.Add(10 * time.Minute)
	st, err := s.Sweep(context.Background(), at)
	if err != nil || st.NotSent != 1 {
		t.Fatalf("stats = %+v, %v at the horizon; want 1 NOT_SENT", st, err)
	}
	e := f.get(t, "k1")
	if e.State != outcome.NotSent || e.Resolution.Source != ledger.SourceHorizon || !e.Resolution.At.Equal(at) {
		t.Fatalf("entry = %+v (%+v); want NOT_SENT from the horizon", e, e.Resolution)
	}
	if f.copies.calls[0] != "k1=NOT_SENT" {
		t.Errorf("copies moved = %v; want [k1=NOT_SENT]", f.copies.calls)
	}
	// The copy comes back: the ledger lets it be sent again.
	if d, _, _ := f.store.Begin(context.Background(), "k1", ledger.BodyHash([]byte("k1")), at.Add(time.Second)); d != ledger.Proceed {
		t.Errorf("Begin after the horizon = %s; want proceed (retried)", d)
	}
}

// TestHorizonIncompleteVendorLeavesUnknown is the negative control of the
// horizon rule: the same entry, the same time, a vendor whose reports are
// not complete: it stays UNKNOWN, with the reason logged once.
func TestHorizonIncompleteVendorLeavesUnknown(t *testing.T) {
	f := newFixture(t, strings.Replace(specJSON, `"complete":true`, `"complete":false`, 1))
	before := f.unknown(t, "k1")
	s := &Sweeper{Resolver: f.res, Puller: pulls{}}
	for i := range 2 {
		st, err := s.Sweep(context.Background(), t0.Add(time.Hour+time.Duration(i)*time.Minute))
		if err != nil || st.PastHorizon != 1 || st.NotSent != 0 {
			t.Fatalf("sweep %d: stats = %+v, %v; want 1 left for an operator", i, st, err)
		}
	}
	if e := f.get(t, "k1"); e.State != outcome.Unknown || !e.UpdatedAt.Equal(before.UpdatedAt) {
		t.Errorf("entry = %+v; want UNKNOWN, untouched", e)
	}
	if n := bytes.Count(f.logs.Bytes(), []byte("stays UNKNOWN for an operator")); n != 1 {
		t.Errorf("%d reason lines over two sweeps; want 1:\n%s", n, f.logs)
	}
	if got := scrape(t, f.reg, "notifier_worker_reports_past_horizon"); got != 1 {
		t.Errorf("past_horizon = %v; want 1", got)
	}
	if len(f.copies.calls) != 0 {
		t.Errorf("copies moved = %v; want none", f.copies.calls)
	}
}

func TestNoReportsNoHorizon(t *testing.T) {
	f := newFixture(t, specJSON)
	f.res.Spec = vendorapi.ReportSpec{}
	f.unknown(t, "k1")
	st, err := (&Sweeper{Resolver: f.res}).Sweep(context.Background(), t0.Add(1000*time.Hour))
	if err != nil || st.NotSent != 0 || st.PastHorizon != 0 {
		t.Errorf("stats = %+v, %v; a vendor with no reports settles nothing", st, err)
	}
}
