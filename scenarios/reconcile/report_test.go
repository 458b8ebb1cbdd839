package reconcile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestReconcileCountsAddUp checks the bookkeeping identity on a run with
// one message in every place: without multiple-places violations, the
// outcomes count every published refkey and invalid message once.
func TestReconcileCountsAddUp(t *testing.T) {
	in := mixed()
	r := Reconcile(in)
	sum := 0
	for _, n := range r.ByOutcome {
		sum += n
	}
	if want := r.RefKeys + 2; sum != want { // two invalid messages without a refkey
		t.Errorf("sum(by_outcome) = %d, want %d (%v)", sum, want, r.ByOutcome)
	}
	places := 0
	for _, n := range r.ByPlace {
		places += n
	}
	if places+r.Lost != sum {
		t.Errorf("sum(by_place) + lost = %d + %d, want %d", places, r.Lost, sum)
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func mapsEqual[K comparable](a, b map[K]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// mixed is a run with a message in every place, one lost refkey, one sent
// twice and a dead-lettered invalid message without its reason.
func mixed() Input {
	in := Input{
		Names:  names,
		Queues: map[string][]QueuedMessage{},
	}
	add := func(refkey string) { in.Published = append(in.Published, pub(len(in.Published)+1, refkey)) }
	for _, k := range []string{"sent-1", "sent-2", "dup-1", "rej-1", "retry-1", "unk-1", "held-1", "lost-1", "dead-1"} {
		add(k)
	}
	in.Published = append(in.Published, invalidPub(10, "bad-1"), invalidPub(11, "bad-2"))
	in.Records = []records.Record{
		rec(1, "sent-1", outcome.Sent, ""),
		rec(2, "sent-2", outcome.Sent, ""),
		rec(3, "dup-1", outcome.Sent, ""),
		rec(4, "rej-1", outcome.Rejected, "n.failed"),
		rec(5, "retry-1", outcome.NotSent, "n.retry"),
		rec(6, "unk-1", outcome.Unknown, "n.unknown"),
		rec(7, "held-1", outcome.OutsideSendWindow, "n.held"),
		rec(8, "lost-1", outcome.NotSent, "n.retry"),
		rec(9, "dead-1", outcome.NotSent, "n.dead"),
		rec(10, "", outcome.Invalid, "n.dead"),
		rec(11, "", outcome.Invalid, "n.dead"),
		{Seq: 12, RefKey: "sent-1", Outcome: outcome.Duplicate, Redelivered: true},
	}
	in.Queues["n.failed"] = []QueuedMessage{queued("n.failed", "rej-1", "m-rej-1", outcome.Rejected, "vendor code 3015")}
	in.Queues["n.retry"] = []QueuedMessage{queued("n.retry", "retry-1", "m-retry-1", outcome.NotSent, "dial tcp: connection refused")}
	in.Queues["n.unknown"] = []QueuedMessage{queued("n.unknown", "unk-1", "m-unk-1", outcome.Unknown, "read: connection reset by peer")}
	in.Queues["n.held"] = []QueuedMessage{queued("n.held", "held-1", "m-held-1", outcome.OutsideSendWindow, "ad outside 08:00-20:50 Asia/Seoul")}
	in.Queues["n.dead"] = []QueuedMessage{
		queued("n.dead", "dead-1", "m-dead-1", outcome.NotSent, "5 attempts"),
		queued("n.dead", "", "bad-1", outcome.Invalid, "body is not JSON"),
		queued("n.dead", "", "bad-2", outcome.Invalid, ""),
	}
	in.Ledger = []ledger.Entry{
		entry("sent-1", outcome.Sent, 1), entry("sent-2", outcome.Sent, 1), entry("dup-1", outcome.Sent, 1),
		entry("rej-1", outcome.Rejected, 1), entry("retry-1", outcome.NotSent, 1), entry("unk-1", outcome.Unknown, 1),
		entry("lost-1", outcome.NotSent, 1), entry("dead-1", outcome.NotSent, 5),
	}
	in.Journal = []JournalEntry{
		{Method: "POST", Path: "/v1/token", Status: 200},
		sent("sent-1", 200), sent("sent-2", 200), sent("dup-1", 200), sent("dup-1", 200),
		sent("rej-1", 400), sent("unk-1", 200),
	}
	return in
}

func TestReportGolden(t *testing.T) {
	tests := []struct {
		name string
		in   Input
	}{
		{"clean", clean()},
		{"mixed", mixed()},
		{"published-only", Input{Published: clean().Published}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Reconcile(tt.in)
			var table, js bytes.Buffer
			if err := r.WriteTable(&table); err != nil {
				t.Fatalf("WriteTable: %v", err)
			}
			if err := r.WriteJSON(&js); err != nil {
				t.Fatalf("WriteJSON: %v", err)
			}
			golden(t, tt.name+".table.golden", table.Bytes())
			golden(t, tt.name+".json.golden", js.Bytes())
		})
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestWriteTableCapsViolations(t *testing.T) {
	in := clean()
	for i := range 30 {
		in.Journal = append(in.Journal, sent("x"+string(rune('a'+i)), 200))
	}
	r := Reconcile(in)
	if len(r.Violations) != 30 {
		t.Fatalf("violations = %d, want 30", len(r.Violations))
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if got := bytes.Count(b.Bytes(), []byte(RuleUnpublished)); got != MaxTableViolations {
		t.Errorf("table lists %d violations, want %d", got, MaxTableViolations)
	}
	if !bytes.Contains(b.Bytes(), []byte("10 more in the JSON report")) {
		t.Errorf("table does not say how many were left out:\n%s", b.String())
	}
}
