package vendormock

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// line is a JSON log line in the lab's format with the given keys
// overriding a valid send.
func line(t *testing.T, override map[string]string) string {
	t.Helper()
	l := map[string]string{
		"msec": "1764559215.101", "connection": "5", "connection_requests": "1",
		"server_protocol": "HTTP/1.1", "ssl_protocol": "TLSv1.3", "ssl_session_reused": ".",
		"method": "POST", "uri": "/v3/message", "status": "200", "request_time": "0.040",
		"upstream_addr": "172.18.0.3:8080", "upstream_status": "200",
		"upstream_connect_time": "0.000", "upstream_response_time": "0.039", "refkey": "rk-1",
	}
	for k, v := range override {
		l[k] = v
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLogFormat(t *testing.T) {
	f := LogFormat("X-Refkey")
	if strings.Contains(f, "'") {
		t.Errorf("LogFormat contains a single quote, which ends nginx's quoted log_format: %s", f)
	}
	if !strings.HasSuffix(f, `"refkey":"$http_x_refkey"}`) {
		t.Errorf("LogFormat(X-Refkey) = %s, want it to end with the refkey from $http_x_refkey", f)
	}
	if got := LogFormat("X-Request-Ref"); !strings.Contains(got, `"refkey":"$http_x_request_ref"`) {
		t.Errorf("LogFormat(X-Request-Ref) = %s, want $http_x_request_ref", got)
	}
	for _, v := range []string{"$connection", "$connection_requests", "$server_protocol", "$ssl_protocol",
		"$status", "$request_time", "$upstream_response_time", "$upstream_addr", "$msec", "$uri"} {
		if !strings.Contains(f, `"`+v+`"`) {
			t.Errorf("LogFormat lacks %s as a JSON string value: %s", v, f)
		}
	}
	// What nginx writes: every variable replaced by its JSON-escaped value.
	// The result must be one JSON object that ParseAccessLog reads back.
	values := map[string]string{
		"$msec": "1764559215.101", "$connection": "7", "$connection_requests": "2",
		"$server_protocol": "HTTP/2.0", "$ssl_protocol": "TLSv1.2", "$ssl_session_reused": "r",
		"$request_method": "POST", "$uri": `/v3/a \"b\"`, "$status": "201", "$request_time": "0.041",
		"$upstream_addr": "172.18.0.3:8080", "$upstream_status": "201", "$upstream_connect_time": "0.001",
		"$upstream_response_time": "0.018", "$http_x_refkey": "rk-9",
		"$ssl_alpn_protocol": "h2", "$http_connection": "keep-alive", "$http_idempotency_key": "ik-1",
	}
	written := regexp.MustCompile(`\$[a-z_]+`).ReplaceAllStringFunc(f, func(v string) string {
		val, ok := values[v]
		if !ok {
			t.Errorf("LogFormat uses %s, which this test gives no value", v)
		}
		return val
	})
	got, err := ParseAccessLog(strings.NewReader(written + "\n"))
	if err != nil {
		t.Fatalf("ParseAccessLog of a line nginx would write: %v\n%s", err, written)
	}
	want := AccessEntry{
		Connection: 7, Request: 2, TLSProtocol: "TLSv1.2", SessionReused: true, Status: 201,
		RequestTime: 0.041, UpstreamTime: 0.018, Method: "POST", Path: `/v3/a "b"`, RefKey: "rk-9",
		ServerProtocol: "HTTP/2.0", Time: time.UnixMilli(1764559215101),
		UpstreamAddr: "172.18.0.3:8080", UpstreamStatus: "201", UpstreamConnectTime: 0.001,
		ALPN: "h2", ConnectionHeader: "keep-alive", IdempotencyKey: "ik-1",
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("read back %+v\nwant %+v", got, want)
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
	const up = "172.18.0.3:8080"
	at := func(ms int64) time.Time { return time.UnixMilli(ms) }
	want := []AccessEntry{
		{5, 1, "TLSv1.3", false, 200, 0.111, 0.112, "POST", "/v1/token", "", "HTTP/1.1", at(1764559215101), up, "200", 0.001, "", "", ""},
		{5, 2, "TLSv1.3", false, 401, 0.007, 0.007, "POST", "/v1/token", "", "HTTP/1.1", at(1764559215109), up, "401", 0, "", "", ""},
		{5, 3, "TLSv1.3", false, 200, 0.042, 0.043, "POST", "/v3/message", "it-2332f9df545d", "HTTP/1.1", at(1764559215152), up, "200", 0, "", "", ""},
		{9, 1, "TLSv1.2", false, 200, 0.031, 0.019, "POST", "/v3/message", "rk-0002", "HTTP/1.1", at(1764559216004), up, "200", 0, "", "", ""},
		{11, 1, "TLSv1.2", true, 502, 0.003, 0.003, "POST", "/v3/message", "rk-0003", "HTTP/1.1", at(1764559216010), up + ", " + up, "502, 502", 0.001, "", "", ""},
		{11, 2, "TLSv1.2", true, 504, 60.001, 60.001, "POST", "/v3/message", "rk-0004", "HTTP/1.1", at(1764559276012), up + " : " + up, "504 : 504", 0, "", "", ""},
		{13, 1, "TLSv1.3", false, 404, 0, -1, "GET", `/no such/"path"`, "", "HTTP/2.0", at(1764559277000), "", "", -1, "", "", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g := got[i]
		// Sums of upstream times are floats: compare them to the µs.
		for _, f := range []struct {
			name      string
			got, want float64
		}{{"UpstreamTime", g.UpstreamTime, want[i].UpstreamTime}, {"UpstreamConnectTime", g.UpstreamConnectTime, want[i].UpstreamConnectTime}} {
			if d := f.got - f.want; d > 1e-6 || d < -1e-6 {
				t.Errorf("entry %d: %s %v, want %v", i, f.name, f.got, f.want)
			}
		}
		g.UpstreamTime, g.UpstreamConnectTime = want[i].UpstreamTime, want[i].UpstreamConnectTime
		if !reflect.DeepEqual(g, want[i]) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, g, want[i])
		}
	}
}

func TestParseAccessLogErrors(t *testing.T) {
	for _, tc := range []struct {
		name, line, wantIn string
	}{
		{"old space-separated format", "5 1 TLSv1.3 . 200 0.1 0.1 POST /x -", "decode json"},
		{"truncated object", `{"connection":"5"`, "decode json"},
		{"unknown key (another log_format)", `{"connection":"5","bytes_sent":"10"}`, "bytes_sent"},
		{"two objects on one line", line(t, nil) + line(t, nil), "after the JSON object"},
		{"connection missing", line(t, map[string]string{"connection": ""}), "connection"},
		{"connection not a number", line(t, map[string]string{"connection": "x"}), "connection"},
		{"request zero", line(t, map[string]string{"connection_requests": "0"}), "connection_requests"},
		{"reused flag", line(t, map[string]string{"ssl_session_reused": "y"}), "ssl_session_reused"},
		{"status", line(t, map[string]string{"status": "20x"}), "status"},
		{"status 000", line(t, map[string]string{"status": "000"}), "status"},
		{"request time", line(t, map[string]string{"request_time": "-0.1"}), "request_time"},
		{"msec", line(t, map[string]string{"msec": "yesterday"}), "msec"},
		{"upstream time", line(t, map[string]string{"upstream_response_time": "abc"}), "upstream_response_time"},
		{"upstream time in a list", line(t, map[string]string{"upstream_response_time": "0.1, x"}), "upstream_response_time"},
		{"upstream connect time", line(t, map[string]string{"upstream_connect_time": "-1"}), "upstream_connect_time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAccessLog(strings.NewReader(line(t, nil) + "\n" + tc.line + "\n"))
			if !errors.Is(err, ErrAccessLogLine) {
				t.Fatalf("err = %v, want ErrAccessLogLine", err)
			}
			if !strings.Contains(err.Error(), " 2: ") || !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("err = %v, want line 2 and %q named", err, tc.wantIn)
			}
		})
	}
	// The decoder's own error stays reachable through the wrapping.
	_, err := ParseAccessLog(strings.NewReader(`{"connection":5}` + "\n"))
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		t.Errorf("err = %v, want it to wrap the *json.UnmarshalTypeError", err)
	}
}

func TestReadAccessLogOffsets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	first := line(t, map[string]string{"refkey": "rk-1"}) + "\n"
	second := line(t, map[string]string{"connection_requests": "2", "refkey": "rk-2"}) + "\n"
	partial := `{"msec":"1764559215.300","connection":"5","connection_re`
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
