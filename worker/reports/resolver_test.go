package reports

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/prometheus/client_golang/prometheus"
)

var t0 = time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)

const minAge = 55 * time.Second

const specJSON = `{"push":{"auth":"hmac-sha256","header":"X-Report-Signature"},"pull":{"path":"/v3/report/{refkey}"},
"refkey_field":"refkey","result_field":"status","code_field":"code","delivered":["DELIVERED"],"failed":["FAILED"],
"unknown":["PENDING"],"horizon":"10m","complete":true}`

// moved records Copies.Settled calls.
type moved struct {
	mu    sync.Mutex
	calls []string
	err   error
}

func (m *moved) Settled(_ context.Context, refkey string, as outcome.Outcome) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, refkey+"="+string(as))
	return m.err
}

// memJournal keeps records in memory; err makes Keep fail.
type memJournal struct {
	recs []Record
	err  error
}

func (j *memJournal) Keep(_ context.Context, r Record) error {
	if j.err != nil {
		return j.err
	}
	j.recs = append(j.recs, r)
	return nil
}

type fixture struct {
	store   *ledgertest.Mem
	res     *Resolver
	copies  *moved
	journal *memJournal
	logs    *bytes.Buffer
	reg     *prometheus.Registry
}

func newFixture(t *testing.T, spec string) *fixture {
	t.Helper()
	s, err := vendorapi.ParseReportSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: ledgertest.NewMem(), copies: &moved{}, journal: &memJournal{}, logs: &bytes.Buffer{}, reg: prometheus.NewRegistry()}
	m, err := NewMetrics(f.reg)
	if err != nil {
		t.Fatal(err)
	}
	f.res = &Resolver{Store: f.store, Spec: s, Copies: f.copies, Journal: f.journal, MinAge: minAge,
		Log: slog.New(slog.NewTextHandler(f.logs, nil)), Metrics: m}
	return f
}

// unknown writes an UNKNOWN entry for refkey at t0.
func (f *fixture) unknown(t *testing.T, refkey string) ledger.Entry {
	t.Helper()
	ctx := context.Background()
	_, e, err := f.store.Begin(ctx, refkey, ledger.BodyHash([]byte(refkey)), t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.Finish(ctx, refkey, "", e.Attempts, outcome.Unknown, "response timeout", t0); err != nil {
		t.Fatal(err)
	}
	return f.get(t, refkey)
}

func (f *fixture) get(t *testing.T, refkey string) ledger.Entry {
	t.Helper()
	e, found, err := f.store.Get(context.Background(), refkey)
	if err != nil || !found {
		t.Fatalf("Get(%s) = %v, %v", refkey, found, err)
	}
	return e
}

func report(refkey, status, code string) vendorapi.Report {
	kind := map[string]vendorapi.ReportKind{"DELIVERED": vendorapi.ReportDelivered, "FAILED": vendorapi.ReportFailed, "PENDING": vendorapi.ReportPending}[status]
	return vendorapi.Report{RefKey: refkey, Result: status, Kind: kind, Code: code}
}

func (f *fixture) apply(t *testing.T, rep vendorapi.Report, source string, now time.Time, want Verdict) {
	t.Helper()
	v, err := f.res.Apply(context.Background(), rep, source, now)
	if err != nil || v != want {
		t.Fatalf("Apply(%+v, %s) = %q, %v; want %q", rep, source, v, err, want)
	}
}

func TestDeliveredSettlesUnknownAsSent(t *testing.T) {
	f := newFixture(t, specJSON)
	f.unknown(t, "k1")
	at := t0.Add(90 * time.Second)
	f.apply(t, report("k1", "DELIVERED", ""), ledger.SourceReport, at, Settled)
	e := f.get(t, "k1")
	if e.State != outcome.Sent || e.Resolution == nil || e.Resolution.Source != ledger.SourceReport || !e.Resolution.At.Equal(at) {
		t.Fatalf("entry = %+v (resolution %+v); want SENT settled by report at %s", e, e.Resolution, at)
	}
	if len(f.copies.calls) != 1 || f.copies.calls[0] != "k1=SENT" {
		t.Errorf("copies moved = %v; want [k1=SENT] (the copy in notifications.unknown acked away)", f.copies.calls)
	}
	if len(f.journal.recs) != 1 || f.journal.recs[0].Verdict != Settled || f.journal.recs[0].State != outcome.Sent {
		t.Errorf("journal = %+v; want one settled record", f.journal.recs)
	}
	// The same report again (the vendor retried its push): nothing more.
	f.apply(t, report("k1", "DELIVERED", ""), ledger.SourceReport, at.Add(time.Minute), AlreadyFinal)
	if again := f.get(t, "k1"); !again.UpdatedAt.Equal(at) || len(f.copies.calls) != 1 {
		t.Errorf("a duplicate report changed the entry (%+v) or moved the copy again (%v)", again, f.copies.calls)
	}
}

func TestFailedSettlesUnknownAsRejectedWithTheCode(t *testing.T) {
	f := newFixture(t, specJSON)
	f.unknown(t, "k1")
	f.apply(t, report("k1", "FAILED", "3015"), ledger.SourcePull, t0.Add(time.Minute), Settled)
	e := f.get(t, "k1")
	if e.State != outcome.Rejected || e.Detail != "3015" || e.Resolution.Code != "3015" || e.Resolution.Source != ledger.SourcePull {
		t.Fatalf("entry = %+v (resolution %+v); want REJECTED, detail 3015, source pull", e, e.Resolution)
	}
	if f.copies.calls[0] != "k1=REJECTED" {
		t.Errorf("copies moved = %v; want [k1=REJECTED]", f.copies.calls)
	}
}

func TestReportForAFinalEntryChangesNothing(t *testing.T) {
	for _, st := range []outcome.Outcome{outcome.Sent, outcome.Rejected, outcome.NotSent} {
		f := newFixture(t, specJSON)
		ctx := context.Background()
		_, e, _ := f.store.Begin(ctx, "k1", "", t0)
		if err := f.store.Finish(ctx, "k1", "", e.Attempts, st, "vendor", t0); err != nil {
			t.Fatal(err)
		}
		before := f.get(t, "k1")
		f.apply(t, report("k1", "FAILED", "9"), ledger.SourceReport, t0.Add(time.Hour), AlreadyFinal)
		if after := f.get(t, "k1"); ledgertest.Diff(after, before) != "" || after.Resolution != nil {
			t.Errorf("%s: a report changed the entry: %s", st, ledgertest.Diff(after, before))
		}
		if len(f.journal.recs) != 1 || f.journal.recs[0].Verdict != AlreadyFinal {
			t.Errorf("%s: journal = %+v; want the report recorded", st, f.journal.recs)
		}
		if len(f.copies.calls) != 0 {
			t.Errorf("%s: copies moved %v", st, f.copies.calls)
		}
		if st != outcome.Rejected && !bytes.Contains(f.logs.Bytes(), []byte("report contradicts a final entry")) {
			t.Errorf("%s: no log line for a contradicting report:\n%s", st, f.logs)
		}
	}
}

func TestReportForAnUnknownRefkeyIsKeptNotTrusted(t *testing.T) {
	f := newFixture(t, specJSON)
	f.apply(t, report("stranger", "DELIVERED", ""), ledger.SourceReport, t0, NoEntry)
	if _, found, _ := f.store.Get(context.Background(), "stranger"); found {
		t.Fatal("a report for a refkey the ledger does not know created an entry")
	}
	if len(f.journal.recs) != 1 || f.journal.recs[0].Report.RefKey != "stranger" || f.journal.recs[0].Verdict != NoEntry {
		t.Errorf("journal = %+v; want the report kept", f.journal.recs)
	}
	if !bytes.Contains(f.logs.Bytes(), []byte("refkey the ledger does not know")) {
		t.Errorf("no log line:\n%s", f.logs)
	}
}

// An interim report says the vendor has the message: an UNKNOWN entry is
// settled SENT (never re-sent), its copy acked away; a final result later
// is recorded as news, not as a contradiction. For a final entry, or an
// attempt that may still be finishing, it changes nothing.
func TestInterimReportSettlesSent(t *testing.T) {
	for _, source := range []string{ledger.SourcePull, ledger.SourceReport} {
		t.Run(source, func(t *testing.T) {
			f := newFixture(t, specJSON)
			f.unknown(t, "k1")
			f.apply(t, report("k1", "PENDING", ""), source, t0.Add(time.Minute), Settled)
			e := f.get(t, "k1")
			if e.State != outcome.Sent || e.Resolution == nil || e.Resolution.Source != source ||
				!strings.HasPrefix(e.Resolution.Why, InterimWhyPrefix) {
				t.Fatalf("entry = %+v (resolution %+v); want SENT by the interim report", e, e.Resolution)
			}
			if len(f.copies.calls) != 1 || f.copies.calls[0] != "k1=SENT" {
				t.Errorf("copies moved = %v; want [k1=SENT]", f.copies.calls)
			}
			f.apply(t, report("k1", "FAILED", "3015"), ledger.SourceReport, t0.Add(2*time.Minute), AlreadyFinal)
			if bytes.Contains(f.logs.Bytes(), []byte("report contradicts a final entry")) {
				t.Errorf("the final result after an interim settlement was logged as a contradiction:\n%s", f.logs)
			}
		})
	}
}

func TestInterimReportForAFinalOrYoungEntryChangesNothing(t *testing.T) {
	f := newFixture(t, specJSON)
	ctx := context.Background()
	_, e, _ := f.store.Begin(ctx, "final", "", t0)
	if err := f.store.Finish(ctx, "final", "", e.Attempts, outcome.Rejected, "3015", t0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.store.Begin(ctx, "young", "", t0); err != nil {
		t.Fatal(err)
	}
	before := map[string]ledger.Entry{"final": f.get(t, "final"), "young": f.get(t, "young")}
	f.apply(t, report("final", "PENDING", ""), ledger.SourceReport, t0.Add(time.Minute), Interim)
	f.apply(t, report("young", "PENDING", ""), ledger.SourceReport, t0.Add(minAge-time.Second), InFlight)
	if !f.res.holds("young") {
		t.Error("an interim report for a young attempt was not held for the next sweep")
	}
	for k, b := range before {
		if d := ledgertest.Diff(f.get(t, k), b); d != "" {
			t.Errorf("%s: an interim report changed the entry: %s", k, d)
		}
	}
	if len(f.copies.calls) != 0 {
		t.Errorf("copies moved = %v; want none", f.copies.calls)
	}
}

func TestAttemptingEntry(t *testing.T) {
	f := newFixture(t, specJSON)
	if _, _, err := f.store.Begin(context.Background(), "k1", "", t0); err != nil {
		t.Fatal(err)
	}
	// Its request may still be finishing: the attempt's own Finish decides.
	f.apply(t, report("k1", "DELIVERED", ""), ledger.SourceReport, t0.Add(minAge-time.Second), InFlight)
	if e := f.get(t, "k1"); e.State != ledger.Attempting {
		t.Fatalf("a young attempt was settled: %+v", e)
	}
	// A crash mid-send left it: the report settles it.
	f.apply(t, report("k1", "DELIVERED", ""), ledger.SourceReport, t0.Add(minAge), Settled)
	if e := f.get(t, "k1"); e.State != outcome.Sent {
		t.Fatalf("an old attempt was not settled: %+v", e)
	}
}

func TestApplyFailsWhenTheJournalCannotKeepIt(t *testing.T) {
	f := newFixture(t, specJSON)
	f.journal.err = errors.New("disk full")
	if _, err := f.res.Apply(context.Background(), report("x", "DELIVERED", ""), ledger.SourceReport, t0); err == nil {
		t.Fatal("Apply returned nil although the report was not kept")
	}
	if _, err := f.res.Apply(context.Background(), report("x", "DELIVERED", ""), ledger.SourceOperator, t0); err == nil {
		t.Fatal("Apply accepted an operator as a report source")
	}
}

func TestCopiesFailureKeepsTheSettlement(t *testing.T) {
	f := newFixture(t, specJSON)
	f.copies.err = errors.New("channel closed")
	f.unknown(t, "k1")
	f.apply(t, report("k1", "DELIVERED", ""), ledger.SourceReport, t0.Add(time.Minute), Settled)
	if e := f.get(t, "k1"); e.State != outcome.Sent {
		t.Fatalf("entry = %+v; want SENT", e)
	}
	if !bytes.Contains(f.logs.Bytes(), []byte("was not moved")) {
		t.Errorf("no log line for the unmoved copy:\n%s", f.logs)
	}
}
