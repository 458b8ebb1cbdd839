package reports

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

var secret = []byte("lab-report-secret")

func (f *fixture) push(t *testing.T, body string, sig string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/reports", strings.NewReader(body))
	if sig != "" {
		req.Header.Set("X-Report-Signature", sig)
	}
	w := httptest.NewRecorder()
	f.res.Handler(secret, func() time.Time { return t0.Add(time.Minute) }).ServeHTTP(w, req)
	return w
}

func (f *fixture) refused(t *testing.T, reason string) float64 {
	return scrape(t, f.reg, "notifier_worker_reports_refused_total", "reason", reason)
}

func TestPushedReportSettles(t *testing.T) {
	f := newFixture(t, specJSON)
	f.unknown(t, "k1")
	body := `{"refkey":"k1","status":"DELIVERED"}`
	w := f.push(t, body, vendorapi.SignReport([]byte(body), secret))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"settled"`) {
		t.Fatalf("push = %d %s; want 200 settled", w.Code, w.Body)
	}
	if e := f.get(t, "k1"); e.State != outcome.Sent || e.Resolution.Source != ledger.SourceReport {
		t.Errorf("entry = %+v; want SENT from a report", e)
	}
	if got := scrape(t, f.reg, "notifier_worker_reports_total", "source", ledger.SourceReport, "verdict", string(Settled)); got != 1 {
		t.Errorf("reports_total{report,settled} = %v; want 1", got)
	}
}

// TestForgedReportChangesNothing: a report whose signature does not match
// (another secret, a tampered body, none at all) is refused with 401, a
// log line and a count, and the ledger is exactly as before.
func TestForgedReportChangesNothing(t *testing.T) {
	f := newFixture(t, specJSON)
	before := f.unknown(t, "k1")
	real := `{"refkey":"k1","status":"FAILED","code":"1"}`
	forged := map[string]struct{ body, sig string }{
		"other secret": {real, vendorapi.SignReport([]byte(real), []byte("guessed"))},
		"tampered":     {`{"refkey":"k1","status":"DELIVERED"}`, vendorapi.SignReport([]byte(real), secret)},
		"unsigned":     {real, ""},
		"secret as is": {real, string(secret)},
	}
	for name, c := range forged {
		if w := f.push(t, c.body, c.sig); w.Code != http.StatusUnauthorized {
			t.Errorf("%s: push = %d; want 401", name, w.Code)
		}
	}
	if d := ledgertest.Diff(f.get(t, "k1"), before); d != "" || f.get(t, "k1").Resolution != nil {
		t.Errorf("a forged report changed the ledger: %s", d)
	}
	all, _ := f.store.List(context.Background(), "", 0)
	if len(all) != 1 {
		t.Errorf("ledger has %d entries; want the one it had", len(all))
	}
	if got := f.refused(t, RefusedForged); got != float64(len(forged)) {
		t.Errorf("refused_total{forged} = %v; want %d", got, len(forged))
	}
	if n := bytes.Count(f.logs.Bytes(), []byte("refused delivery report")); n != len(forged) {
		t.Errorf("%d refusal log lines; want %d:\n%s", n, len(forged), f.logs)
	}
	if bytes.Contains(f.logs.Bytes(), secret) {
		t.Error("a log line quotes the shared secret")
	}
	if len(f.journal.recs) != 0 || len(f.copies.calls) != 0 {
		t.Errorf("a forged report was kept (%v) or moved a copy (%v)", f.journal.recs, f.copies.calls)
	}
}

func TestMalformedReportIsRefused(t *testing.T) {
	f := newFixture(t, specJSON)
	before := f.unknown(t, "k1")
	for _, body := range []string{`not json`, `{"refkey":"k1","status":"ARRIVED"}`, `{"status":"DELIVERED"}`,
		`{"refkey":"k1","status":"DELIVERED","pad":"` + strings.Repeat("x", MaxReportBytes) + `"}`} {
		if w := f.push(t, body, vendorapi.SignReport([]byte(body), secret)); w.Code != http.StatusBadRequest {
			t.Errorf("push(%.40s) = %d; want 400", body, w.Code)
		}
	}
	if d := ledgertest.Diff(f.get(t, "k1"), before); d != "" {
		t.Errorf("a malformed report changed the ledger: %s", d)
	}
	if got := f.refused(t, RefusedMalformed); got != 4 {
		t.Errorf("refused_total{malformed} = %v; want 4", got)
	}
	if w := httptest.NewRecorder(); true {
		f.res.Handler(secret, nil).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/reports", nil))
		if w.Code != http.StatusMethodNotAllowed {
			t.Errorf("GET = %d; want 405", w.Code)
		}
	}
}

func TestUnrecordedReportAsksForAPushAgain(t *testing.T) {
	f := newFixture(t, specJSON)
	f.journal.err = context.DeadlineExceeded
	body := `{"refkey":"k1","status":"DELIVERED"}`
	if w := f.push(t, body, vendorapi.SignReport([]byte(body), secret)); w.Code != http.StatusServiceUnavailable {
		t.Errorf("push = %d; want 503 when the report could not be kept", w.Code)
	}
}

func TestPushForAnAttemptInFlightAsksForARetry(t *testing.T) {
	f := newFixture(t, specJSON)
	if _, _, err := f.store.Begin(context.Background(), "k1", "", t0.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	body := `{"refkey":"k1","status":"DELIVERED"}`
	w := f.push(t, body, vendorapi.SignReport([]byte(body), secret))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "55" || !strings.Contains(w.Body.String(), string(InFlight)) {
		t.Errorf("push = %d Retry-After %q %s; want 503, 55, in_flight", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if e := f.get(t, "k1"); e.State != ledger.Attempting {
		t.Errorf("entry = %+v; want ATTEMPTING, untouched", e)
	}
}
