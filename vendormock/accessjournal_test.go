package vendormock

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestAccessJournal: the vendor's record from nginx's log keeps what nginx
// passed to WireMock, with WireMock's (the last attempt's) status, and
// drops what nginx answered itself.
func TestAccessJournal(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "testdata", "vendormock", "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, err := ParseAccessLog(f)
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms int64) time.Time { return time.UnixMilli(ms) }
	want := []JournalEntry{
		{Method: "POST", Path: "/v1/token", Status: 200, LoggedAt: at(1764559215101)},
		{Method: "POST", Path: "/v1/token", Status: 401, LoggedAt: at(1764559215109)},
		{Method: "POST", Path: "/v3/message", RefKey: "it-2332f9df545d", Status: 200, LoggedAt: at(1764559215152)},
		{Method: "POST", Path: "/v3/message", RefKey: "rk-0002", Status: 200, LoggedAt: at(1764559216004)},
		{Method: "POST", Path: "/v3/message", RefKey: "rk-0003", Status: 502, LoggedAt: at(1764559216010)},
		{Method: "POST", Path: "/v3/message", RefKey: "rk-0004", Status: 504, LoggedAt: at(1764559276012)},
		// the GET nginx answered itself (no upstream) is not the vendor's
	}
	if got := AccessJournal(entries); !reflect.DeepEqual(got, want) {
		t.Errorf("AccessJournal:\n got %+v\nwant %+v", got, want)
	}

	// The last upstream attempt's status is WireMock's answer; nginx's own
	// stands when the upstream gave none.
	for _, tc := range []struct {
		upstream string
		nginx    int
		want     int
	}{{"502, 200", 200, 200}, {"200", 504, 200}, {"504 : 504", 504, 504}, {"-", 502, 502}, {"", 429, 0}} {
		e := AccessEntry{Method: "POST", Path: "/v3/message", RefKey: "k", Status: tc.nginx, UpstreamStatus: tc.upstream, UpstreamAddr: "172.18.0.3:8080"}
		if tc.upstream == "" {
			e.UpstreamAddr = ""
		}
		got := AccessJournal([]AccessEntry{e})
		switch {
		case tc.want == 0 && len(got) != 0:
			t.Errorf("upstream %q, nginx %d: %+v; want no entry (never passed to WireMock)", tc.upstream, tc.nginx, got)
		case tc.want != 0 && (len(got) != 1 || got[0].Status != tc.want):
			t.Errorf("upstream %q, nginx %d: %+v; want one entry with status %d", tc.upstream, tc.nginx, got, tc.want)
		}
	}
}
