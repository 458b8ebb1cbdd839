package pagesite

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// LogLine is one line of the access log (LogFormat), values as nginx
// wrote them.
type LogLine struct {
	Msec     string `json:"msec"`      // request end, seconds.milliseconds since the epoch
	Conn     string `json:"conn"`      // $connection: the connection's serial number
	ConnReqs string `json:"conn_reqs"` // $connection_requests
	Port     string `json:"port"`      // "8441" (HTTP/1.1 only) or "8442" (h2)
	Proto    string `json:"proto"`     // $server_protocol: "HTTP/1.1" or "HTTP/2.0"
	TLS      string `json:"tls"`       // $ssl_protocol, e.g. "TLSv1.3"
	Method   string `json:"method"`
	URI      string `json:"uri"`    // $request_uri: /run/<load id>/...
	Status   string `json:"status"` // "200"
	Bytes    string `json:"bytes"`
	RT       string `json:"rt"` // $request_time, s
}

// LoadID is the load id a line's URI carries (/run/<id>/...), "" when none.
func (l LogLine) LoadID() string {
	rest, ok := strings.CutPrefix(l.URI, "/run/")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, "/")
	return id
}

// ParseAccessLog reads every line of r. Errors: a line that is not one of
// LogFormat's objects (named by its number), r's.
func ParseAccessLog(r io.Reader) ([]LogLine, error) {
	var out []LogLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var l LogLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			return nil, fmt.Errorf("parse access log line %d: %w", n, err)
		}
		if l.Conn == "" || l.URI == "" {
			return nil, fmt.Errorf("parse access log line %d: no conn or uri", n)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read access log: %w", err)
	}
	return out, nil
}

// ReadAccessLog parses the access log at path ("" lines when nginx wrote
// none yet).
func ReadAccessLog(path string) ([]LogLine, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open access log: %w", err)
	}
	defer f.Close()
	return ParseAccessLog(f)
}
