package fault

import (
	"strings"
	"testing"
	"time"
)

// TestApplySettle: unknown_left and settled_by fail a scenario when the
// end differs (the negative control: one copy still in the unknown queue
// of a scenario that says 0), and pass it when equal.
func TestApplySettle(t *testing.T) {
	zero, three := Count{}, Count{Min: 3, Max: 3}
	e := Expect{UnknownLeft: &zero, SettledBy: map[string]Count{"report": three}, SettledAfter: Duration(2 * time.Second)}
	ok := settleMeasures{SettledBy: map[string]int{"report": 3}, TimeToSettle: &SettleTimes{N: 3, MinMS: 2100}}
	v := Verdict{Pass: true}
	applySettle(&v, e, ok)
	if !v.Pass || len(v.Failures) > 0 {
		t.Errorf("equal end: pass %t failures %v", v.Pass, v.Failures)
	}
	for name, tc := range map[string]struct {
		m    settleMeasures
		want string
	}{
		"a copy left in the unknown queue": {settleMeasures{UnknownLeft: 1, SettledBy: map[string]int{"report": 3}}, "UNKNOWN left for an operator: 1, want 0"},
		"settled by the horizon too":       {settleMeasures{SettledBy: map[string]int{"report": 3, "horizon": 1}}, "settled by horizon: 1, want none"},
		"fewer by report":                  {settleMeasures{SettledBy: map[string]int{"report": 2}}, "settled by report: 2, want 3"},
		"settled sooner than the delay": {settleMeasures{SettledBy: map[string]int{"report": 3}, TimeToSettle: &SettleTimes{N: 3, MinMS: 900}},
			"time to settle: min 900 ms, want every settlement by report at least 2s"},
	} {
		v := Verdict{Pass: true}
		applySettle(&v, e, tc.m)
		if v.Pass || !strings.Contains(strings.Join(v.Failures, "; "), tc.want) {
			t.Errorf("%s: pass %t failures %v, want a failure %q", name, v.Pass, v.Failures, tc.want)
		}
	}
}
