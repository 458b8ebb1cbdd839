package audit

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
)

// Run used to clear OUT with os.RemoveAll unless it was "" or "results":
// OUT=. removed the checkout. Now a folder the lab did not make is refused
// before any stack starts, and every file in it survives.
func TestRunRefusesAnOUTItDidNotMake(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{".git/HEAD": "ref: refs/heads/main\n", "go.mod": "module x\n", "README.md": "mine\n"}
	for rel, c := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := bench.DefaultConfig()
	cfg.Profile = "../../vendormock/profiles/alimtalk"
	cfg.Out = dir
	err := Run(context.Background(), Options{Config: cfg}, io.Discard)
	if !errors.Is(err, outdir.ErrNotOurs) {
		t.Errorf("Run with OUT=%s: %v, want outdir.ErrNotOurs", dir, err)
	}
	for rel, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || string(got) != want {
			t.Errorf("%s is %q, %v after Run; want it untouched", rel, got, err)
		}
	}
}
