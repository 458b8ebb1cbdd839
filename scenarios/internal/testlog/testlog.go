// Package testlog is the tests' log writer: each complete line goes to
// t.Log, and everything written is kept for assertions on the log. Only
// tests import it.
package testlog

import (
	"bytes"
	"strings"
	"testing"
)

// Writer sends each complete line to t.Log (the text reporter writes
// through a tabwriter in pieces, so lines are buffered until '\n').
type Writer struct {
	t   *testing.T
	buf *bytes.Buffer
	all *bytes.Buffer
}

// New returns a Writer logging to t.
func New(t *testing.T) Writer {
	return Writer{t: t, buf: new(bytes.Buffer), all: new(bytes.Buffer)}
}

// String is everything written so far.
func (w Writer) String() string { return w.all.String() }

// Write logs every complete line of b and keeps the rest for the next
// call; it never fails.
func (w Writer) Write(b []byte) (int, error) {
	w.t.Helper()
	w.all.Write(b)
	w.buf.Write(b)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil { // no complete line left: keep the rest
			w.buf.Reset()
			w.buf.WriteString(line)
			return len(b), nil
		}
		w.t.Log(strings.TrimRight(line, "\n"))
	}
}
