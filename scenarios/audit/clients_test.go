package audit

import (
	"encoding/json"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantClientAudit copies the fixture's result files into parent/folder
// as an audit of worker (the fixture's node-agent-nokeepalive runs
// renamed), with its audit.json.
func plantClientAudit(t *testing.T, parent, folder, worker string) {
	t.Helper()
	dir := filepath.Join(parent, folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fixture files: %v (%d)", err, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.ReplaceAll(filepath.Base(f), "node-agent-nokeepalive", worker)
		b = []byte(strings.ReplaceAll(string(b), `"node-agent-nokeepalive"`, `"`+worker+`"`))
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.Marshal(Report{Worker: worker, Profile: "alimtalk", Date: fixtureDate})
	if err := os.WriteFile(filepath.Join(dir, RulesFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCompare: the page lists the third-party clients' audits only,
// failures first with their evidence, the figures beside the Go worker's,
// and the HTML is one self-contained page.
func TestCompare(t *testing.T) {
	parent := t.TempDir()
	plantClientAudit(t, parent, "node-got-alimtalk", "node-got")
	plantClientAudit(t, parent, "node-agent-nokeepalive-alimtalk", "node-agent-nokeepalive") // ours, not a third-party client
	c, err := Compare(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 1 || c.Rows[0].Worker != "node-got" {
		t.Fatalf("rows %+v; want node-got alone", c.Rows)
	}
	row := c.Rows[0]
	if row.Pass || len(row.RTTs) != 2 || row.RTTs[0].GoCPUMS < 0 {
		t.Errorf("row %+v; want a failed audit with two RTTs and the Go worker's CPU beside", row)
	}
	if err := WriteComparison(parent, c); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(parent, ClientsMarkdown))
	page, _ := os.ReadFile(filepath.Join(parent, ClientsHTML))
	for _, want := range []string{"## Failures first\n\n- node-got on alimtalk: FAIL", "one new connection per send at 3 ms", "| node-got | alimtalk | 30 | 3 | 35 / 35 | 1.000 |", "keeps no idle connection"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("clients.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Index(string(md), "Failures first") > strings.Index(string(md), "## Figures") {
		t.Errorf("clients.md: failures must come first")
	}
	for _, want := range []string{`data-client="node-got-alimtalk"`, "<style>", `href="node-got-alimtalk/audit.html"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("clients.html lacks %q", want)
		}
	}
	for _, bad := range []string{"<script src", "<link", "<img", "@import", "url(http"} {
		if strings.Contains(string(page), bad) {
			t.Errorf("clients.html contains %q: it must be one self-contained page", bad)
		}
	}
}

// TestCompareNothing: a folder without a third-party client's audit is an
// error, not an empty page.
func TestCompareNothing(t *testing.T) {
	parent := t.TempDir()
	plantClientAudit(t, parent, "node-agent-nokeepalive-alimtalk", "node-agent-nokeepalive")
	if _, err := Compare(parent); err == nil || !strings.Contains(err.Error(), "no audit of a third-party client") {
		t.Errorf("Compare = %v; want no audit of a third-party client", err)
	}
}

// TestKeptErrors: a rebuilt report keeps a battery step that left no
// file (the negative control: without it the faults step's failure would
// vanish from the page), and drops one whose files are there now.
func TestKeptErrors(t *testing.T) {
	parent := t.TempDir()
	plantClientAudit(t, parent, "node-got-alimtalk", "node-got")
	dir := filepath.Join(parent, "node-got-alimtalk")
	old := Report{Rules: []Rule{
		{ID: "battery", Evidence: "bench: start stack: start rabbitmq: service not ready"},
		{ID: "battery", Evidence: "faults: start stack: start rabbitmq: service not ready"},
	}}
	if got := KeptErrors(dir, old); len(got) != 0 {
		t.Errorf("KeptErrors = %q; want none (bench and faults files are there)", got)
	}
	checkFailed := Report{Rules: []Rule{{ID: "battery", Evidence: "bench: delivery check failed: 1 broken invariant(s)"}}}
	if got := KeptErrors(dir, checkFailed); len(got) != 1 {
		t.Errorf("KeptErrors = %q; want the failed delivery check kept (the step ran)", got)
	}
	if err := os.Remove(filepath.Join(dir, "faults.json")); err != nil {
		t.Fatal(err)
	}
	got := KeptErrors(dir, old)
	if len(got) != 1 || !strings.HasPrefix(got[0], "faults:") {
		t.Fatalf("KeptErrors = %q; want the faults step's failure", got)
	}
	b, _ := json.Marshal(Report{Worker: "node-got", Profile: "alimtalk", Rules: old.Rules})
	if err := os.WriteFile(filepath.Join(dir, RulesFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Compare(parent)
	if err != nil {
		t.Fatal(err)
	}
	if line := findingLine(c.Rows[0]); !strings.Contains(line, "The battery ran: faults: start stack") {
		t.Errorf("finding %q; want the faults step that did not run", line)
	}
}

// TestProvenanceSection: each audit's commit is listed; one commit is said
// once, several (or an audit without a record) are flagged.
func TestProvenanceSection(t *testing.T) {
	at := func(c string) *results.Provenance {
		return &results.Provenance{Commit: c, Date: "2026-12-02T05:00:00Z", Command: []string{"audit-clients", "PROFILE=alimtalk"}}
	}
	one := provenanceSection([]ClientRow{{Folder: "a", Provenance: at("f0e696d0000000")}, {Folder: "b", Provenance: at("f0e696d0000000")}})
	if !strings.Contains(one, "| a | f0e696d00000 |") || !strings.Contains(one, "Every audit on this page ran at commit f0e696d00000.") {
		t.Errorf("one commit:\n%s", one)
	}
	mixed := provenanceSection([]ClientRow{{Folder: "a", Provenance: at("f0e696d0000000")}, {Folder: "old"}})
	if !strings.Contains(mixed, "| old | not recorded |") || !strings.Contains(mixed, "2 different commits") {
		t.Errorf("mixed:\n%s", mixed)
	}
}

// TestCompareShowsVerdictChanges: the page lists verdict-changes.md's
// lines under "Verdicts changed"; without the file there is no section.
func TestCompareShowsVerdictChanges(t *testing.T) {
	parent := t.TempDir()
	plantClientAudit(t, parent, "node-got-alimtalk", "node-got")
	c, err := Compare(parent)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ComparisonMarkdown(c), "## Verdicts changed") {
		t.Errorf("a section without %s", ChangesFile)
	}
	if err := os.WriteFile(filepath.Join(parent, ChangesFile), []byte("# x\n\n- node-got, idle timeout: PASS -> N/A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err = Compare(parent); err != nil {
		t.Fatal(err)
	}
	if err := WriteComparison(parent, c); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(parent, ClientsMarkdown))
	page, _ := os.ReadFile(filepath.Join(parent, ClientsHTML))
	if !strings.Contains(string(md), "## Verdicts changed\n\nWhen the audits were last regenerated (verdict-changes.md names the commits):\n\n- node-got, idle timeout: PASS -&gt; N/A") &&
		!strings.Contains(string(md), "- node-got, idle timeout: PASS -> N/A") {
		t.Errorf("clients.md lacks the change:\n%s", md)
	}
	if !strings.Contains(string(page), "<li>node-got, idle timeout: PASS -&gt; N/A</li>") {
		t.Errorf("clients.html lacks the change")
	}
}
