package fault

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestReportsValidate: server.reports is refused where the relay cannot
// follow the worker or the numbers make no sense, and accepted otherwise.
func TestReportsValidate(t *testing.T) {
	base := `name: r
description: d
tool: wiremock
fault: f
applies_to: {workers: [go], profiles: [alimtalk]}
server:
  reports: REPORTS
steps:
  - send: {count: 1}
expect: {outcomes: {SENT: 1}EXPECT}
`
	const left = ", unknown_left: 0"
	for name, tc := range map[string]struct {
		reports, extra, wantErr string
	}{
		"ok":                        {`{delay_ms: 500, drop_every: 2}`, left, ""},
		"negative delay":            {`{delay_ms: -1}`, left, "server.reports.delay_ms"},
		"negative drop":             {`{drop_every: -3}`, left, "server.reports.drop_every"},
		"with restart":              {`{delay_ms: 1}`, left, "restart_worker"},
		"settled, no reports":       {"", ", reports_settled: 1", "expect.reports_settled"},
		"all options":               {`{copies: 3, jitter_ms: 2000, interim: true, forge: true, pull: true, horizon: 5s, complete: false}`, ", unknown_left: 1, reports_forged: 1, settled_by: {pull: 1}", ""},
		"unknown_left unsaid":       {`{delay_ms: 1}`, "", "expect.unknown_left"},
		"complete, left > 0":        {`{complete: true}`, ", unknown_left: 1", "expect.unknown_left"},
		"bad settle source":         {`{delay_ms: 1}`, left + ", settled_by: {vendor: 1}", "expect.settled_by.vendor"},
		"forged, no forge":          {`{delay_ms: 1}`, left + ", reports_forged: 1", "expect.reports_forged"},
		"copies 11":                 {`{copies: 11}`, left, "server.reports.copies"},
		"negative jitter":           {`{jitter_ms: -1}`, left, "server.reports.jitter_ms"},
		"by source, no reports":     {"", ", settled_by: {report: 1}", "expect.settled_by"},
		"reports proxy, no reports": {"", "", "needs server.reports"},
	} {
		doc := strings.Replace(base, "REPORTS", tc.reports, 1)
		doc = strings.Replace(doc, "EXPECT", tc.extra, 1)
		if name == "reports proxy, no reports" {
			doc = strings.Replace(doc, "expect:", "  - toxic_add: {name: slow, type: latency, stream: upstream, proxy: reports, attributes: {latency: 100}}\nexpect:", 1)
		}
		if name == "with restart" {
			doc = strings.Replace(doc, "expect:", "  - restart_worker: {after: 1s}\nexpect:", 1)
		}
		if tc.reports == "" {
			doc = strings.Replace(doc, "server:\n  reports: \n", "", 1)
		}
		_, err := Parse("r.yaml", []byte(doc))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one naming %s", name, err, tc.wantErr)
		}
	}
}

// TestWorkerReports: server.reports.horizon and .complete override the
// profile's as the worker is given them (the negative control and
// reports-past-horizon depend on it); unset, the profile's JSON is given
// unchanged.
func TestWorkerReports(t *testing.T) {
	p, err := vendormock.LoadProfile(filepath.Join("..", "..", vendormock.DefaultProfileDir))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := workerReports(p.ReportsJSON, &ReportsRunSpec{DelayMS: 5}); err != nil || got != p.ReportsJSON {
		t.Errorf("no override: %q, %v; want the profile's %q", got, err, p.ReportsJSON)
	}
	no := false
	got, err := workerReports(p.ReportsJSON, &ReportsRunSpec{Horizon: Duration(4 * time.Second), Complete: &no})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := vendorapi.ParseReportSpec(got)
	if err != nil {
		t.Fatalf("the worker would refuse %s: %v", got, err)
	}
	if spec.HorizonDuration() != 4*time.Second || spec.Complete || spec.Push == nil || spec.Pull == nil {
		t.Errorf("overridden spec %+v: want horizon 4s, complete false, push and pull kept", spec)
	}
}
