package audit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
)

// TestOutputsNameEveryCommittedAuditFile: every file of every committed
// audit folder is one Outputs names, so `audit OUT=results/audit/<folder>`
// can refresh it; a file an audit writes and Outputs forgot would make that
// refresh refused (never a deletion). The negative control: a folder with
// one more file of its own is refused.
func TestOutputsNameEveryCommittedAuditFile(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", DefaultDir, "*", outdir.Marker))
	if err != nil || len(dirs) < 10 {
		t.Fatalf("found %d committed audit folders (%v); want the committed ones", len(dirs), err)
	}
	for _, m := range dirs {
		dir := filepath.Dir(m)
		own := Outputs
		if _, err := os.Stat(filepath.Join(dir, BlackBoxJSONFile)); err == nil {
			own = BlackBoxOutputs // a black-box audit's folder
		}
		if err := outdir.CheckFresh(dir, own); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
	copyDir := t.TempDir()
	src := filepath.Join("..", "..", DefaultDir, "go-alimtalk")
	for _, name := range []string{outdir.Marker, "audit.md"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copyDir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := outdir.CheckFresh(copyDir, Outputs); err != nil {
		t.Fatalf("a copy of %s's audit.md: %v", src, err)
	}
	if err := os.WriteFile(filepath.Join(copyDir, "mynote.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := outdir.CheckFresh(copyDir, Outputs); err == nil {
		t.Error("a folder holding mynote.txt was accepted for emptying")
	}
}
