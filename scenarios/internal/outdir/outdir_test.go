package outdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testOwned is what the tests' command writes: an audit's shape.
var testOwned = Owned{Files: []string{"bench-*.json", "audit.md"}, Dirs: map[string][]string{"nginx": {"*.log"}}}

func freshOwn(dir, runID string) error { return Fresh(dir, runID, testOwned) }

// plant writes files under dir (relative path -> content) and returns dir.
func plant(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// intact fails the test unless every planted file still holds its content.
func intact(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || string(got) != want {
			t.Errorf("%s: got %q, %v; want %q untouched", rel, got, err, want)
		}
	}
}

// The trust issue's plant: OUT=. in a checkout, OUT=$HOME-like folders, a
// file. Each is refused and nothing is deleted or written.
func TestFreshRefusesWhatTheLabDidNotMake(t *testing.T) {
	checkout := map[string]string{".git/HEAD": "ref: refs/heads/main\n", "go.mod": "module x\n", "README.md": "mine\n"}
	home := map[string]string{".bashrc": "export X=1\n", "notes/todo.txt": "buy milk\n"}
	for name, files := range map[string]map[string]string{"checkout": checkout, "home": home} {
		t.Run(name, func(t *testing.T) {
			dir := plant(t, t.TempDir(), files)
			for _, f := range []func(string, string) error{freshOwn, Claim} {
				err := f(dir, "r1")
				if !errors.Is(err, ErrNotOurs) {
					t.Fatalf("got %v, want ErrNotOurs", err)
				}
			}
			if err := Check(dir); !errors.Is(err, ErrNotOurs) {
				t.Fatalf("Check: got %v, want ErrNotOurs", err)
			}
			intact(t, dir, files)
			if _, err := os.Stat(filepath.Join(dir, Marker)); err == nil {
				t.Error("a marker was written into a refused folder")
			}
		})
	}
	t.Run("file", func(t *testing.T) {
		f := filepath.Join(plant(t, t.TempDir(), map[string]string{"a": "x"}), "a")
		if err := Fresh(f, "r1", testOwned); !errors.Is(err, ErrNotOurs) {
			t.Fatalf("got %v, want ErrNotOurs", err)
		}
	})
}

// A marked folder holding a repository, or other runs' marked folders,
// is still never emptied.
func TestFreshNeverEmptiesARepositoryOrAParentOfRuns(t *testing.T) {
	repo := map[string]string{Marker: "x\n", ".git/HEAD": "ref\n", "src.go": "package x\n"}
	parent := map[string]string{Marker: "x\n", "bench.json": "{}", "audit/go/" + Marker: "x\n", "audit/go/audit.md": "# a\n"}
	for name, files := range map[string]map[string]string{"repo": repo, "parent": parent} {
		t.Run(name, func(t *testing.T) {
			dir := plant(t, t.TempDir(), files)
			if err := Fresh(dir, "r1", testOwned); !errors.Is(err, ErrNotOurs) {
				t.Fatalf("got %v, want ErrNotOurs", err)
			}
			intact(t, dir, files)
		})
	}
}

// A marked folder that also holds what the command does not write (the
// fresh-user trial: a note of one's own, a scale run's points, a file in a
// sub-folder) is refused, and nothing is deleted: the marker says the lab
// made the folder, not every file in it.
func TestFreshKeepsWhatTheCommandDidNotWrite(t *testing.T) {
	for name, extra := range map[string]map[string]string{
		"a user's note":          {"mynote.txt": "mine\n"},
		"another kind of run":    {"point-grid-worker-w1-c1-18ms.json": "{}", "summary.md": "# scale\n"},
		"a file in a sub-folder": {"nginx/keep.txt": "mine\n"},
		"a folder of one's own":  {"mine/a.txt": "x"},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{Marker: "old\n", "bench-old.json": "{}", "nginx/a.log": "x"}
			for k, v := range extra {
				files[k] = v
			}
			dir := plant(t, t.TempDir(), files)
			err := Fresh(dir, "r2", testOwned)
			if !errors.Is(err, ErrNotOurs) {
				t.Fatalf("got %v, want ErrNotOurs", err)
			}
			for k := range extra {
				if !strings.Contains(err.Error(), filepath.ToSlash(k)) && !strings.Contains(err.Error(), strings.Split(k, "/")[0]) {
					t.Errorf("error %q does not name %s", err, k)
				}
			}
			intact(t, dir, files)
		})
	}
}

func TestFreshAndClaimOnTheLabsOwnFolders(t *testing.T) {
	t.Run("missing folder is created and marked", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "b")
		if err := Fresh(dir, "r1", testOwned); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, Marker)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("empty folder is used", func(t *testing.T) {
		dir := t.TempDir()
		if err := Claim(dir, "r1"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("marked folder is emptied by Fresh", func(t *testing.T) {
		dir := plant(t, t.TempDir(), map[string]string{Marker: "old\n", "bench-old.json": "{}", "nginx/a.log": "x"})
		if err := Fresh(dir, "r2", testOwned); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 || entries[0].Name() != Marker {
			t.Fatalf("after Fresh: %v, want only %s", entries, Marker)
		}
		b, _ := os.ReadFile(filepath.Join(dir, Marker))
		if want := "run r2 "; !strings.Contains(string(b), want) {
			t.Errorf("marker %q does not name run r2", b)
		}
	})
	t.Run("marked folder is kept by Claim", func(t *testing.T) {
		files := map[string]string{Marker: "old\n", "bench-old.json": "{}"}
		dir := plant(t, t.TempDir(), files)
		if err := Claim(dir, "r2"); err != nil {
			t.Fatal(err)
		}
		intact(t, dir, map[string]string{"bench-old.json": "{}"})
	})
}

// A run without OUT gets a folder of its own under RunsDir, even when an
// earlier run had the same id, and RunsDir/latest follows the newest; a
// file the user put at that name is never replaced.
func TestRunDirAndLatest(t *testing.T) {
	t.Chdir(t.TempDir())
	dir, id := NewRunDir("20261201T230405Z-abcdef0")
	if dir != filepath.Join(RunsDir, "20261201T230405Z-abcdef0") || id != "20261201T230405Z-abcdef0" {
		t.Fatalf("NewRunDir = %q, %q", dir, id)
	}
	if err := Claim(dir, id); err != nil {
		t.Fatal(err)
	}
	dir2, id2 := NewRunDir("20261201T230405Z-abcdef0")
	if id2 != "20261201T230405Z-abcdef0-2" || dir2 == dir {
		t.Fatalf("second NewRunDir = %q, %q; want a new folder", dir2, id2)
	}
	if err := Claim(dir2, id2); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{id, id2} {
		if err := PointLatest(want); err != nil {
			t.Fatal(err)
		}
		got, err := os.Readlink(filepath.Join(RunsDir, Latest))
		if err != nil || got != want {
			t.Fatalf("latest -> %q (%v); want %q", got, err, want)
		}
	}
	if err := os.Remove(filepath.Join(RunsDir, Latest)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(RunsDir, Latest), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := PointLatest(id); !errors.Is(err, ErrNotOurs) {
		t.Errorf("PointLatest over a user's file = %v; want ErrNotOurs", err)
	}
	if b, _ := os.ReadFile(filepath.Join(RunsDir, Latest)); string(b) != "mine" {
		t.Errorf("the user's file became %q", b)
	}
}
