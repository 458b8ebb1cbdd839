package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a git repository in a new folder with one commit of
// f.txt ("line one\n") and returns it.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("TEETH needs git: %v", err)
	}
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "f.txt"), []byte("line one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "f.txt"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "one"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return repo
}

// fakeGo is a go command for teeth: it checks that it runs in a worktree
// with f.txt patched (SIM_DEFECT set) or not (unset), with -trimpath, and
// prints go test -json's events: a caught defect (SIM_DEFECT=good), a
// missed one (SIM_DEFECT=missed: the test fails), or the controls.
const fakeGo = `#!/bin/sh
case "$GOFLAGS" in *-trimpath*) ;; *) echo "no -trimpath in GOFLAGS" >&2; exit 3 ;; esac
ev() { printf '{"Action":"%s","Test":"%s","Output":"%s"}\n' "$1" "$2" "$3"; }
case "$SIM_DEFECT" in
good)
  grep -q "line two" f.txt || { echo "f.txt is not patched" >&2; exit 3; }
  ev output TestTeethDefectPutBack/good "    teeth_test.go:85: seed 7, ledger-agrees after step 3: x, shrunk to 2 of 30 events, trace abc123 twice\\n"
  ev pass TestTeethDefectPutBack/good
  ev output TestTeethDefectPutBack "    teeth_test.go:104: with good put back, 12 of the 10000 fixed seeds broke ledger-agrees\\n"
  ev pass TestTeethDefectPutBack
  exit 0 ;;
missed)
  ev output TestTeethDefectPutBack "    teeth_test.go:101: with missed put back, none of the 10000 fixed seeds broke ledger-agrees\\n"
  ev fail TestTeethDefectPutBack
  echo "FAIL	example/worker/sim	1.0s"
  exit 1 ;;
"")
  grep -q "line two" f.txt && { echo "the controls run on a patched tree" >&2; exit 3; }
  ev output TestTeethPlantedDefects/transport_replays_a_POST "    teeth_test.go:155: the plant broke at-most-once in 16 of seeds 0 to 99\\n"
  ev pass TestTeethPlantedDefects/transport_replays_a_POST
  ev pass TestTeethPlantedDefects
  ev pass TestTeethDefectPutBack/good
  ev pass TestTeethDefectPutBack
  exit 0 ;;
esac
echo "unexpected SIM_DEFECT=$SIM_DEFECT" >&2
exit 3
`

// TestTeethPatches: in a scratch repository, a patch that applies and is
// caught, one whose test fails (not caught), and one that no longer
// applies (its row names the patch and what to do); the controls run on
// an unpatched worktree; every worktree and temporary folder is gone
// afterwards, and the repository's own tree is untouched.
func TestTeethPatches(t *testing.T) {
	repo := gitRepo(t)
	patches, tmp, bin := t.TempDir(), t.TempDir(), t.TempDir()
	good := "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1,2 @@\n line one\n+line two\n"
	bad := "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1,2 @@\n line that is not there\n+line two\n"
	for name, body := range map[string]string{"good.patch": good, "missed.patch": good, "stale.patch": bad,
		"README.md": "| patch | defect | invariant |\n|---|---|---|\n| `good` | a defect put back | ledger-agrees |\n"} {
		if err := os.WriteFile(filepath.Join(patches, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd := filepath.Join(bin, "go")
	if err := os.WriteFile(goCmd, []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := teeth{Repo: repo, Patches: patches, Go: goCmd, TempDir: tmp, Log: io.Discard}.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass || len(rep.Defects) != 3 {
		t.Fatalf("pass %t with %d defects; want a failed verdict over 3", rep.Pass, len(rep.Defects))
	}
	byName := map[string]toothResult{}
	for _, d := range rep.Defects {
		byName[d.Name] = d
	}
	if g := byName["good"]; !g.OK || g.Status != toothCaught || g.Broke != 12 || g.Of != 10000 || g.Invariant != "ledger-agrees" ||
		len(g.Seeds) != 1 || g.Seeds[0].Seed != 7 || g.Seeds[0].ShrunkTo != "2 of 30 events" || g.Defect != "a defect put back" {
		t.Errorf("good: %+v", g)
	}
	if m := byName["missed"]; m.OK || m.Status != toothMissed || !strings.Contains(m.Error, "go test with missed put back failed") {
		t.Errorf("missed: %+v", m)
	}
	s := byName["stale"]
	if s.OK || s.Status != toothNoApply {
		t.Errorf("stale: %+v", s)
	}
	for _, want := range []string{filepath.Join(patches, "stale.patch") + " does not apply to HEAD (git apply: ", "re-make it against HEAD", filepath.Join(patches, "README.md")} {
		if !strings.Contains(s.Error, want) {
			t.Errorf("stale's error %q lacks %q", s.Error, want)
		}
	}
	if len(rep.Controls) != 2 || !rep.Controls[0].OK || rep.Controls[0].Name != "transport replays a POST (planted)" || !rep.Controls[1].OK {
		t.Errorf("controls: %+v", rep.Controls)
	}
	emptyDir(t, tmp)
	cmd := exec.Command("git", "worktree", "list")
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
		t.Errorf("git worktree list after the run: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "f.txt")); string(b) != "line one\n" {
		t.Errorf("the repository's f.txt is %q", b)
	}
}

// TestTeethWithoutPatches: no patch is an error before any worktree.
func TestTeethWithoutPatches(t *testing.T) {
	_, err := teeth{Repo: gitRepo(t), Patches: t.TempDir(), Log: io.Discard}.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no *.patch in") {
		t.Errorf("err %v", err)
	}
}
