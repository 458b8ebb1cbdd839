package fault

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// TestRenderPages: an older folder (pages without the provenance header,
// a bare not-applicable list) is re-rendered from its JSON: faults.md and
// the idle race's page get the header, the list gets faults.json's
// provenance; a folder with neither file writes nothing.
func TestRenderPages(t *testing.T) {
	out := t.TempDir()
	prov := &results.Provenance{RunID: "r1", Commit: "f0e696d", Command: []string{"audit", "WORKER=java-shared"}, Date: "2026-12-02T05:00:00Z"}
	write := func(name string, v any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("faults.json", FaultsFile{Faults: []Verdict{{Name: "broker-cut", Tool: "toxiproxy", Pass: true}}, Pass: true, Provenance: prov})
	write(NotApplicableFile, []NotApplicable{{Name: "rolling-deploy", Reason: "Go worker only"}})
	write("audit-idle-race.json", IdleRaceResult{Scenario: "audit-idle-race", Provenance: prov})
	if err := os.WriteFile(filepath.Join(out, "faults.md"), []byte("# Fault scenarios\n\nold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "summary.md"), []byte("<!-- faults:begin -->\nold\n<!-- faults:end -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wrote, err := RenderPages(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(wrote) != 4 {
		t.Errorf("wrote %v; want faults.md, summary.md, the list and the race's page", wrote)
	}
	for _, name := range []string{"faults.md", "audit-idle-race.md", "summary.md"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || !strings.Contains(string(b), "Run r1 at commit f0e696d") {
			t.Errorf("%s lacks the header (%v):\n%s", name, err, b)
		}
	}
	var l NotApplicableList
	b, _ := os.ReadFile(filepath.Join(out, NotApplicableFile))
	if err := json.Unmarshal(b, &l); err != nil || l.Provenance == nil || l.Provenance.Commit != "f0e696d" || len(l.Scenarios) != 1 {
		t.Errorf("not-applicable list = %s (%v); want faults.json's provenance and the scenario", b, err)
	}
	if wrote, err := RenderPages(t.TempDir()); err != nil || len(wrote) != 0 {
		t.Errorf("empty folder: wrote %v, %v; want nothing", wrote, err)
	}
}

// TestFaultsTableMarksPlantedLoss: a negative control's expected loss is
// marked planted in the table, like its duplicates, so a reader tells it
// from a failure.
func TestFaultsTableMarksPlantedLoss(t *testing.T) {
	var b strings.Builder
	v := Verdict{Name: "cluster-classic-held", Tool: "broker", Pass: true, Lost: 10}
	v.Expected.Lost = 10
	if err := WriteFaultsTable(&b, []Verdict{v}, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "lost 10 (planted)") {
		t.Errorf("table lacks the planted loss:\n%s", b.String())
	}
}
