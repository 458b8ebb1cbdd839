package vendormock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrAccessLogLine is returned (wrapped, with the line number) by
// ParseAccessLog for a line that is not in the lab's log_format.
var ErrAccessLogLine = errors.New("malformed access log line")

// AccessEntry is one parsed nginx access log line.
type AccessEntry struct {
	Connection    int64  // $connection: nginx's connection serial number
	Request       int    // $connection_requests: request number on that connection
	TLSProtocol   string // $ssl_protocol: "TLSv1.2", "TLSv1.3"; "" without TLS
	SessionReused bool   // $ssl_session_reused == "r"
	Status        int
	RequestTime   float64 // $request_time, s
	UpstreamTime  float64 // $upstream_response_time, s, summed over attempts; -1 when not proxied
	Method, Path  string
	RefKey        string // the correlation header, "" when absent

	ServerProtocol      string    // $server_protocol: "HTTP/1.1", "HTTP/2.0"
	Time                time.Time // $msec: when nginx wrote the line (ms resolution)
	UpstreamAddr        string    // $upstream_addr: "172.18.0.3:8080", a list across attempts; "" when not proxied
	UpstreamStatus      string    // $upstream_status: "200", "502, 200" across attempts; "" when not proxied
	UpstreamConnectTime float64   // $upstream_connect_time, s, summed; -1 when not proxied (0 on a kept-alive upstream connection)

	// ALPN is $ssl_alpn_protocol: "h2", "http/1.1", "" when the client
	// offered none (or in logs written before the field existed).
	ALPN string
	// ConnectionHeader is the request's Connection header ($http_connection):
	// "keep-alive", "close", "" when absent.
	ConnectionHeader string
	// IdempotencyKey is the request's Idempotency-Key header, "" when absent.
	IdempotencyKey string
}

// logField is one key of the lab's JSON log line and the nginx variable
// that fills it.
type logField struct{ key, variable string }

// logFields lists the keys of the lab's access log line, in order; the
// correlation header's variable is added as "refkey".
var logFields = []logField{
	{"msec", "$msec"},
	{"connection", "$connection"},
	{"connection_requests", "$connection_requests"},
	{"server_protocol", "$server_protocol"},
	{"ssl_protocol", "$ssl_protocol"},
	{"ssl_session_reused", "$ssl_session_reused"},
	{"method", "$request_method"},
	{"uri", "$uri"},
	{"status", "$status"},
	{"request_time", "$request_time"},
	{"upstream_addr", "$upstream_addr"},
	{"upstream_status", "$upstream_status"},
	{"upstream_connect_time", "$upstream_connect_time"},
	{"upstream_response_time", "$upstream_response_time"},
	{"ssl_alpn", "$ssl_alpn_protocol"},
	{"http_connection", "$http_connection"},
	{"idempotency_key", "$http_idempotency_key"},
}

// LogFormat returns the lab's nginx log_format string for a vendor whose
// correlation header is header (X-Refkey -> $http_x_refkey): one JSON
// object per line, every value a JSON string, for use as
//
//	log_format lab escape=json '<LogFormat>';
//
// With escape=json nginx escapes each value for a JSON string and logs a
// variable that has no value as "". Keys and their variables:
//
//	msec                    $msec: Unix time in s with ms, when the line was written
//	connection              $connection: nginx's connection serial number
//	connection_requests     $connection_requests: request number on that connection (1 = first)
//	server_protocol         $server_protocol: HTTP/1.1 | HTTP/2.0
//	ssl_protocol            $ssl_protocol: TLSv1.2 | TLSv1.3
//	ssl_session_reused      $ssl_session_reused: r (resumed) | . (full handshake)
//	method, uri             $request_method, $uri (normalised path, no query)
//	status                  $status: HTTP status sent
//	request_time            $request_time: s, ms resolution, first byte read to last byte sent
//	upstream_addr           $upstream_addr: WireMock's address per attempt
//	upstream_status         $upstream_status: WireMock's status per attempt
//	upstream_connect_time   $upstream_connect_time: s per attempt
//	upstream_response_time  $upstream_response_time: s per attempt, WireMock's part
//	ssl_alpn                $ssl_alpn_protocol: h2 | http/1.1 | "" (no ALPN)
//	http_connection         $http_connection: the request's Connection header
//	idempotency_key         $http_idempotency_key: the request's Idempotency-Key header
//	refkey                  the correlation header
//
// The request line ($request) is left out: its query string could carry a
// credential. Toxiproxy opens one upstream connection per client
// connection, so the distinct connection values count the client's TCP
// connections exactly (docs/environment.md).
func LogFormat(header string) string {
	var b strings.Builder
	b.WriteByte('{')
	for _, f := range append(logFields[:len(logFields):len(logFields)], logField{"refkey", headerVar(header)}) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:\"%s\"", f.key, f.variable)
	}
	b.WriteByte('}')
	return b.String()
}

// accessLine is one JSON log line as nginx writes it: every value a string.
type accessLine struct {
	Msec                 string `json:"msec"`
	Connection           string `json:"connection"`
	ConnectionRequests   string `json:"connection_requests"`
	ServerProtocol       string `json:"server_protocol"`
	SSLProtocol          string `json:"ssl_protocol"`
	SSLSessionReused     string `json:"ssl_session_reused"`
	Method               string `json:"method"`
	URI                  string `json:"uri"`
	Status               string `json:"status"`
	RequestTime          string `json:"request_time"`
	UpstreamAddr         string `json:"upstream_addr"`
	UpstreamStatus       string `json:"upstream_status"`
	UpstreamConnectTime  string `json:"upstream_connect_time"`
	UpstreamResponseTime string `json:"upstream_response_time"`
	SSLALPN              string `json:"ssl_alpn"`
	HTTPConnection       string `json:"http_connection"`
	IdempotencyKey       string `json:"idempotency_key"`
	RefKey               string `json:"refkey"`
}

// ParseAccessLog parses lines in the lab's log_format (LogFormat), one JSON
// object each; empty lines are skipped. The upstream times list one time
// per upstream attempt ("0.001, 0.018", or "0.001 : 0.018" across an
// internal redirect): their sum is UpstreamTime / UpstreamConnectTime.
// Errors wrap ErrAccessLogLine and name the line number and the field.
func ParseAccessLog(r io.Reader) ([]AccessEntry, error) {
	var out []AccessEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		e, err := parseAccessLine(line)
		if err != nil {
			return out, fmt.Errorf("%w %d: %w: %q", ErrAccessLogLine, n, err, line)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read access log: %w", err)
	}
	return out, nil
}

// parseAccessLine parses one non-empty line.
func parseAccessLine(line []byte) (AccessEntry, error) {
	var l accessLine
	var e AccessEntry
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&l); err != nil {
		return e, fmt.Errorf("decode json: %w", err)
	}
	if d.More() {
		return e, errors.New("text after the JSON object")
	}
	e.TLSProtocol, e.ServerProtocol = l.SSLProtocol, l.ServerProtocol
	e.Method, e.Path, e.RefKey = l.Method, l.URI, l.RefKey
	e.UpstreamAddr, e.UpstreamStatus = l.UpstreamAddr, l.UpstreamStatus
	e.ALPN, e.ConnectionHeader, e.IdempotencyKey = l.SSLALPN, l.HTTPConnection, l.IdempotencyKey
	var err error
	if e.Connection, err = strconv.ParseInt(l.Connection, 10, 64); err != nil || e.Connection < 1 {
		return e, fmt.Errorf("connection %q: not a serial number", l.Connection)
	}
	if e.Request, err = strconv.Atoi(l.ConnectionRequests); err != nil || e.Request < 1 {
		return e, fmt.Errorf("connection_requests %q: not a request number", l.ConnectionRequests)
	}
	switch l.SSLSessionReused {
	case "r":
		e.SessionReused = true
	case ".", "":
	default:
		return e, fmt.Errorf("ssl_session_reused %q: want r (resumed) or . (full handshake)", l.SSLSessionReused)
	}
	if e.Status, err = strconv.Atoi(l.Status); err != nil || e.Status < 100 || e.Status > 999 {
		return e, fmt.Errorf("status %q: not an HTTP status", l.Status)
	}
	if e.RequestTime, err = strconv.ParseFloat(l.RequestTime, 64); err != nil || e.RequestTime < 0 {
		return e, fmt.Errorf("request_time %q: not seconds", l.RequestTime)
	}
	if l.Msec != "" {
		ms, err := strconv.ParseFloat(l.Msec, 64)
		if err != nil || ms <= 0 {
			return e, fmt.Errorf("msec %q: not Unix seconds", l.Msec)
		}
		e.Time = time.UnixMilli(int64(ms*1000 + 0.5))
	}
	if e.UpstreamTime, err = sumSeconds(l.UpstreamResponseTime); err != nil {
		return e, fmt.Errorf("upstream_response_time %q: %w", l.UpstreamResponseTime, err)
	}
	if e.UpstreamConnectTime, err = sumSeconds(l.UpstreamConnectTime); err != nil {
		return e, fmt.Errorf("upstream_connect_time %q: %w", l.UpstreamConnectTime, err)
	}
	return e, nil
}

// sumSeconds sums nginx's per-attempt list of times in s ("0.018",
// "0.001, 0.018", "0.001 : 0.018"); an attempt without a time is "-". It
// returns -1 when the list has no time at all ("" or only "-").
func sumSeconds(list string) (float64, error) {
	sum := -1.0
	for _, tok := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ':' || r == ' ' }) {
		if tok == "-" {
			continue
		}
		v, err := strconv.ParseFloat(tok, 64)
		if err != nil || v < 0 {
			return -1, fmt.Errorf("%q: not seconds", tok)
		}
		if sum < 0 {
			sum = 0
		}
		sum += v
	}
	return sum, nil
}

// AccessLogSize returns the current size of the access log in bytes, an
// offset for ReadAccessLog; 0 when nginx has not created it yet.
func (s *Stack) AccessLogSize() (int64, error) {
	fi, err := os.Stat(s.AccessLogPath)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("stat access log: %w", err)
	}
	return fi.Size(), nil
}

// ReadAccessLog reads the access log from byte offset from (an earlier
// AccessLogSize) up to its last complete line, and returns the parsed
// entries and those raw bytes (to save as results/nginx/access-*.log). A
// line nginx is still writing is left for the next call. Errors: unreadable
// file, an offset past the end (the log was truncated), a malformed line
// (ErrAccessLogLine).
func (s *Stack) ReadAccessLog(from int64) ([]AccessEntry, []byte, error) {
	return readAccessLog(s.AccessLogPath, from)
}

// readAccessLog is ReadAccessLog on any path.
func readAccessLog(path string, from int64) ([]AccessEntry, []byte, error) {
	if from < 0 {
		return nil, nil, fmt.Errorf("read access log: negative offset %d", from)
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && from == 0 {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read access log: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("read access log: %w", err)
	}
	if from > fi.Size() {
		return nil, nil, fmt.Errorf("read access log: offset %d past its end %d (truncated?)", from, fi.Size())
	}
	raw, err := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	if err != nil {
		return nil, nil, fmt.Errorf("read access log: %w", err)
	}
	raw = raw[:bytes.LastIndexByte(raw, '\n')+1]
	entries, err := ParseAccessLog(bytes.NewReader(raw))
	return entries, raw, err
}
