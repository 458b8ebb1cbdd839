package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Trace is the readable history of one run: one line per step, with what
// the step did. Two runs of one schedule give the same lines (Hash).
type Trace struct {
	Lines []string
	cur   []string
}

func (t *Trace) begin(step int, e string) { t.cur = []string{fmt.Sprintf("%3d %s", step, e)} }

func (t *Trace) note(s string) { t.cur = append(t.cur, s) }

func (t *Trace) end() {
	if len(t.cur) > 0 {
		t.Lines = append(t.Lines, strings.Join(t.cur, "\n      "))
	}
	t.cur = nil
}

// Hash returns the hex SHA-256 of the trace's lines.
func (t *Trace) Hash() string {
	h := sha256.New()
	for _, l := range t.Lines {
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// String returns the lines, one per step.
func (t *Trace) String() string { return strings.Join(t.Lines, "\n") }
