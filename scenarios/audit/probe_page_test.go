package audit

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// TestProbeRows: the probes table shows each measure with its evidence
// and the stated value beside it; a probe that did not run says so and
// never shows a value (no "0 s").
func TestProbeRows(t *testing.T) {
	newAt := 8.05
	in := Inputs{Worker: "python-httpx", KeepaliveS: 75, Bench: []results.Result{{Worker: "python-httpx", RTTMS: 3}},
		Probes: &Probes{Date: "d",
			Idle:   &IdleMeasure{NginxIdleS: 110, GapsS: []float64{0, 1, 2, 4, 8}, Reuse: true, ReusedUpToS: 4.03, NewFromS: &newAt, Observations: []IdleObservation{{IdleS: 4.03, Reused: true}, {IdleS: 8.05}}},
			Errors: []string{"response probe: stack gone"}}}
	rows := probeRows(in)
	md := new(strings.Builder)
	probesMarkdown(md, rows)
	page := md.String()
	for _, want := range []string{
		"| idle timeout | between 4.03 s and 8.05 s",
		"| 5 s (httpx Limits keepalive_expiry=5.0 (workers/python/README.md)): agrees |",
		"4.03 s reused, 8.05 s new",
		"| POST replay | not run: response probe: stack gone |",
		"| response timeout | not run: response probe: stack gone |",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("probes table lacks %q:\n%s", want, page)
		}
	}
	if rows := probeRows(Inputs{Worker: "image:acme/w:1"}); rows[0].Measured != "not run in this audit" || rows[0].Stated != "nothing stated" {
		t.Errorf("no probes, unknown image: %+v", rows)
	}
}
