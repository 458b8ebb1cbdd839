package worker

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

const pushSpec = `{"push":{"auth":"hmac-sha256","header":"X-Report-Signature"},"refkey_field":"refkey","result_field":"status",
"delivered":["DELIVERED"],"failed":["FAILED"],"horizon":"10m","complete":true}`

func TestValidateReports(t *testing.T) {
	for name, c := range map[string]struct {
		mod  func(*Config)
		want string // "" = valid
	}{
		"no reports":          {func(*Config) {}, ""},
		"push with a secret":  {func(c *Config) { c.VendorReports, c.ReportSecretFile, c.OpsAddr = pushSpec, "/s", ":9090" }, ""},
		"push without secret": {func(c *Config) { c.VendorReports, c.OpsAddr = pushSpec, ":9090" }, "-report-secret-file"},
		"push with ops off":   {func(c *Config) { c.VendorReports, c.ReportSecretFile, c.OpsAddr = pushSpec, "/s", "" }, "-ops-addr"},
		"bad spec":            {func(c *Config) { c.VendorReports = `{"push":{}}` }, "invalid vendor report spec"},
	} {
		cfg := validConfig()
		c.mod(&cfg)
		err := cfg.WithDefaults().Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: Validate = %v; want %q", name, err, c.want)
		}
	}
}

// TestReportsOnTheOpsServer: with a pushing vendor, POST /reports on the
// ops handler settles an UNKNOWN entry, /metrics counts it, and a forged
// one is refused; /healthz is still served.
func TestReportsOnTheOpsServer(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	if err := os.WriteFile(secretFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := validConfig()
	cfg.VendorReports, cfg.ReportSecretFile, cfg.ReportJournal = pushSpec, secretFile, filepath.Join(dir, "reports.jsonl")
	cfg = cfg.WithDefaults()
	store := ledgertest.NewMem()
	ctx := context.Background()
	_, e, _ := store.Begin(ctx, "k1", "", time.Now().Add(-time.Hour))
	if err := store.Finish(ctx, "k1", "", e.Attempts, outcome.Unknown, "timeout", time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	m := NewMetrics()
	push, stop, err := startReports(ctx, cfg, store, nil, window.System{}, m, slog.New(slog.DiscardHandler))
	if err != nil || push == nil {
		t.Fatalf("startReports = %v, %v; want a push handler", push, err)
	}
	defer stop()
	var h health
	h.broker.Store(true)
	srv := httptest.NewServer(withReports(opsHandler(&h, store, m), push))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

	post := func(body, sig string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+ReportsPath, strings.NewReader(body))
		req.Header.Set("X-Report-Signature", sig)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	body := `{"refkey":"k1","status":"DELIVERED"}`
	if code := post(body, vendorapi.SignReport([]byte(body), []byte("wrong"))); code != http.StatusUnauthorized {
		t.Errorf("forged push = %d; want 401", code)
	}
	if e, _, _ := store.Get(ctx, "k1"); e.State != outcome.Unknown {
		t.Fatalf("a forged report changed the entry: %+v", e)
	}
	if code := post(body, vendorapi.SignReport([]byte(body), []byte("s3cret"))); code != http.StatusOK {
		t.Errorf("signed push = %d; want 200 (the secret file's trailing newline is not part of the secret)", code)
	}
	if e, _, _ := store.Get(ctx, "k1"); e.State != outcome.Sent || e.Resolution.Source != ledger.SourceReport {
		t.Errorf("entry = %+v; want SENT by report", e)
	}
	resp, err := client.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	scrape, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`notifier_worker_reports_refused_total{reason="forged"} 1`,
		`notifier_worker_reports_total{source="report",verdict="settled"} 1`} {
		if !strings.Contains(string(scrape), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if resp, err := client.Get(srv.URL + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz = %v, %v; want 200", resp, err)
	} else {
		resp.Body.Close()
	}
	if raw, _ := os.ReadFile(cfg.ReportJournal); strings.Count(string(raw), "\n") != 1 {
		t.Errorf("journal = %q; want the one authenticated report", raw)
	}
}

func TestNoReportsStartsNothing(t *testing.T) {
	push, stop, err := startReports(context.Background(), validConfig().WithDefaults(), ledgertest.NewMem(), nil, window.System{}, NewMetrics(), slog.New(slog.DiscardHandler))
	if err != nil || push != nil {
		t.Fatalf("startReports = %v, %v; want nothing", push, err)
	}
	stop()
}

// TestReportSweepReadsTheWorkersClock: the ledger's entries are stamped by
// the worker's clock (here started a year behind the host's, as
// -clock-start does), so the sweep must judge the horizon by that clock.
// Before, it read the host's wall clock: an UNKNOWN entry written just now
// looked a year old, and a complete push-only vendor's horizon settled it
// NOT_SENT at the first sweep (a second send of a message the vendor may
// have).
func TestReportSweepReadsTheWorkersClock(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	if err := os.WriteFile(secretFile, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := validConfig()
	cfg.VendorReports, cfg.ReportSecretFile = pushSpec, secretFile
	cfg.ReportSweep = 2 * time.Millisecond
	cfg = cfg.WithDefaults()
	clock := window.StartedAt(time.Now().AddDate(-1, 0, 0))
	store := ledgertest.NewMem()
	ctx := context.Background()
	_, e, _ := store.Begin(ctx, "k1", "", clock.Now())
	if err := store.Finish(ctx, "k1", "", e.Attempts, outcome.Unknown, "timeout", clock.Now()); err != nil {
		t.Fatal(err)
	}
	_, stop, err := startReports(ctx, cfg, store, nil, clock, NewMetrics(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond) // a dozen sweeps
	stop()
	if e, _, _ := store.Get(ctx, "k1"); e.State != outcome.Unknown {
		t.Errorf("entry = %s (resolution %+v); want UNKNOWN: by the worker's clock it is milliseconds old, inside the 10 min horizon", e.State, e.Resolution)
	}
}
