package audit

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestAdapterStatedIdleTimeoutIsReadAndChecked(t *testing.T) {
	for _, c := range []struct {
		block string
		want  Stated
	}{
		{"stated: {idle_timeout: 90s, source: resty createTransport}", Stated{Known: true, Reuse: true, S: 90, Source: "the adapter file: resty createTransport"}},
		{"stated: {idle_timeout: none}", Stated{Known: true, Reuse: true, S: math.Inf(1), Source: "the adapter file"}},
		{"stated: {idle_timeout: no-reuse}", Stated{Known: true, Source: "the adapter file"}},
	} {
		a, err := ParseAdapter([]byte(goodAdapter + c.block + "\n"))
		if err != nil {
			t.Fatalf("%s: %v", c.block, err)
		}
		got := statedFor(Inputs{Worker: "team/img:1", Probes: &Probes{StatedIdle: a.StatedIdle()}}, firstRun(Inputs{}))
		if got != c.want {
			t.Errorf("%s: stated %+v, want %+v", c.block, got, c.want)
		}
	}
	a, err := ParseAdapter([]byte(goodAdapter))
	if err != nil || a.StatedIdle() != nil {
		t.Fatalf("no stated block: %v, %+v; want nil", err, a.StatedIdle())
	}
	if s := statedFor(Inputs{Worker: "team/img:1", Probes: &Probes{}}, firstRun(Inputs{})); s.Known {
		t.Errorf("nothing stated for an unknown image: %+v", s)
	}
	for _, bad := range []string{"stated: {idle_timeout: \"90\"}", "stated: {idle_timeout: -1s}", "stated: {idle_timeout: forever}",
		"stated: {idle_timeout: 48h}", "stated: {source: README}", "stated: {idle: 90s}"} {
		_, err := ParseAdapter([]byte(goodAdapter + bad + "\n"))
		if !errors.Is(err, ErrAdapter) || !strings.Contains(err.Error(), "stated") && !strings.Contains(err.Error(), "idle") {
			t.Errorf("%s: err %v, want ErrAdapter naming the stated field", bad, err)
		}
	}
}

// The rule judges the measure only: a client that reused a connection
// idle 80 s fails against a 75 s keep-alive whatever the team states,
// and a stated value the measure contradicts is flagged on the rule and
// on the page, never judged.
func TestStatedIdleIsShownFlaggedNeverJudged(t *testing.T) {
	newFrom := 4.0
	for _, c := range []struct {
		stated, verdict, flag string
		m                     IdleMeasure
	}{
		{"3s", Fail, "DISAGREES", IdleMeasure{Reuse: true, ReusedUpToS: 80}},
		{"90s", Fail, "agrees", IdleMeasure{Reuse: true, ReusedUpToS: 80}},
		{"none", Pass, "DISAGREES", IdleMeasure{Reuse: true, ReusedUpToS: 2, NewFromS: &newFrom}},
		{"3s", Pass, "agrees", IdleMeasure{Reuse: true, ReusedUpToS: 2, NewFromS: &newFrom}},
		{"no-reuse", Pass, "DISAGREES", IdleMeasure{Reuse: true, ReusedUpToS: 2, NewFromS: &newFrom}},
	} {
		m := c.m
		p := &Probes{Idle: &m, StatedIdle: &AdapterStated{IdleTimeout: c.stated, Source: "team README"}}
		r := ruleByID(t, blackBoxProbeRules(p, "team/img:1", 75e9), "idle-timeout")
		if r.Verdict != c.verdict || !strings.Contains(r.Evidence, "stated: ") || !strings.Contains(r.Evidence, c.flag) || !strings.Contains(r.Evidence, "team README") {
			t.Errorf("stated %s, measured %s: %s (%s); want %s with %q", c.stated, m.Measured(), r.Verdict, r.Evidence, c.verdict, c.flag)
		}
		rows := probeRows(Inputs{Worker: "team/img:1", Probes: p})
		if rows[0].Probe != "idle timeout" || !strings.Contains(rows[0].Stated, c.flag) {
			t.Errorf("stated %s: page row %+v, want the stated value flagged %q", c.stated, rows[0], c.flag)
		}
	}
}
