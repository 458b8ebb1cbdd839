package records

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// Writer writes Records as JSON Lines, one Write call per line (no
// buffering: the lab tails the file for progress).
type Writer struct {
	mu sync.Mutex
	w  io.Writer
	c  io.Closer
	// last is the highest Seq already in the file when it was opened.
	last int
	// buf and enc encode one line at a time (under mu).
	buf bytes.Buffer
	enc *json.Encoder
}

// LastSeq returns the highest Seq found in the file when Open opened
// it (0 for a new or empty file): a restarted worker appending to the same
// file continues numbering after it, so Seq stays unique per file.
func (rw *Writer) LastSeq() int { return rw.last }

// NewWriter writes to w; Close does not close w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Open opens path for appending (created 0644 when missing) and
// reads the highest Seq already in it (LastSeq). An empty path returns a
// writer that discards. Errors: the file cannot be opened or read. Lines
// that do not parse are skipped (a torn last line after a crash).
func Open(path string) (*Writer, error) {
	if path == "" {
		return NewWriter(io.Discard), nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open records: %w", err)
	}
	last := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r struct {
			Seq int `json:"seq"`
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Seq > last {
			last = r.Seq
		}
	}
	if err := sc.Err(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("read records %s: %w", path, err)
	}
	// End a torn last line so the next record starts on a line of its own.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, st.Size()-1); err == nil && b[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				_ = f.Close()
				return nil, fmt.Errorf("write records %s: %w", path, err)
			}
		}
	}
	return &Writer{w: f, c: f, last: last}, nil
}

// Write appends r as one line (json.Marshal's encoding and a newline,
// encoded into a buffer the Writer keeps between calls).
func (rw *Writer) Write(r Record) error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.buf.Reset()
	if rw.enc == nil {
		rw.enc = json.NewEncoder(&rw.buf)
	}
	if err := rw.enc.Encode(r); err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	if _, err := rw.w.Write(rw.buf.Bytes()); err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	return nil
}

// Close closes the file opened by Open.
func (rw *Writer) Close() error {
	if rw.c == nil {
		return nil
	}
	return rw.c.Close()
}
