package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

func TestWriteThenRead(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	in := []Record{
		{Seq: 1, RefKey: "a", Outcome: outcome.Sent, Replica: "worker-1"},
		{Seq: 2, RefKey: "b", Outcome: outcome.Unknown, Error: "reset"},
	}
	for _, r := range in {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].RefKey != "a" || got[0].Replica != "worker-1" || got[1].Outcome != outcome.Unknown || got[1].Error != "reset" {
		t.Fatalf("read back %+v", got)
	}
}

func TestReadMalformedNamesLine(t *testing.T) {
	_, err := Read(strings.NewReader("{\"seq\":1}\n\n{oops\n"))
	if !errors.Is(err, ErrMalformedLine) || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("err = %v; want ErrMalformedLine naming line 3", err)
	}
}

func TestReadFileMissing(t *testing.T) {
	_, err := ReadFile(filepath.Join(t.TempDir(), "none.jsonl"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v; want ErrNotExist", err)
	}
}

// TestTailPartialLine: a line without its newline yet is not returned until
// the newline arrives, and nothing is returned twice.
func TestTailPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	tl := NewTail(path)
	if recs, err := tl.Poll(); err != nil || len(recs) != 0 {
		t.Fatalf("missing file: %v, %v; want none, nil", recs, err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(s string) {
		t.Helper()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"seq":1,"refkey":"a","outcome":"SENT"}` + "\n" + `{"seq":2,"ref`)
	recs, err := tl.Poll()
	if err != nil || len(recs) != 1 || recs[0].RefKey != "a" {
		t.Fatalf("first poll: %+v, %v; want only a", recs, err)
	}
	write(`key":"b","outcome":"NOT_SENT"}` + "\n")
	recs, err = tl.Poll()
	if err != nil || len(recs) != 1 || recs[0].RefKey != "b" || recs[0].Outcome != outcome.NotSent {
		t.Fatalf("second poll: %+v, %v; want only b", recs, err)
	}
	if recs, _ := tl.Poll(); len(recs) != 0 {
		t.Fatalf("third poll returned %d records; want 0", len(recs))
	}
	if tl.Lines() != 2 {
		t.Fatalf("Lines() = %d; want 2", tl.Lines())
	}
}

func TestOpenContinuesSeqAfterTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	if err := os.WriteFile(path, []byte(`{"seq":3}`+"\n"+`{"seq":4,"refk`), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if w.LastSeq() != 3 {
		t.Fatalf("LastSeq = %d; want 3 (the torn line does not count)", w.LastSeq())
	}
	if err := w.Write(Record{Seq: 4, RefKey: "c"}); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[2], `{"seq":4,"refkey":"c"`) {
		t.Fatalf("file after append: %q; want the new record on a line of its own", b)
	}
}

// TestWriteSameAsMarshal: Write's line is exactly json.Marshal's encoding
// of the Record and one newline, line after line (its buffer is reused).
func TestWriteSameAsMarshal(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	recs := []Record{
		{Seq: 1, RefKey: "a<b>&c", Error: "long error text " + strings.Repeat("x", 300)},
		{Seq: 2, RefKey: "short"},
	}
	var want []byte
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		want = append(append(want, b...), '\n')
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("Write wrote\n%s\nwant\n%s", out.Bytes(), want)
	}
}
