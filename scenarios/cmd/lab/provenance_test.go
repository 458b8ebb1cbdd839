package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// newProvenance records the commit (from git here: a test binary carries
// no vcs stamp), the words as given and the keys that came from the
// environment only, the machine, the images and the start time, and names
// the run "<UTC time>-<short commit>".
func TestNewProvenance(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("no git checkout: %v", err)
	}
	commit := strings.TrimSpace(string(head))
	now := time.Date(2026, 12, 1, 23, 4, 5, 0, time.FixedZone("KST", 9*3600))
	env := map[string]string{"RTTS": "3", "COUNT": "9", "NOT_A_KEY": "x"}
	p := newProvenance(now, "run", []string{"COUNT=5", "MODES=pooled"}, benchKeyNames(),
		func(k string) string { return env[k] }, vendormock.Images{Kind: "offline", Worker: "notifier-lab/worker:abc"})
	if p.Commit != commit || p.CommitSource != "git" {
		t.Errorf("commit %q from %q; want %q from git", p.Commit, p.CommitSource, commit)
	}
	if want := "20261201T140405Z-" + commit[:7]; p.RunID != want {
		t.Errorf("RunID = %q; want %q", p.RunID, want)
	}
	if !slices.Equal(p.Command, []string{"run", "COUNT=5", "MODES=pooled"}) || !slices.Equal(p.EnvKeys, []string{"RTTS=3"}) {
		t.Errorf("Command %q, EnvKeys %q; want the words, and RTTS=3 alone from the environment (a word wins)", p.Command, p.EnvKeys)
	}
	if p.Date != "2026-12-01T14:04:05Z" {
		t.Errorf("Date = %q; want UTC", p.Date)
	}
	m := p.Machine
	if m.Cores != runtime.NumCPU() || m.OS != runtime.GOOS || m.Arch != runtime.GOARCH {
		t.Errorf("Machine = %+v", m)
	}
	if runtime.GOOS == "linux" && (m.Kernel == "" || m.CPUModel == "") {
		t.Errorf("Machine on Linux without kernel or CPU model: %+v", m)
	}
	if p.Images.Kind != "offline" || p.Images.Worker != "notifier-lab/worker:abc" {
		t.Errorf("Images = %+v", p.Images)
	}
}

// A bench file written with a run's provenance carries it under
// "provenance": commit, dirty, command, machine, images and date, as
// other tools read the JSON.
func TestWrittenResultCarriesProvenance(t *testing.T) {
	p := newProvenance(time.Now(), "run", []string{"COUNT=50"}, benchKeyNames(), noEnv, vendormock.Images{Kind: "offline", Worker: "w:1"})
	dir := t.TempDir()
	r := results.Result{Mode: "pooled", RTTMS: 3, Provenance: p}
	if err := results.WriteResult(dir, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, results.ResultFile(r)))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Provenance map[string]any `json:"provenance"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"run_id", "commit", "dirty", "command", "machine", "images", "date"} {
		if _, ok := file.Provenance[k]; !ok {
			t.Errorf("%s has no provenance.%s:\n%s", results.ResultFile(r), k, b)
		}
	}
	if c, _ := file.Provenance["commit"].(string); c == "" || c != p.Commit {
		t.Errorf("provenance.commit = %q; want %q", c, p.Commit)
	}
}

// A run without OUT that wrote a result becomes results/runs/latest; one
// whose folder got nothing but the marker (the stack did not start) leaves
// no folder behind and latest keeps naming the earlier run.
func TestFinishRunLatest(t *testing.T) {
	t.Chdir(t.TempDir())
	good, goodID := outdir.NewRunDir("20261201T100000Z-aaaaaaa")
	if err := outdir.Claim(good, goodID); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(good, "bench-pooled-3ms.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	if err := finishRun(&said, true, good, goodID, nil); err != nil {
		t.Fatal(err)
	}
	if want := "results of this run: " + good + "/\n"; said.String() != want {
		t.Errorf("last line %q; want %q", said.String(), want)
	}
	// With this run's passing verdict, the verdict comes just before;
	// another run's verdict is not shown.
	for _, tt := range []struct{ id, want string }{
		{goodID, "verdict: pass: the 1 check passed"},
		{"20261130T000000Z-zzzzzzz", ""},
	} {
		v := results.NewVerdict([]results.Check{{Name: "delivery", Pass: true}}, &results.Provenance{RunID: tt.id})
		if err := results.WriteVerdict(good, v); err != nil {
			t.Fatal(err)
		}
		said.Reset()
		if err := finishRun(&said, true, good, goodID, nil); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(said.String(), "\n"), "\n")
		if tt.want == "" && len(lines) != 1 || tt.want != "" && (len(lines) != 2 || !strings.HasPrefix(lines[0], tt.want)) {
			t.Errorf("verdict of run %s: said %q; want %q first", tt.id, said.String(), tt.want)
		}
	}
	failed, failedID := outdir.NewRunDir("20261201T110000Z-aaaaaaa")
	if err := outdir.Claim(failed, failedID); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(failed, "nginx"), 0o755); err != nil {
		t.Fatal(err)
	}
	runErr := errors.New("start stack: timeout")
	said.Reset()
	if err := finishRun(&said, true, failed, failedID, runErr); !errors.Is(err, runErr) {
		t.Errorf("finishRun = %v; want the run's error", err)
	}
	if said.Len() != 0 {
		t.Errorf("a failed run said %q; its error is its last line", said.String())
	}
	if _, err := os.Stat(failed); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed run's empty folder is still there (%v)", err)
	}
	if got, err := os.Readlink(filepath.Join(outdir.RunsDir, outdir.Latest)); err != nil || got != goodID {
		t.Errorf("latest -> %q (%v); want %q", got, err, goodID)
	}
}

// gitCodeDirty calls a checkout dirty for a changed code file, not for a
// changed result file under results/: a second reference run in one
// checkout rewrites the first one's files and is still clean.
func TestGitCodeDirtyIgnoresResults(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed for this test: %v", err)
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=lab", "-c", "user.email=lab@example.invalid"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("main.go", "package main\n")
	write("results/summary.md", "run 1\n")
	git("add", ".")
	git("commit", "-q", "-m", "first")

	write("results/summary.md", "run 2\n")
	if dirty, known := gitCodeDirty(dir); !known || dirty {
		t.Errorf("results/ rewritten: gitCodeDirty = %v (known %v), want clean", dirty, known)
	}
	write("main.go", "package main // changed\n")
	if dirty, known := gitCodeDirty(dir); !known || !dirty {
		t.Errorf("main.go changed: gitCodeDirty = %v (known %v), want dirty", dirty, known)
	}
	if _, known := gitCodeDirty(t.TempDir()); known {
		t.Error("outside a checkout: known = true, want false")
	}
}
