package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// accessLine is one line in the lab's nginx log_format (vendormock.LogFormat).
func accessLine(msec float64, conn, req int, method, uri string, status int, reqTime float64, refkey string) string {
	return fmt.Sprintf(`{"msec":"%.3f","connection":"%d","connection_requests":"%d","server_protocol":"HTTP/1.1","ssl_protocol":"TLSv1.3","ssl_session_reused":".","method":"%s","uri":"%s","status":"%d","request_time":"%.3f","upstream_addr":"172.18.0.3:8080","upstream_status":"%d","upstream_connect_time":"0.001","upstream_response_time":"%.3f","refkey":"%s"}`,
		msec, conn, req, method, uri, status, reqTime, status, reqTime, refkey)
}

func parseLines(t *testing.T, lines ...string) []vendormock.AccessEntry {
	t.Helper()
	es, err := vendormock.ParseAccessLog(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return es
}

const send = "/v3/message"

// A client with a 3 s idle timeout on the ladder 0, 1, 2, 4: reused
// after 0, 1 and 2 s, a new connection after 4 s: measured between 2 and
// 4 s, one gap step around the planted 3 s.
func TestAnalyseIdleBracketsThePlantedTimeout(t *testing.T) {
	es := parseLines(t,
		accessLine(1000.050, 5, 1, "POST", "/v1/token", 200, 0.010, ""),
		accessLine(1000.100, 5, 2, "POST", send, 200, 0.020, "k0"),
		accessLine(1000.160, 5, 3, "POST", send, 200, 0.020, "k1"), // gap 0
		accessLine(1001.200, 5, 4, "POST", send, 200, 0.020, "k2"), // gap 1 s
		accessLine(1003.250, 5, 5, "POST", send, 200, 0.020, "k3"), // gap 2 s
		accessLine(1007.300, 6, 1, "POST", send, 200, 0.020, "k4"), // gap 4 s: new
	)
	m := AnalyseIdle(es, send, []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second})
	if m.Unknown != "" || !m.Reuse {
		t.Fatalf("measure %+v: want measured with reuse", m)
	}
	if m.ReusedUpToS < 2 || m.ReusedUpToS > 2.1 || m.NewFromS == nil || *m.NewFromS < 4 || *m.NewFromS > 4.1 {
		t.Fatalf("measure (%v, %v]: want about (2, 4]", m.ReusedUpToS, derefOr(m.NewFromS, -1))
	}
	planted := 3.0
	if !(m.ReusedUpToS < planted && planted <= *m.NewFromS) {
		t.Errorf("planted %v s not within (%v, %v]", planted, m.ReusedUpToS, *m.NewFromS)
	}
	if got := m.Observations[3]; got.GapS != 4 || got.Reused || got.Connection != 6 {
		t.Errorf("last observation %+v: want gap 4, new connection 6", got)
	}
	if s := m.Measured(); !strings.HasPrefix(s, "between 2.03 s and 4.03 s") {
		t.Errorf("Measured() = %q", s)
	}
}

func TestAnalyseIdleNoReuseAndNone(t *testing.T) {
	perSend := parseLines(t,
		accessLine(1000.100, 1, 1, "POST", send, 200, 0.020, "k0"),
		accessLine(1000.300, 2, 1, "POST", send, 200, 0.020, "k1"),
	)
	m := AnalyseIdle(perSend, send, []time.Duration{0})
	if m.Reuse || m.Unknown != "" || !strings.HasPrefix(m.Measured(), "keeps no idle connection") {
		t.Errorf("a new connection per send: %+v, %q", m, m.Measured())
	}
	kept := parseLines(t,
		accessLine(1000.100, 1, 1, "POST", send, 200, 0.020, "k0"),
		accessLine(1080.200, 1, 2, "POST", send, 200, 0.020, "k1"),
	)
	m = AnalyseIdle(kept, send, []time.Duration{80 * time.Second})
	if !m.Reuse || m.NewFromS != nil || m.Measured() != "none up to 80.08 s (reused a connection idle 80.08 s)" {
		t.Errorf("kept 80 s: %+v, %q", m, m.Measured())
	}
	one := parseLines(t, accessLine(1000.100, 1, 1, "POST", send, 200, 0.020, "k0"))
	if m := AnalyseIdle(one, send, nil); m.Unknown == "" || !strings.HasPrefix(m.Measured(), "unknown") {
		t.Errorf("one send: %+v: want unknown, never 0", m)
	}
}

func TestIdleGaps(t *testing.T) {
	s := time.Second
	got := IdleGaps(75*s, nil)
	want := []time.Duration{0, s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 74500 * time.Millisecond, 80 * s}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("alimtalk ladder %v, want %v", got, want)
	}
	got = IdleGaps(5*s, nil)
	want = []time.Duration{0, s, 2 * s, 4 * s, 4500 * time.Millisecond, 10 * s}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sms ladder %v, want %v", got, want)
	}
	if _, err := ParseIdleLadder("1,x"); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("ParseIdleLadder(1,x) = %v: want an error naming x", err)
	}
	if l, err := ParseIdleLadder("0.5, 3"); err != nil || fmt.Sprint(l) != "[500ms 3s]" {
		t.Errorf("ParseIdleLadder = %v, %v", l, err)
	}
}

// TestNginxLatency: nginx's $request_time of a run's sends from its
// saved log slice (the token call left out); a run without a slice is
// "not seen", never 0.
func TestNginxLatency(t *testing.T) {
	dir := t.TempDir()
	lines := []string{accessLine(1000.05, 1, 1, "POST", "/v1/token", 200, 0.500, "")}
	for i := 1; i <= 100; i++ {
		lines = append(lines, accessLine(1000.1+float64(i), 1, i+1, "POST", send, 200, float64(i)/1000, "k"))
	}
	if err := os.MkdirAll(filepath.Join(dir, "nginx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nginx", "access-x.log"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p50, p99 := nginxLatency(dir, results.Result{AccessLog: "nginx/access-x.log"}, send)
	if p50 != 50 || p99 != 99 {
		t.Errorf("p50 %v p99 %v; want 50 and 99 ms", p50, p99)
	}
	if p50, _ := nginxLatency(dir, results.Result{}, send); msCell(p50) != "not seen" {
		t.Errorf("no slice: %v (%s); want not seen", p50, msCell(p50))
	}
}
