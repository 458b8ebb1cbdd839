package reports

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
)

func TestFileJournalAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "reports.jsonl")
	for i := range 2 {
		j, err := OpenJournal(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Keep(context.Background(), Record{At: t0, Source: ledger.SourceReport, Report: report("k"+string(rune('1'+i)), "DELIVERED", ""), Verdict: NoEntry}); err != nil {
			t.Fatal(err)
		}
		_ = j.Close()
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines; want 2:\n%s", len(lines), raw)
	}
	var r Record
	if err := json.Unmarshal([]byte(lines[1]), &r); err != nil || r.Report.RefKey != "k2" || r.Verdict != NoEntry {
		t.Errorf("second line = %+v, %v", r, err)
	}
}
