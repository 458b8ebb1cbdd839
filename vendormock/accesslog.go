package vendormock

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ErrAccessLogLine is returned (wrapped, with the line number) by
// ParseAccessLog for a line that is not in the lab's log_format.
var ErrAccessLogLine = errors.New("malformed access log line")

// AccessEntry is one parsed nginx access log line.
type AccessEntry struct {
	Connection    int64  // $connection: nginx's connection serial number
	Request       int    // $connection_requests: request number on that connection
	TLSProtocol   string // $ssl_protocol: "TLSv1.2", "TLSv1.3"
	SessionReused bool   // $ssl_session_reused == "r"
	Status        int
	RequestTime   float64 // $request_time, s
	UpstreamTime  float64 // $upstream_response_time, s; -1 when "-"
	Method, Path  string
	RefKey        string // $http_x_refkey, "" when "-"
}

// LogFormat returns the lab's nginx log_format for a vendor whose
// correlation header is header (X-Refkey -> $http_x_refkey). Fields, one
// space apart, in this order:
//
//	$connection              nginx's connection serial number
//	$connection_requests     request number on that connection (1 = first)
//	$ssl_protocol            TLSv1.2 | TLSv1.3
//	$ssl_session_reused      r (resumed) | . (full handshake)
//	$status                  HTTP status sent
//	$request_time            s, ms resolution: first byte read to last byte sent
//	$upstream_response_time  s, WireMock's part; "-" when not proxied
//	$request_method
//	$uri                     normalised path, no query
//	$http_x_refkey           the correlation header; "-" when absent
//
// Toxiproxy opens one upstream connection per client connection, so the
// distinct $connection values count the client's TCP connections exactly
// (DESIGN.md "Topology").
func LogFormat(header string) string {
	return "$connection $connection_requests $ssl_protocol $ssl_session_reused " +
		"$status $request_time $upstream_response_time $request_method $uri " + headerVar(header)
}

// ParseAccessLog parses lines in the lab's log_format (LogFormat); empty
// lines are skipped. $upstream_response_time lists one time per upstream
// attempt ("0.001, 0.018", or "x : y" across an internal redirect): their
// sum is UpstreamTime. A space inside $uri is kept (nginx does not escape
// it); the refkey is the last field and must not contain one. Errors wrap
// ErrAccessLogLine and name the line number.
func ParseAccessLog(r io.Reader) ([]AccessEntry, error) {
	var out []AccessEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		e, err := parseAccessLine(line)
		if err != nil {
			return out, fmt.Errorf("%w %d: %v: %q", ErrAccessLogLine, n, err, line)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read access log: %w", err)
	}
	return out, nil
}

// parseAccessLine parses one non-empty line.
func parseAccessLine(line string) (AccessEntry, error) {
	var e AccessEntry
	f := strings.Fields(line)
	if len(f) < 10 {
		return e, fmt.Errorf("%d fields, want at least 10", len(f))
	}
	var err error
	if e.Connection, err = strconv.ParseInt(f[0], 10, 64); err != nil || e.Connection < 1 {
		return e, fmt.Errorf("connection %q: not a serial number", f[0])
	}
	if e.Request, err = strconv.Atoi(f[1]); err != nil || e.Request < 1 {
		return e, fmt.Errorf("connection_requests %q: not a request number", f[1])
	}
	if f[2] != "-" {
		e.TLSProtocol = f[2]
	}
	switch f[3] {
	case "r":
		e.SessionReused = true
	case ".", "-":
	default:
		return e, fmt.Errorf("ssl_session_reused %q: want r or .", f[3])
	}
	if e.Status, err = strconv.Atoi(f[4]); err != nil || e.Status < 100 || e.Status > 999 {
		return e, fmt.Errorf("status %q: not an HTTP status", f[4])
	}
	if e.RequestTime, err = strconv.ParseFloat(f[5], 64); err != nil || e.RequestTime < 0 {
		return e, fmt.Errorf("request_time %q: not seconds", f[5])
	}
	// $upstream_response_time: "-", "0.018", "0.001, 0.018", "0.001 : 0.018".
	i := 6
	e.UpstreamTime = -1
	for {
		tok := strings.TrimSuffix(f[i], ",")
		if tok != "-" {
			v, err := strconv.ParseFloat(tok, 64)
			if err != nil || v < 0 {
				return e, fmt.Errorf("upstream_response_time %q: not seconds", f[i])
			}
			if e.UpstreamTime < 0 {
				e.UpstreamTime = 0
			}
			e.UpstreamTime += v
		}
		more := strings.HasSuffix(f[i], ",")
		i++
		if i < len(f) && f[i] == ":" {
			more = true
			i++
		}
		if !more {
			break
		}
		if i >= len(f) {
			return e, errors.New("upstream_response_time: truncated list")
		}
	}
	if len(f)-i < 3 {
		return e, fmt.Errorf("%d fields after upstream_response_time, want method, uri and refkey", len(f)-i)
	}
	e.Method = f[i]
	e.Path = strings.Join(f[i+1:len(f)-1], " ")
	if rk := f[len(f)-1]; rk != "-" {
		e.RefKey = rk
	}
	return e, nil
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
