package vendormock

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// HandshakeErrors are the failed TLS handshakes in nginx's error log: the
// lines nginx ends with "while SSL handshaking" (at info level, where it
// logs what a client did wrong: "peer closed connection in SSL
// handshake", "SSL_do_handshake() failed ..."), counted, and by reason.
// Study A's server logged such errors (EOF, connection reset) at mTLS
// fresh, concurrency 32, while its client counted none
// (docs/studies.md).
type HandshakeErrors struct {
	Count int `json:"count"`
	// Reasons counts the lines by what nginx said before "while SSL
	// handshaking", the connection number and the client's address left out.
	Reasons map[string]int `json:"reasons,omitempty"`
	// Lines is every line of the log slice (any level), for the evidence.
	Lines int `json:"lines"`
}

// handshakeLineRE takes the reason out of an nginx error log line:
// "<date> <time> [level] <pid>#<tid>: *<conn> <reason> while SSL handshaking, client: ...".
var handshakeLineRE = regexp.MustCompile(`\[\w+\] \d+#\d+: (?:\*\d+ )?(.*?) while SSL handshaking`)

// CountHandshakeErrors reads nginx error log lines from r and counts the
// failed TLS handshakes among them. Errors: only reading r's.
func CountHandshakeErrors(r io.Reader) (HandshakeErrors, error) {
	h := HandshakeErrors{Reasons: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		h.Lines++
		m := handshakeLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		h.Count++
		h.Reasons[m[1]]++
	}
	if err := sc.Err(); err != nil {
		return h, fmt.Errorf("read error log: %w", err)
	}
	return h, nil
}

// ErrorLogSize returns the current size of nginx's error log in bytes, an
// offset for ReadErrorLog; 0 when nginx has not created it yet.
func (s *Stack) ErrorLogSize() (int64, error) {
	fi, err := os.Stat(s.ErrorLogPath)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("stat error log: %w", err)
	}
	return fi.Size(), nil
}

// ReadErrorLog reads nginx's error log from byte offset from (an earlier
// ErrorLogSize) up to its last complete line and returns those bytes (to
// keep beside a result) and the failed TLS handshakes among them. Errors:
// unreadable file, an offset past the end.
func (s *Stack) ReadErrorLog(from int64) ([]byte, HandshakeErrors, error) {
	raw, err := readLogFrom(s.ErrorLogPath, from)
	if err != nil {
		return nil, HandshakeErrors{}, fmt.Errorf("read error log: %w", err)
	}
	h, err := CountHandshakeErrors(strings.NewReader(string(raw)))
	return raw, h, err
}

// readLogFrom returns path's bytes from offset from to its last newline;
// nothing when the file does not exist yet and from is 0.
func readLogFrom(path string, from int64) ([]byte, error) {
	if from < 0 {
		return nil, fmt.Errorf("negative offset %d", from)
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && from == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if from > fi.Size() {
		return nil, fmt.Errorf("offset %d past its end %d (truncated?)", from, fi.Size())
	}
	raw, err := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	if err != nil {
		return nil, err
	}
	return raw[:strings.LastIndexByte(string(raw), '\n')+1], nil
}
