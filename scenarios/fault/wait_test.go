package fault

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestWaitCondString: a wait step that timed out says what it waited for
// in the lab's count wording, never in Go map syntax (issue 16: audit
// evidence read "outcomes>=map[SENT:200]").
func TestWaitCondString(t *testing.T) {
	c := waitCond{records: 3, outcomes: map[outcome.Outcome]int{outcome.Unknown: 1, outcome.Sent: 200}, journal: 2}
	got := c.String()
	if want := "records>=3, SENT>=200, UNKNOWN>=1, journal>=2"; got != want {
		t.Errorf("waitCond.String() = %q; want %q", got, want)
	}
	if strings.Contains(got, "map[") {
		t.Errorf("%q has Go map syntax", got)
	}
	if got := (waitCond{}).String(); got != "records>=0, journal>=0" {
		t.Errorf("empty waitCond = %q", got)
	}
}
