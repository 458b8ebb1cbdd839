package audit

import (
	"strconv"
	"strings"
	"testing"
)

// burstSend is one send of a fixture: on nginx connection conn, its line
// at endMS (ms after 1000 s), lasting durMS.
type burstSend struct{ conn, endMS, durMS int }

// burstLines makes the nginx lines of a burst: an optional token call
// first (on tokenConn at 1000.000 s, 5 ms), then the sends in the given
// order, each connection's requests numbered from firstReq (1 = opened
// during the probe).
func burstLines(t *testing.T, tokenConn int, firstReq map[int]int, sends []burstSend) []string {
	t.Helper()
	next := map[int]int{}
	num := func(c int) int {
		if _, ok := next[c]; !ok {
			next[c] = max(firstReq[c], 1)
		}
		n := next[c]
		next[c]++
		return n
	}
	var lines []string
	if tokenConn > 0 {
		lines = append(lines, accessLine(1000.005, tokenConn, num(tokenConn), "POST", "/v1/token", 200, 0.005, ""))
	}
	for i, s := range sends {
		lines = append(lines, accessLine(1000+float64(s.endMS)/1000, s.conn, num(s.conn), "POST", send, 200, float64(s.durMS)/1000, "b"+strconv.Itoa(i)))
	}
	return lines
}

// pooledBurst: 20 sends, 8 at once for 300 ms on connections 1..8 (the
// token call on 1, which then carries sends): 3 waves of 8, 8 and 4.
func pooledBurst(conns int, perConn bool) []burstSend {
	var out []burstSend
	for i := range 20 {
		wave, slot := i/8, i%8
		c := 1 + slot%conns
		if perConn {
			c = 1 + i
		}
		out = append(out, burstSend{conn: c, endMS: 310 + wave*305 + slot, durMS: 300})
	}
	return out
}

func TestAnalyseBurstCountsConnectionsSendsAndTheTokenCall(t *testing.T) {
	m := AnalyseBurst(parseLines(t, burstLines(t, 1, nil, pooledBurst(8, false))...), send, "/v1/token")
	if m.Unknown != "" || m.Sends != 20 || m.SendConnections != 8 || m.NewConnections != 8 || m.PeakInFlight != 8 {
		t.Fatalf("pooled burst: %+v: want 20 sends on 8 new connections, 8 in flight", m)
	}
	if m.MaxPerConnection != 3 || m.TokenCalls != 1 || m.TokenShared != 1 || m.Connections[0].Token != 1 || m.Connections[0].Sends != 3 {
		t.Fatalf("pooled burst: %+v: want at most 3 sends a connection, the token call on #1 with 3 sends", m)
	}
	if v, why := m.Judge(); v != Pass {
		t.Errorf("pooled burst judged %s (%s), want PASS", v, why)
	}
	for _, want := range []string{"20 sends on 8 connection(s) (2-3 sends each), at most 8 in flight", "on a connection that then carried sends"} {
		if !strings.Contains(m.Measured(), want) {
			t.Errorf("Measured %q lacks %q", m.Measured(), want)
		}
	}
	if tr := m.Trail(); tr != "#1: 1 token + 3 send(s); #2 #3 #4: 3 send(s); #5 #6 #7 #8: 2 send(s)" {
		t.Errorf("Trail %q: want the connections by nginx's serial, the token call on #1", tr)
	}
}

// The planted client: a new connection per send at concurrency 8 (the Go
// worker's per-request strategy) fails; so does a pool that closes what
// it could keep (14 connections for 8 in flight: the idle pool smaller
// than the concurrency); a client that takes one message at a time on
// one kept connection passes, as does HTTP/2 on one connection.
func TestBurstJudgeCatchesAConnectionPerSendAndChurn(t *testing.T) {
	seq := make([]burstSend, 20)
	for i := range seq {
		seq[i] = burstSend{conn: 3, endMS: 305 * (i + 1), durMS: 300}
	}
	churn := pooledBurst(8, false)
	for i := 8; i < len(churn); i++ {
		churn[i].conn = 9 + (i-8)%6 // the later sends on 6 fresh connections
	}
	h2 := pooledBurst(1, false)
	cases := []struct {
		name    string
		token   int
		sends   []burstSend
		verdict string
		why     string
	}{
		{"per send", 30, pooledBurst(8, true), Fail, "a new connection per send under a burst: 20 connections for 20 sends"},
		{"churn", 1, churn, Fail, "14 connections for at most 8 sends in flight"},
		{"one at a time, kept", 3, seq, Pass, "1 connection(s) for at most 1 sends in flight"},
		{"http/2 one connection", 1, h2, Pass, "1 connection(s) for at most 8 sends in flight"},
	}
	for _, c := range cases {
		m := AnalyseBurst(parseLines(t, burstLines(t, c.token, nil, c.sends)...), send, "/v1/token")
		v, why := m.Judge()
		if v != c.verdict || !strings.Contains(why, c.why) {
			t.Errorf("%s: %s (%s); want %s with %q (measured %s)", c.name, v, why, c.verdict, c.why, m.Measured())
		}
	}
	per := AnalyseBurst(parseLines(t, burstLines(t, 30, nil, pooledBurst(8, true))...), send, "/v1/token")
	if per.TokenShared != 0 || !strings.Contains(per.Measured(), "a new connection per send") || !strings.Contains(per.Measured(), "on a connection of its own") {
		t.Errorf("per send: %s: want a new connection per send, the token call on its own connection", per.Measured())
	}
}

func TestBurstTooLittleIsNeverAPass(t *testing.T) {
	m := AnalyseBurst(parseLines(t, burstLines(t, 1, nil, []burstSend{{1, 310, 300}})...), send, "/v1/token")
	if m.Unknown == "" {
		t.Fatalf("one send: %+v: want unknown", m)
	}
	if v, _ := m.Judge(); v != Fail {
		t.Errorf("one send judged %s, want FAIL (not measured is never a pass)", v)
	}
	if r := burstRule(nil); r.Verdict != NA {
		t.Errorf("no probes: %s, want N/A", r.Verdict)
	}
	if r := burstRule(&Probes{Errors: []string{"burst probe: start probe worker burst: boom"}}); r.Verdict != NA || !strings.Contains(r.Evidence, "boom") {
		t.Errorf("probe that failed to run: %s (%s), want N/A naming the error", r.Verdict, r.Evidence)
	}
	// An HTTP/2 connection whose second stream is logged before its first
	// is still new.
	h2 := parseLines(t, accessLine(1000.300, 9, 2, "POST", send, 200, 0.3, "x"), accessLine(1000.301, 9, 1, "POST", send, 200, 0.3, "y"))
	if m := AnalyseBurst(h2, send, "/v1/token"); m.NewConnections != 1 || m.Connections[0].FirstRequest != 1 || m.PeakInFlight != 2 {
		t.Errorf("h2 streams logged out of order: %+v: want one new connection, 2 in flight", m)
	}
	// A connection opened before the probe says so in the trail.
	m = AnalyseBurst(parseLines(t, burstLines(t, 0, map[int]int{4: 7}, []burstSend{{4, 310, 300}, {4, 620, 300}})...), send, "/v1/token")
	if m.NewConnections != 0 || m.Trail() != "#4: 2 send(s) (from request 7)" || !strings.Contains(m.Measured(), "no token call seen") {
		t.Errorf("kept connection: %+v, trail %q, measured %q", m, m.Trail(), m.Measured())
	}
}

// The page shows the burst row with its evidence, and both replay lanes
// of a client that chose HTTP/2, or why the vendor-forced one did not run.
func TestProbeRowsShowBurstAndBothReplayLanes(t *testing.T) {
	b := AnalyseBurst(parseLines(t, burstLines(t, 1, nil, pooledBurst(8, false))...), send, "/v1/token")
	b.Published, b.DelayS = 20, 0.3
	p := &Probes{Burst: &b, Replay: &ReplayMeasure{Every: 2, Lanes: []ReplayLane{
		{Lane: LaneChoice, Resets: map[string]int{"HTTP/2": 2}, Keys: []ReplayKey{{RefKey: "k-2", Requests: 2, AgainAfterMS: 27}}, Replayed: []string{"k-2"}},
		{Lane: LaneVendorH1, Resets: map[string]int{"HTTP/1.1": 2}, Keys: []ReplayKey{{RefKey: "k-4", Requests: 1, AgainAfterMS: -1}}},
	}}}
	var md strings.Builder
	probesMarkdown(&md, probeRows(Inputs{Worker: "team/img:1", Probes: p}))
	page := md.String()
	for _, want := range []string{
		"| connections under a burst | 20 sends on 8 connection(s)",
		"20 messages published at once to the image (at its own concurrency), WireMock holding each send 0.3 s",
		"#1: 1 token + 3 send(s)",
		"| POST replay (the client's choice) |", "SENT AGAIN: k-2 2 times",
		"| POST replay (HTTP/1.1 (the vendor offers only http/1.1)) | 2 send(s) of 1 refkeys reset", "(ALPN http/1.1 only)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	p.Replay.Lanes, p.Replay.Skipped = p.Replay.Lanes[:1], LaneVendorH1+" not run: because"
	md.Reset()
	probesMarkdown(&md, probeRows(Inputs{Worker: "team/img:1", Probes: p}))
	if !strings.Contains(md.String(), "not run: because") {
		t.Errorf("a skipped lane is not on the page:\n%s", md.String())
	}
}
