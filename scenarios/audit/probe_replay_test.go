package audit

import (
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// proxyLog is the stream-reset proxy's output for two resets, in the
// format vendormock/streamreset writes.
const proxyLog = `streamreset: 10:00:00.000001 listening on [::]:443, upstream nginx:443, reset every 2 POST on /v3/message
streamreset: 10:00:01.000001 reset HTTP/1.1 POST /v3/message #2 (x-refkey "p-1-replay0-2") with a TCP reset, no answer, after upstream 200; resets so far 1
streamreset: 10:00:02.000001 reset HTTP/2 POST /v3/message #4 (x-refkey "p-1-replay1-2") with PROTOCOL_ERROR after upstream 200; resets so far 2
`

func TestCountResets(t *testing.T) {
	all := CountResets(proxyLog, "")
	if all["HTTP/1.1"] != 1 || all["HTTP/2"] != 1 {
		t.Errorf("CountResets = %v: want one of each", all)
	}
	if got := CountResets(proxyLog, "p-1-replay1-"); got["HTTP/2"] != 1 || got["HTTP/1.1"] != 0 {
		t.Errorf("CountResets(prefix) = %v", got)
	}
}

// A planted replaying client: the reset send reached the vendor twice
// 3 ms apart (a transport's own replay); the probe names it, with the
// gap, and a client that did not replay reads "none sent again".
func TestAnalyseReplayCatchesAReplayingClient(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	j := []vendormock.JournalEntry{
		{Method: "POST", Path: "/v1/token", Status: 200, LoggedAt: t0},
		{Method: "POST", Path: send, RefKey: "p-1-replay0-1", Status: 200, LoggedAt: t0.Add(10 * time.Millisecond)},
		{Method: "POST", Path: send, RefKey: "p-1-replay0-2", Status: 200, LoggedAt: t0.Add(100 * time.Millisecond)},
		{Method: "POST", Path: send, RefKey: "p-1-replay0-2", Status: 200, LoggedAt: t0.Add(103 * time.Millisecond)},
		{Method: "POST", Path: send, RefKey: "p-1-replay0-3", Status: 200, LoggedAt: t0.Add(200 * time.Millisecond)},
	}
	keys := []string{"p-1-replay0-1", "p-1-replay0-2", "p-1-replay0-3"}
	ks, replayed := AnalyseReplay(j, send, keys)
	if len(replayed) != 1 || replayed[0] != "p-1-replay0-2" {
		t.Fatalf("replayed %v: want p-1-replay0-2", replayed)
	}
	if ks[1].Requests != 2 || ks[1].AgainAfterMS != 3 {
		t.Errorf("key %+v: want 2 requests, again after 3 ms", ks[1])
	}
	lane := ReplayLane{Lane: "HTTP/2 offered", Resets: map[string]int{"HTTP/2": 1}, Keys: ks, Replayed: replayed}
	if s := lane.Measured(); !strings.Contains(s, "SENT AGAIN: p-1-replay0-2 2 times, again after 3 ms") {
		t.Errorf("Measured() = %q", s)
	}
	ks, replayed = AnalyseReplay(j[:3], send, keys[:2])
	lane = ReplayLane{Lane: "HTTP/1.1", Resets: map[string]int{"HTTP/1.1": 1}, Keys: ks, Replayed: replayed}
	if len(replayed) != 0 || !strings.HasSuffix(lane.Measured(), "none sent again (journal: 1 request each)") {
		t.Errorf("no replay: %v, %q", replayed, lane.Measured())
	}
	if s := (ReplayLane{Lane: "x", Unknown: "the proxy reset none of its sends: nothing provoked"}).Measured(); !strings.Contains(s, "unknown") {
		t.Errorf("unprovoked lane reads %q: want unknown", s)
	}
}

// TestAnalyseFacts: TLS, ALPN, resumption, headers and the token call's
// connection from nginx lines; a log without the ALPN and header fields
// says "not seen" for them.
func TestAnalyseFacts(t *testing.T) {
	line := func(msec float64, conn, req int, path, alpn, connHdr, idem string, resumed bool) string {
		l := accessLine(msec, conn, req, "POST", path, 200, 0.02, "k")
		r := "."
		if resumed {
			r = "r"
		}
		l = strings.Replace(l, `"ssl_session_reused":"."`, `"ssl_session_reused":"`+r+`"`, 1)
		return strings.TrimSuffix(l, "}") + `,"ssl_alpn":"` + alpn + `","http_connection":"` + connHdr + `","idempotency_key":"` + idem + `"}`
	}
	es := parseLines(t,
		line(1000.0, 1, 1, "/v1/token", "http/1.1", "keep-alive", "", false),
		line(1000.1, 1, 2, send, "http/1.1", "keep-alive", "ik", false),
		line(1010.1, 2, 1, send, "http/1.1", "", "", true),
	)
	f := AnalyseFacts(es, send)
	if f.Sends != 2 || f.Connections != 2 || f.Resumed != 1 || f.LaterNew != 1 || f.Idempotency != 1 || f.TokenShared != 1 || !f.Logged {
		t.Errorf("facts %+v", f)
	}
	if s := f.String(); !strings.Contains(s, "ALPN http/1.1 2") || !strings.Contains(s, "resumed on 1 of 1") || !strings.Contains(s, "Connection header none 1, keep-alive 1") {
		t.Errorf("String() = %q", s)
	}
	old := AnalyseFacts(parseLines(t, accessLine(1000.1, 1, 1, "POST", send, 200, 0.02, "k")), send)
	if s := old.String(); !strings.Contains(s, "ALPN and headers not seen") || !strings.Contains(s, "session resumption not seen") {
		t.Errorf("old log: %q", s)
	}
}
