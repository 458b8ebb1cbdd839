package fault

import (
	"strings"
	"testing"
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
	for name, tc := range map[string]struct {
		reports, extra, wantErr string
	}{
		"ok":                  {`{delay_ms: 500, drop_every: 2}`, "", ""},
		"negative delay":      {`{delay_ms: -1}`, "", "server.reports.delay_ms"},
		"negative drop":       {`{drop_every: -3}`, "", "server.reports.drop_every"},
		"with restart":        {`{delay_ms: 1}`, "", "restart_worker"},
		"settled, no reports": {"", ", reports_settled: 1", "expect.reports_settled"},
	} {
		doc := strings.Replace(base, "REPORTS", tc.reports, 1)
		doc = strings.Replace(doc, "EXPECT", tc.extra, 1)
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
