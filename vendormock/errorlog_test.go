package vendormock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCountHandshakeErrors: only the lines nginx ends with "while SSL
// handshaking" count, at any level, by reason; a keep-alive close and a
// client timeout while waiting for a request do not. The fixture's last
// line is nginx 1.22's own, from the committed POOL_SIZE=2 matrix cell
// (results/matrix-server/pool2/nginx-error/direct-https-pooled-c32.log).
func TestCountHandshakeErrors(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "testdata", "vendormock", "nginx-error.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := CountHandshakeErrors(f)
	if err != nil {
		t.Fatal(err)
	}
	if h.Count != 5 || h.Lines != 9 {
		t.Errorf("count %d of %d lines, want 5 of 9", h.Count, h.Lines)
	}
	for reason, want := range map[string]int{
		"peer closed connection in SSL handshake (104: Connection reset by peer)":                    2,
		"SSL_do_handshake() failed (SSL: error:0A000126:SSL routines::unexpected eof while reading)": 1,
		"SSL_do_handshake() failed (SSL: error:0A0000C1:SSL routines::no shared cipher)":             1,
	} {
		if h.Reasons[reason] != want {
			t.Errorf("reason %q: %d, want %d (all: %v)", reason, h.Reasons[reason], want, h.Reasons)
		}
	}
}

// TestReadErrorLogFrom: a slice from an offset holds the lines written
// after it, and a line still being written waits for the next read.
func TestReadErrorLogFrom(t *testing.T) {
	dir := t.TempDir()
	s := &Stack{ErrorLogPath: filepath.Join(dir, ErrorLogFile)}
	if raw, h, err := s.ReadErrorLog(0); err != nil || len(raw) != 0 || h.Count != 0 {
		t.Fatalf("no log yet: %q %+v %v", raw, h, err)
	}
	first := "2026/12/05 01:12:03 [info] 7#7: *31 peer closed connection in SSL handshake while SSL handshaking, client: x\n"
	if err := os.WriteFile(s.ErrorLogPath, []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	off, err := s.ErrorLogSize()
	if err != nil || off != int64(len(first)) {
		t.Fatalf("size %d %v", off, err)
	}
	second := "2026/12/05 01:12:04 [info] 7#7: *32 SSL_do_handshake() failed (x) while SSL handshaking, client: y\n2026/12/05 01:12:05 [info] 7#7: *33 peer clo"
	af, err := os.OpenFile(s.ErrorLogPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	af.WriteString(second)
	af.Close()
	raw, h, err := s.ReadErrorLog(off)
	if err != nil {
		t.Fatal(err)
	}
	if h.Count != 1 || h.Reasons["SSL_do_handshake() failed (x)"] != 1 || strings.Contains(string(raw), "*33") {
		t.Errorf("slice %q counted %+v; want the one complete line after the offset", raw, h)
	}
	if _, _, err := s.ReadErrorLog(1 << 20); err == nil {
		t.Error("an offset past the end must fail")
	}
}
