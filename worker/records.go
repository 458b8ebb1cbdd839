package worker

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// RecordWriter writes Records as JSON Lines, one Write call per line (no
// buffering: the lab tails the file for progress).
type RecordWriter struct {
	mu sync.Mutex
	w  io.Writer
	c  io.Closer
}

// NewRecordWriter writes to w; Close does not close w.
func NewRecordWriter(w io.Writer) *RecordWriter { return &RecordWriter{w: w} }

// OpenRecords opens path for appending (created 0644 when missing). An
// empty path returns a writer that discards. Errors: the file cannot be
// opened.
func OpenRecords(path string) (*RecordWriter, error) {
	if path == "" {
		return NewRecordWriter(io.Discard), nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open records: %w", err)
	}
	return &RecordWriter{w: f, c: f}, nil
}

// Write appends r as one line.
func (rw *RecordWriter) Write(r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	b = append(b, '\n')
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if _, err := rw.w.Write(b); err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	return nil
}

// Close closes the file opened by OpenRecords.
func (rw *RecordWriter) Close() error {
	if rw.c == nil {
		return nil
	}
	return rw.c.Close()
}
