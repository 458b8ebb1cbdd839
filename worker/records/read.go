package records

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrMalformedLine is wrapped by Read and Tail.Poll when a complete line is
// not one JSON object; the error names the line number (1-based).
var ErrMalformedLine = errors.New("malformed records line")

// MaxLine bounds one records line, bytes.
const MaxLine = 1 << 20

// Read reads a whole records file. Blank lines are skipped; it returns a
// non-nil slice. Errors: ErrMalformedLine (with the line number), or the
// reader's.
func Read(r io.Reader) ([]Record, error) {
	out := []Record{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		rec, err := decode(line, n)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read records: %w", err)
	}
	return out, nil
}

// ReadFile is Read on the file at path. Errors: the file cannot be opened
// (wrapped, so errors.Is(err, fs.ErrNotExist) works), or Read's.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open records: %w", err)
	}
	defer f.Close()
	return Read(f)
}

func decode(line []byte, n int) (Record, error) {
	var rec Record
	if err := json.Unmarshal(line, &rec); err != nil {
		return Record{}, fmt.Errorf("records line %d: %w: %v", n, ErrMalformedLine, err)
	}
	return rec, nil
}

// Tail reads a records file that a worker is still appending to, a little
// at a time: each Poll returns only the complete lines added since the last
// one. A missing file reads as empty; a partial last line waits for its
// newline. The zero value is not usable: use NewTail.
type Tail struct {
	path    string
	off     int64
	partial []byte
	lines   int
}

// NewTail tails the records file at path.
func NewTail(path string) *Tail { return &Tail{path: path} }

// Lines is the number of complete lines read so far, blank lines included.
func (t *Tail) Lines() int { return t.lines }

// Poll returns the records appended since the last Poll (possibly none).
// Errors: the file exists but cannot be read, or ErrMalformedLine naming
// the line; the lines before the bad one are returned with the error.
func (t *Tail) Poll() ([]Record, error) {
	f, err := os.Open(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open records: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return nil, fmt.Errorf("seek records: %w", err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read records: %w", err)
	}
	t.off += int64(len(b))
	b = append(t.partial, b...)
	var out []Record
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimSpace(b[:i])
		b = b[i+1:]
		t.lines++
		if len(line) == 0 {
			continue
		}
		rec, err := decode(line, t.lines)
		if err != nil {
			t.partial = append([]byte(nil), b...)
			return out, err
		}
		out = append(out, rec)
	}
	t.partial = append([]byte(nil), b...)
	return out, nil
}
