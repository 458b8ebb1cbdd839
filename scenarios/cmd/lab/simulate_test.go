package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/sim"
)

// emptyDir fails t when dir holds anything.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Errorf("%s holds %d entries (%s, ...); want nothing written", dir, len(entries), entries[0].Name())
	}
}

// TestSimulateArgs: a bad argument exits 2, says what is wrong and what is
// allowed, and writes nothing (not even the default results/simulate).
func TestSimulateArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string // in stderr
	}{
		{"SEEDS below 1", []string{"SEEDS=0"}, nil, `SEEDS="0": 0 is out of range; allowed: a whole number 1..100000000`},
		{"SEEDS not a number", []string{"SEEDS=many"}, nil, "not a whole number; allowed"},
		{"SEED negative", []string{"SEED=-1"}, nil, "allowed: a whole number 0..18446744073709551615"},
		{"TEETH not 0 or 1", []string{"TEETH=yes"}, nil, "allowed: 0 or 1"},
		{"a word without =", []string{"100"}, nil, "want KEY=VALUE with KEY one of SEEDS, SEED, TEETH, OUT"},
		{"a misspelled key", []string{"SEDS=5"}, nil, "did you mean SEEDS?"},
		{"a key in lower case", []string{"teeth=1"}, nil, "did you mean TEETH?"},
		{"another command's key", []string{"COUNT=5"}, nil, "a key of lab run, not of ./run.sh simulate"},
		{"an unknown key", []string{"FOO=1"}, nil, "unknown key; known keys: SEEDS, SEED, TEETH, OUT"},
		{"OUT beside a replay", []string{"SEED=3", "OUT=x"}, nil, "replays one seed and writes nothing"},
		{"TEETH beside a replay", []string{"SEED=3", "TEETH=1"}, nil, "allowed: TEETH=1 with a run"},
		{"seeds past the last", []string{"SEEDS=3", "SEED=18446744073709551614"}, nil, "SEED at most 18446744073709551613 with SEEDS=3"},
		{"a bad value from the environment", nil, map[string]string{"SEEDS": "-5"}, `bad environment SEEDS="-5"`},
		{"an empty OUT", []string{"OUT="}, nil, "empty path"},
	}
	for _, tt := range tests {
		for _, cmd := range []string{"simulate-check", "simulate"} {
			t.Run(cmd+"/"+tt.name, func(t *testing.T) {
				dir := t.TempDir()
				t.Chdir(dir)
				var stdout, stderr bytes.Buffer
				code := exitCode(run(context.Background(), append([]string{cmd}, tt.args...), func(k string) string { return tt.env[k] }, &stdout), &stderr)
				if code != 2 {
					t.Errorf("exit %d; want 2 (stderr %q)", code, stderr.String())
				}
				if !strings.Contains(stderr.String(), tt.want) || !strings.Contains(stderr.String(), "nothing was started") {
					t.Errorf("stderr %q; want it to contain %q and say nothing was started", stderr.String(), tt.want)
				}
				if stdout.Len() > 0 {
					t.Errorf("stdout %q; want nothing", stdout.String())
				}
				emptyDir(t, dir)
			})
		}
	}
}

// TestSimulateReplay: SEED alone prints the seed's schedule and trace and
// the same trace hash twice, the one an independent run gives; it writes
// nothing.
func TestSimulateReplay(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	if code := exitCode(runSimulate(context.Background(), []string{"SEED=291"}, noEnv, &stdout, &stderr), &stderr); code != 0 {
		t.Fatalf("exit %d (stderr %q)", code, stderr.String())
	}
	out := stdout.String()
	want := sim.RunSeed(291, sim.Options{}).Hash()
	for _, s := range []string{"seed 291: schedule of ", "\n   0 ", "\ntrace:\n", "seed 291: no invariant broken",
		"trace hash: " + want + " (first run), " + want + " (second run): the same trace twice"} {
		if !strings.Contains(out, s) {
			t.Errorf("replay lacks %q:\n%s", s, out)
		}
	}
	emptyDir(t, dir)
}

// TestSimulateReplayFailing: a seed that breaks an invariant (a planted
// POST replay) prints its shrunk schedule and that schedule's trace, and
// its error names the invariant (exit 1).
func TestSimulateReplayFailing(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := replaySeed(&stdout, 6, sim.Options{Plant: sim.Plant{ReplaySends: true}})
	if code := exitCode(err, &stderr); code != 1 || !strings.Contains(stderr.String(), "seed 6 broke "+sim.InvAtMostOnce) {
		t.Errorf("exit %d, stderr %q; want 1 naming %s", code, stderr.String(), sim.InvAtMostOnce)
	}
	out := stdout.String()
	for _, s := range []string{"seed 6: " + sim.InvAtMostOnce, "shrunk schedule (", "trace of the shrunk schedule:", "the same trace twice"} {
		if !strings.Contains(out, s) {
			t.Errorf("replay lacks %q:\n%s", s, out)
		}
	}
}

// TestSimulateWritesSummary: a small run writes summary.md and
// summary.json with the run's provenance into OUT (a folder it marks),
// counts what independent runs of the same seeds count, and says its
// progress on stderr. Without OUT it writes results/simulate.
func TestSimulateWritesSummary(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	args := []string{"SEEDS=40", "SEED=7", "OUT=out"}
	if code := exitCode(runSimulate(context.Background(), args, noEnv, &stdout, &stderr), &stderr); code != 0 {
		t.Fatalf("exit %d (stderr %q)", code, stderr.String())
	}
	steps, checks := 0, 0
	for seed := uint64(7); seed < 47; seed++ {
		r := sim.RunSeed(seed, sim.Options{})
		steps, checks = steps+r.Steps, checks+r.Checks
	}
	var rep simReport
	raw, err := os.ReadFile(filepath.Join(dir, "out", simSummaryJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Schedules != 40 || rep.FirstSeed != 7 || rep.Steps != steps || rep.Checks != checks || !rep.Pass || rep.Verdict != "pass" {
		t.Errorf("summary.json: %d schedules from %d, %d steps, %d checks, verdict %s; want 40 from 7, %d steps, %d checks, pass",
			rep.Schedules, rep.FirstSeed, rep.Steps, rep.Checks, rep.Verdict, steps, checks)
	}
	if rep.Provenance == nil || !slices.Equal(rep.Provenance.Command, append([]string{"simulate"}, args...)) || rep.Provenance.Date == "" || rep.Provenance.Machine.Cores == 0 {
		t.Errorf("summary.json provenance %+v", rep.Provenance)
	}
	md, err := os.ReadFile(filepath.Join(dir, "out", simSummaryMD))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"# Simulation summary\n\nRun " + rep.Provenance.RunID, "Command: `./run.sh simulate SEEDS=40 SEED=7 OUT=out`",
		"images: none", "Verdict: **pass**", "| schedules | 40 (seeds 7 to 46) |", "## Faults that fired", "## Outcomes and settlements"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("summary.md lacks %q:\n%s", s, md)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out", outdir.Marker)); err != nil {
		t.Errorf("OUT carries no marker: %v", err)
	}
	if !regexp.MustCompile(`\[simulate\] 40/40 schedules \(100%\), 0 failing, \d+/s, done in`).MatchString(stderr.String()) {
		t.Errorf("stderr has no final progress line:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "verdict: pass") {
		t.Errorf("stdout %q says no verdict", stdout.String())
	}

	stdout.Reset()
	if err := runSimulate(context.Background(), []string{"SEEDS=3"}, noEnv, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, simDefaultOut, simSummaryMD)); err != nil {
		t.Errorf("without OUT: %v", err)
	}
}

// TestSimulateRefusesForeignOUT: a folder the lab did not make, and one
// holding another command's results (its summary.md would be replaced),
// are refused with exit 2 and left as they were.
func TestSimulateRefusesForeignOUT(t *testing.T) {
	mine := t.TempDir()
	bench := t.TempDir()
	if err := outdir.Claim(bench, "r1"); err != nil {
		t.Fatal(err)
	}
	for dir, files := range map[string][]string{mine: {"notes.txt"}, bench: {"bench-pooled-3ms.json", "summary.md"}} {
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("theirs\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for dir, want := range map[string]string{mine: "name a new folder", bench: "holds another command's results"} {
		var stdout, stderr bytes.Buffer
		code := exitCode(run(context.Background(), []string{"simulate", "SEEDS=5", "OUT=" + dir}, noEnv, &stdout), &stderr)
		if code != 2 || !strings.Contains(stderr.String(), want) {
			t.Errorf("OUT=%s: exit %d, stderr %q; want 2 and %q", dir, code, stderr.String(), want)
		}
		for _, f := range []string{"notes.txt", "summary.md"} {
			if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil && string(b) != "theirs\n" {
				t.Errorf("%s/%s was changed", dir, f)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, simSummaryJSON)); err == nil {
			t.Errorf("OUT=%s: summary.json written into a refused folder", dir)
		}
	}
	if _, err := os.Stat(filepath.Join(mine, outdir.Marker)); err == nil {
		t.Error("a marker was written into a refused folder")
	}
}

// TestSimReportFailure: failing seeds make the verdict fail; the summary
// lists each shrunk seed with its replay command and the command's error
// names them (exit 1). A planted POST replay makes the failures.
func TestSimReportFailure(t *testing.T) {
	sum, err := sim.Run(context.Background(), sim.Options{Seeds: 30, ShrinkPerInvariant: 1, Plant: sim.Plant{ReplaySends: true}})
	if err != nil || len(sum.Failures) == 0 {
		t.Fatalf("%d failures, %v; the plant must break seeds 0 to 29", len(sum.Failures), err)
	}
	out := t.TempDir()
	rep := newSimReport(newProvenance(time.Now(), "simulate", []string{"SEEDS=30"}, nil, nil, vendormock.Images{}), simConfig{Seeds: 30}, sum, 1e9, 2)
	rep.judge()
	if rep.Pass {
		t.Fatal("verdict pass with failing seeds")
	}
	if err := rep.write(out, sum); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, simSummaryMD))
	var stderr bytes.Buffer
	code := exitCode(rep.failure(out), &stderr)
	if code != 1 {
		t.Errorf("exit %d; want 1", code)
	}
	shrunk := 0
	for _, f := range sum.Failures {
		if f.Trace == "" {
			continue
		}
		shrunk++
		seed := strconv.FormatUint(f.Seed, 10)
		replay := "./run.sh simulate SEED=" + seed
		if !strings.Contains(stderr.String(), "seed "+seed+" broke "+f.Violation.Invariant+"; replay: "+replay) {
			t.Errorf("the error does not name seed %d and its replay:\n%s", f.Seed, stderr.String())
		}
		if !strings.Contains(string(md), "`"+replay+"`") || !strings.Contains(string(md), "### seed "+seed) {
			t.Errorf("summary.md lacks seed %d's replay or shrunk schedule", f.Seed)
		}
	}
	if shrunk == 0 || !strings.Contains(string(md), "Verdict: **fail**") {
		t.Errorf("%d shrunk failures; summary:\n%s", shrunk, md)
	}
	var back simReport
	raw, _ := os.ReadFile(filepath.Join(out, simSummaryJSON))
	if err := json.Unmarshal(raw, &back); err != nil || back.FailingSeeds != len(sum.Failures) || len(back.Failures) != len(sum.Failures) || back.Pass {
		t.Errorf("summary.json: %v, %d failing seeds listed %d; want %d", err, back.FailingSeeds, len(back.Failures), len(sum.Failures))
	}
}

// TestSimProgressLines: without a terminal, a line per tenth, the last
// one saying the run is done.
func TestSimProgressLines(t *testing.T) {
	var b bytes.Buffer
	p := newSimProgress(&b, 200)
	for done := 1; done <= 200; done++ {
		p.update(done, done/100)
	}
	p.finish(200, 2)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d lines; want 10:\n%s", len(lines), b.String())
	}
	if !strings.HasPrefix(lines[0], "[simulate] 20/200 schedules (10%), 0 failing, ") || !strings.Contains(lines[0], "/s, ETA ") {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.HasPrefix(lines[9], "[simulate] 200/200 schedules (100%), 2 failing, ") || !strings.Contains(lines[9], "done in ") {
		t.Errorf("last line %q", lines[9])
	}
}
