package audit

import (
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/fault"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestFaultRuleSaysWhatWasMeasured: a TLS stall's rule names the
// journal during the stall and the worker's attempts (NOT_SENT before
// each SENT), not only where each message ended.
func TestFaultRuleSaysWhatWasMeasured(t *testing.T) {
	v := fault.Verdict{Name: "tls-stall-any-client", Tool: "toxiproxy", Pass: true, JournalCount: 3,
		Observed: map[outcome.Outcome]int{outcome.Sent: 3},
		Records:  map[outcome.Outcome]int{outcome.Sent: 3, outcome.NotSent: 5},
		Checks:   []fault.Check{{Step: 3, What: "journal sends so far", Want: "0", Got: 0, OK: true}}}
	r := faultRule(v)
	for _, want := range []string{"observed SENT 3; journal 3", "records (attempts) SENT 3, NOT_SENT 5", "steps[3] journal sends so far 0 (want 0)"} {
		if !strings.Contains(r.Evidence, want) {
			t.Errorf("evidence %q; want %q", r.Evidence, want)
		}
	}
	v.Records, v.Checks = v.Observed, nil
	if r := faultRule(v); strings.Contains(r.Evidence, "records (attempts)") {
		t.Errorf("records equal to the outcomes repeated: %q", r.Evidence)
	}
}

func TestStallEvidence(t *testing.T) {
	if got := stallEvidence(0, 3, 3, 12300*time.Millisecond); got != "measured: during the 10 s stall the journal had 0 of the 3 sends; all 3 sent (2xx in the journal) 12.3 s after the stall cleared" {
		t.Errorf("all sent: %q", got)
	}
	if got := stallEvidence(0, 1, 3, 90*time.Second); !strings.Contains(got, "1 of 3 sent within 90 s") {
		t.Errorf("one sent: %q", got)
	}
}
