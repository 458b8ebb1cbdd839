package reconcile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrMalformedLine is wrapped by ReadPublished when a line is not one JSON
// object of the expected shape; the error names the line. The records file
// has its own reader (records.Read, records.ErrMalformedLine).
var ErrMalformedLine = errors.New("malformed line")

// maxLine bounds one JSON line, bytes.
const maxLine = 1 << 20

// WritePublished appends p to w as one JSON line (the published file the
// lab's driver writes, one line per publish, in publish order; shape in
// Published). Call it after the broker confirmed the publish. Errors are
// the writer's, wrapped.
func WritePublished(w io.Writer, p Published) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("write published: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write published: %w", err)
	}
	return nil
}

// ReadPublished reads a published file (JSON lines written by
// WritePublished; blank lines are skipped). It returns a non-nil slice.
// Errors: ErrMalformedLine (with the line number), or the reader's.
func ReadPublished(r io.Reader) ([]Published, error) {
	out := []Published{}
	err := readLines(r, func(n int, line []byte) error {
		var p Published
		if err := strictUnmarshal(line, &p); err != nil {
			return fmt.Errorf("read published: line %d: %w: %v", n, ErrMalformedLine, err)
		}
		if p.Valid && p.RefKey == "" {
			return fmt.Errorf("read published: line %d: %w: a valid message needs a refkey", n, ErrMalformedLine)
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// ReadPublishedFile is ReadPublished on the file at path.
func ReadPublishedFile(path string) ([]Published, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open published: %w", err)
	}
	defer f.Close()
	return ReadPublished(f)
}

func readLines(r io.Reader, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read lines: %w", err)
	}
	return nil
}

// strictUnmarshal refuses unknown keys: the published file is ours.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}
