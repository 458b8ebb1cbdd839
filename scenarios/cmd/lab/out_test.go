package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
)

// scratchCheckout plants a folder that looks like a clone (a .git, go.mod,
// a user's file) and returns it with the files' contents.
func scratchCheckout(t *testing.T) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{".git/HEAD": "ref: refs/heads/main\n", "go.mod": "module x\n", "notes.txt": "mine\n"}
	for rel, c := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, files
}

// The trust issue's plant: `./run.sh audit OUT=.` (and OUT=$HOME-like
// folders) deleted the folder. Every command that takes OUT now refuses a
// folder the lab did not make with exit 2, before anything starts, and
// the folder is untouched.
func TestOUTNotMadeByTheLabIsRefusedAndUntouched(t *testing.T) {
	for _, cmd := range []string{"check", "run", "audit-check", "audit", "matrix-check", "matrix", "simulate-check", "simulate"} {
		t.Run(cmd, func(t *testing.T) {
			dir, files := scratchCheckout(t)
			t.Chdir(dir)
			for _, out := range []string{".", dir, "./", dir + "/"} {
				var stdout, stderr bytes.Buffer
				code := exitCode(run(context.Background(), []string{cmd, "OUT=" + out}, noEnv, &stdout), &stderr)
				if code != 2 {
					t.Fatalf("%s OUT=%s: exit %d, want 2 (stderr %q)", cmd, out, code, stderr.String())
				}
				if !strings.Contains(stderr.String(), "OUT") || !strings.Contains(stderr.String(), "name a new folder") {
					t.Errorf("%s OUT=%s: stderr %q does not say what is wrong and what to do", cmd, out, stderr.String())
				}
			}
			for rel, want := range files {
				got, err := os.ReadFile(filepath.Join(dir, rel))
				if err != nil || string(got) != want {
					t.Errorf("%s: %s is %q, %v; want it untouched", cmd, rel, got, err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, outdir.Marker)); err == nil {
				t.Errorf("%s wrote a marker into a refused folder", cmd)
			}
		})
	}
}

// The audit empties its folder; the committed results/ (marked, holding
// other runs' folders) is refused for it, while a run folder of its own is
// accepted.
func TestAuditCheckOUT(t *testing.T) {
	parent := t.TempDir()
	run1 := filepath.Join(parent, "audit", "go-alimtalk")
	if err := outdir.Claim(parent, "r0"); err != nil {
		t.Fatal(err)
	}
	if err := outdir.Claim(run1, "r1"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		out  string
		want int
	}{{parent, 2}, {run1, 0}, {filepath.Join(parent, "new"), 0}} {
		var stdout, stderr bytes.Buffer
		if code := exitCode(run(context.Background(), []string{"audit-check", "OUT=" + tt.out}, noEnv, &stdout), &stderr); code != tt.want {
			t.Errorf("audit-check OUT=%s: exit %d, want %d (stderr %q)", tt.out, code, tt.want, stderr.String())
		}
	}
	// A marked folder of another kind (a scale run) or with a file of
	// one's own: the fresh-user trial's `audit OUT=<copy of results/scale>`
	// emptied it, note included. Now refused before anything starts, and
	// kept.
	for name, files := range map[string]map[string]string{
		"scale run": {"point-grid-worker-w1-c1-18ms.json": "{}", "summary.md": "# scale\n"},
		"own note":  {"bench-pooled-3ms.json": "{}", "mynote.txt": "mine\n"},
	} {
		dir := filepath.Join(parent, "other-"+strings.ReplaceAll(name, " ", "-"))
		if err := outdir.Claim(dir, "r2"); err != nil {
			t.Fatal(err)
		}
		for rel, c := range files {
			if err := os.WriteFile(filepath.Join(dir, rel), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, cmd := range []string{"audit-check", "audit"} {
			var stdout, stderr bytes.Buffer
			if code := exitCode(run(context.Background(), []string{cmd, "OUT=" + dir}, noEnv, &stdout), &stderr); code != 2 ||
				!strings.Contains(stderr.String(), "does not write") && !strings.Contains(stderr.String(), "another command's results") {
				t.Errorf("%s OUT=<%s>: exit %d, stderr %q; want 2 naming the files it does not write", cmd, name, code, stderr.String())
			}
		}
		for rel, want := range files {
			if got, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || string(got) != want {
				t.Errorf("%s: %s is %q, %v; want it untouched", name, rel, got, err)
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if code := exitCode(run(context.Background(), []string{"audit-check", "SCENARIO=broker-cut"}, noEnv, &stdout), &stderr); code != 2 {
		t.Errorf("audit-check SCENARIO=broker-cut: exit %d, want 2", code)
	}
}

// audit-clients empties each client's folder when its turn comes; a file of
// one's own in one of them (here the last client's) is refused before
// anything starts, not after six audits (found by a fresh-user trial),
// and nothing changes.
func TestAuditClientsChecksEveryClientFolder(t *testing.T) {
	parent := t.TempDir()
	if err := outdir.Claim(parent, "r0"); err != nil {
		t.Fatal(err)
	}
	last := filepath.Join(parent, "node-got-alimtalk")
	if err := outdir.Claim(last, "r1"); err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(last, "note.txt")
	if err := os.WriteFile(note, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := exitCode(run(context.Background(), []string{"audit-clients-check", "OUT=" + parent}, noEnv, &stdout), &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "note.txt") {
		t.Errorf("audit-clients-check OUT=<parent with a note in node-got's folder>: exit %d, stderr %q; want 2 naming note.txt", code, stderr.String())
	}
	if b, err := os.ReadFile(note); err != nil || string(b) != "mine\n" {
		t.Errorf("note.txt is %q, %v; want it untouched", b, err)
	}
	if err := os.Remove(note); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := exitCode(run(context.Background(), []string{"audit-clients-check", "OUT=" + parent}, noEnv, &stdout), &stderr); code != 0 {
		t.Errorf("without the note: exit %d, stderr %q; want 0", code, stderr.String())
	}
}

// A command refuses a folder that holds another command's results, where
// its summary and charts would replace theirs (a fresh-user trial: a bench
// into a copy of results/scale replaced its summary; scale OUT=results
// would replace the committed bench summary), before anything starts and
// without touching them; a folder of its own kind is taken.
func TestOUTOfAnotherCommandIsRefused(t *testing.T) {
	folder := func(files ...string) string {
		dir := t.TempDir()
		if err := outdir.Claim(dir, "r0"); err != nil {
			t.Fatal(err)
		}
		for _, f := range append(files, "summary.md") {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("theirs\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	scaleRun, benchRun, matrixRun := folder("point-grid-worker-w1-c1-18ms.json"), folder("bench-pooled-3ms.json"), folder("cell-https-pooled-c1.json")
	simRun := folder(simSummaryJSON)
	for _, tt := range []struct {
		cmd, out string
		want     int
	}{
		{"check", scaleRun, 2}, {"check", matrixRun, 2}, {"check", benchRun, 0},
		{"scale-check", benchRun, 2}, {"scale-check", matrixRun, 2}, {"scale-check", scaleRun, 0},
		{"matrix-check", benchRun, 2}, {"matrix-check", scaleRun, 2}, {"matrix-check", matrixRun, 0},
		{"audit-clients-check", benchRun, 2}, {"audit-clients-check", scaleRun, 2},
		{"check", simRun, 2}, {"scale-check", simRun, 2}, {"matrix-check", simRun, 2}, {"audit-clients-check", simRun, 2},
		{"simulate-check", benchRun, 2}, {"simulate-check", scaleRun, 2}, {"simulate-check", matrixRun, 2}, {"simulate-check", simRun, 0},
	} {
		var stdout, stderr bytes.Buffer
		code := exitCode(run(context.Background(), []string{tt.cmd, "OUT=" + tt.out}, noEnv, &stdout), &stderr)
		if code != tt.want || tt.want == 2 && !strings.Contains(stderr.String(), "another command's results") {
			t.Errorf("%s OUT=%s: exit %d, stderr %q; want %d", tt.cmd, tt.out, code, stderr.String(), tt.want)
		}
	}
	for _, dir := range []string{scaleRun, benchRun, matrixRun, simRun} {
		if b, err := os.ReadFile(filepath.Join(dir, "summary.md")); err != nil || string(b) != "theirs\n" {
			t.Errorf("%s/summary.md is %q, %v; want it untouched", dir, b, err)
		}
	}
}
