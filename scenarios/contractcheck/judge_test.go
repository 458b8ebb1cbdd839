package contractcheck

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// kept is the evidence of a worker that keeps the contract.
func kept() Evidence {
	zero := 0
	return Evidence{
		Queues:     map[string]string{"q": "", "q.dead": ""},
		QueueOrder: []string{"q", "q.dead"},
		Records: []records.Record{
			{RefKey: "v1", Outcome: outcome.Sent}, {RefKey: "v2", Outcome: outcome.Sent},
			{RefKey: "bad", Outcome: outcome.Invalid, Error: "recipient: missing"}, {RefKey: "v1", Outcome: outcome.Duplicate},
		},
		Sends:        map[string]int{"v1": 1, "v2": 1},
		Logged:       map[string]bool{"v1": true, "v2": true},
		DeadOutcomes: map[string]string{"bad": "INVALID"},
		Valid:        []string{"v1", "v2"}, Invalid: "bad", Again: "v1",
		Exit: &zero, Grace: 15 * time.Second, Header: "X-Refkey",
	}
}

func TestGapsNoneForAWorkerThatKeepsTheContract(t *testing.T) {
	if g := Gaps(kept()); len(g) != 0 {
		t.Fatalf("gaps %v", g)
	}
	e, jvm := kept(), 143
	e.Exit = &jvm // the JVM's status after SIGTERM
	if g := Gaps(e); len(g) != 0 {
		t.Fatalf("exit 143: gaps %v", g)
	}
}

// Each planted breach is named.
func TestGapsNameEachPlantedBreach(t *testing.T) {
	one := 1
	for _, c := range []struct {
		name  string
		plant func(*Evidence)
		want  string
	}{
		{"no consumer", func(e *Evidence) { e.Consumer = "queue never declared within 1m0s" }, "did not consume QUEUE"},
		{"queue missing", func(e *Evidence) { e.Queues["q.dead"] = "missing" }, "queue q.dead was never declared"},
		{"queue args", func(e *Evidence) { e.Queues["q"] = "arguments differ" }, "queue q: arguments differ"},
		{"no records", func(e *Evidence) { e.RecordsErr, e.Records = "not written", nil }, "records file: not written"},
		{"schema", func(e *Evidence) { e.SchemaErrs = []string{"line 2: missing cpu_ms"} }, "records line 2: missing cpu_ms"},
		{"sent twice", func(e *Evidence) { e.Sends["v2"] = 2 }, "valid message v2: 2 sends"},
		{"no header", func(e *Evidence) { delete(e.Logged, "v2") }, "without the correlation header X-Refkey"},
		{"invalid sent", func(e *Evidence) { e.Sends["bad"] = 1 }, "invalid message bad (no recipient) was sent"},
		{"invalid acked", func(e *Evidence) { delete(e.DeadOutcomes, "bad") }, "invalid message bad: not in QUEUE.dead"},
		{"invalid no reason", func(e *Evidence) { e.Records[2].Error = "" }, "no INVALID record with its reason"},
		{"re-sent", func(e *Evidence) { e.Sends["v1"] = 2 }, "published again after it was sent: sent 2 times"},
		{"no DUPLICATE record", func(e *Evidence) { e.Records = e.Records[:3] }, "want a second one (DUPLICATE)"},
		{"no exit", func(e *Evidence) { e.Exit = nil }, "did not exit within 15s of SIGTERM"},
		{"exit 1", func(e *Evidence) { e.Exit = &one }, "exited with status 1"},
		{"exited early", func(e *Evidence) { e.Exit, e.ExitedEarly = &one, true }, "exited by itself with status 1 before SIGTERM"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := kept()
			c.plant(&e)
			var got []string
			for _, g := range Gaps(e) {
				got = append(got, g.What)
			}
			if !strings.Contains(strings.Join(got, "\n"), c.want) {
				t.Fatalf("gaps %q; want one naming %q", got, c.want)
			}
		})
	}
}

// The records line schema is embedded and rejects a line without cpu_ms.
func TestReadRecordsValidatesEachLine(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/records.jsonl"
	good := `{"refkey":"a","outcome":"SENT","start":"2026-12-05T01:00:00Z","end":"2026-12-05T01:00:01Z","total_ms":3,"cpu_ms":1}`
	bad := `{"refkey":"b","outcome":"SENT","start":"2026-12-05T01:00:00Z","end":"2026-12-05T01:00:01Z","total_ms":3}`
	if err := writeFile(path, good+"\n"+bad+"\n"); err != nil {
		t.Fatal(err)
	}
	recs, schemaErrs, fileErr := readRecords(path)
	if fileErr != "" || len(recs) != 2 || len(schemaErrs) != 1 || !strings.HasPrefix(schemaErrs[0], "line 2:") || !strings.Contains(schemaErrs[0], "cpu_ms") {
		t.Fatalf("recs %d, schema errors %q, file %q", len(recs), schemaErrs, fileErr)
	}
	if _, _, fileErr := readRecords(dir + "/none.jsonl"); !strings.HasPrefix(fileErr, "not written") {
		t.Fatalf("missing file: %q", fileErr)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }
