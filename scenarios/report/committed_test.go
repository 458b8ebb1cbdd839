package report

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// provenanceProblem says what a result file lacks of the provenance every
// result file carries (docs/results.md, "Provenance"), "" when nothing:
// a JSON file must be one object whose "provenance" names a commit, a
// command and a machine; a rendered page (summary.md, faults.md,
// audit.md, clients.md, an idle race's page) must show the provenance
// header ("at commit") or, for clients.md, its Provenance section.
func provenanceProblem(name string, raw []byte) string {
	switch {
	case strings.HasSuffix(name, ".json"):
		var doc struct {
			Provenance *results.Provenance `json:"provenance"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return "not one JSON object: " + err.Error()
		}
		if p := doc.Provenance; p == nil || p.Commit == "" || len(p.Command) == 0 || p.Machine.Cores == 0 {
			return "no provenance with commit, command and machine"
		}
	case rendered(filepath.Base(name)):
		if !strings.Contains(string(raw), "at commit ") && !strings.Contains(string(raw), "## Provenance") {
			return "no provenance header"
		}
	}
	return ""
}

// rendered names the pages the lab renders from a run's JSON.
func rendered(base string) bool {
	switch base {
	case "summary.md", "faults.md", "audit.md", "clients.md", "audit-idle-race.md":
		return true
	}
	return strings.HasPrefix(base, "idle-race") && strings.HasSuffix(base, ".md")
}

// TestCommittedResultsCarryProvenance walks the committed results/
// (results/runs/, the per-run folders, is not committed) and fails on any
// result file without its provenance; the planted files show the check
// catches each kind.
func TestCommittedResultsCarryProvenance(t *testing.T) {
	for name, body := range map[string]string{
		"a.json":        `{"rtt_ms": 3}`,
		"list.json":     `[{"name": "x"}]`,
		"nocommit.json": `{"provenance": {"command": ["run"], "machine": {"cores": 2}}}`,
		"faults.md":     "# Fault scenarios\n\n| fault |\n",
		"idle-race.md":  "# Idle race\n",
	} {
		if provenanceProblem(name, []byte(body)) == "" {
			t.Errorf("planted %s passed the check", name)
		}
	}
	good := `{"provenance": {"commit": "abc", "command": ["run"], "machine": {"cores": 2}}}`
	if p := provenanceProblem("b.json", []byte(good)); p != "" {
		t.Errorf("a file with provenance: %s", p)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(wd, "..", "..", "results")
	var bad []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "runs" && filepath.Dir(path) == root {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if p := provenanceProblem(path, raw); p != "" {
			rel, _ := filepath.Rel(root, path)
			bad = append(bad, fmt.Sprintf("results/%s: %s", rel, p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}
