package vendormock

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLogFormat(t *testing.T) {
	got := LogFormat("X-Refkey")
	want := "$connection $connection_requests $ssl_protocol $ssl_session_reused $status $request_time $upstream_response_time $request_method $uri $http_x_refkey"
	if got != want {
		t.Errorf("LogFormat(X-Refkey)\n got %s\nwant %s", got, want)
	}
	if got := LogFormat("X-Request-Ref"); !strings.HasSuffix(got, " $uri $http_x_request_ref") {
		t.Errorf("LogFormat(X-Request-Ref) = %s, want it to end with $http_x_request_ref", got)
	}
}

func TestParseAccessLogSample(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "testdata", "vendormock", "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ParseAccessLog(f)
	if err != nil {
		t.Fatalf("ParseAccessLog: %v", err)
	}
	want := []AccessEntry{
		{5, 1, "TLSv1.3", false, 200, 0.111, 0.112, "POST", "/v1/token", ""},
		{5, 2, "TLSv1.3", false, 401, 0.007, 0.007, "POST", "/v1/token", ""},
		{5, 3, "TLSv1.3", false, 200, 0.042, 0.043, "POST", "/v3/message", "it-2332f9df545d"},
		{9, 1, "TLSv1.2", false, 200, 0.031, 0.019, "POST", "/v3/message", "rk-0002"},
		{11, 1, "TLSv1.2", true, 502, 0.003, 0.003, "POST", "/v3/message", "rk-0003"},
		{11, 2, "TLSv1.2", true, 504, 60.001, 60.001, "POST", "/v3/message", "rk-0004"},
		{13, 1, "TLSv1.3", false, 404, 0, -1, "GET", "/no such/path", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g := got[i]
		// Sums of upstream times are floats: compare them to the µs.
		if d := g.UpstreamTime - want[i].UpstreamTime; d > 1e-6 || d < -1e-6 {
			t.Errorf("entry %d: UpstreamTime %v, want %v", i, g.UpstreamTime, want[i].UpstreamTime)
		}
		g.UpstreamTime = want[i].UpstreamTime
		if !reflect.DeepEqual(g, want[i]) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, g, want[i])
		}
	}
}

func TestParseAccessLogErrors(t *testing.T) {
	for _, tc := range []struct{ name, line, wantIn string }{
		{"too few fields", "5 1 TLSv1.3 . 200 0.1 0.1 POST /x", "9 fields"},
		{"connection not a number", "x 1 TLSv1.3 . 200 0.1 0.1 POST /x -", "connection"},
		{"request zero", "5 0 TLSv1.3 . 200 0.1 0.1 POST /x -", "connection_requests"},
		{"reused flag", "5 1 TLSv1.3 y 200 0.1 0.1 POST /x -", "ssl_session_reused"},
		{"status", "5 1 TLSv1.3 . 20x 0.1 0.1 POST /x -", "status"},
		{"request time", "5 1 TLSv1.3 . 200 -0.1 0.1 POST /x -", "request_time"},
		{"upstream time", "5 1 TLSv1.3 . 200 0.1 abc POST /x -", "upstream_response_time"},
		{"upstream list truncated", "5 1 TLSv1.3 . 200 0.1 0.1, 0.2, 0.3, 0.4,", "upstream_response_time"},
		{"no method after upstream list", "5 1 TLSv1.3 . 200 0.1 0.1, 0.2 POST -", "fields after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAccessLog(strings.NewReader("5 1 TLSv1.3 . 200 0.1 0.1 POST /ok -\n" + tc.line + "\n"))
			if !errors.Is(err, ErrAccessLogLine) {
				t.Fatalf("err = %v, want ErrAccessLogLine", err)
			}
			if !strings.Contains(err.Error(), " 2: ") || !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("err = %v, want line 2 and %q named", err, tc.wantIn)
			}
		})
	}
}

func TestReadAccessLogOffsets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	first := "5 1 TLSv1.3 . 200 0.040 0.039 POST /v3/message rk-1\n"
	second := "5 2 TLSv1.3 . 200 0.041 0.040 POST /v3/message rk-2\n"
	partial := "5 3 TLSv1.3 . 200 0.0"
	if err := os.WriteFile(path, []byte(first+second+partial), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Stack{AccessLogPath: path}

	size, err := s.AccessLogSize()
	if err != nil || size != int64(len(first+second+partial)) {
		t.Fatalf("AccessLogSize = %d, %v; want %d", size, err, len(first+second+partial))
	}
	got, raw, err := s.ReadAccessLog(int64(len(first)))
	if err != nil {
		t.Fatalf("ReadAccessLog: %v", err)
	}
	if len(got) != 1 || got[0].RefKey != "rk-2" || string(raw) != second {
		t.Errorf("from offset %d: %+v raw %q; want only rk-2 and the partial line left out", len(first), got, raw)
	}
	if _, _, err := s.ReadAccessLog(size + 1); err == nil {
		t.Errorf("ReadAccessLog past the end: nil error, want one")
	}

	missing := &Stack{AccessLogPath: filepath.Join(t.TempDir(), "none.log")}
	if n, err := missing.AccessLogSize(); n != 0 || err != nil {
		t.Errorf("AccessLogSize of a log nginx has not created = %d, %v; want 0, nil", n, err)
	}
	if e, raw, err := missing.ReadAccessLog(0); len(e) != 0 || len(raw) != 0 || err != nil {
		t.Errorf("ReadAccessLog(0) of a missing log = %v %q %v; want nothing", e, raw, err)
	}
}
