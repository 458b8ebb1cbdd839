package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// gitTimeout bounds the git calls of the fallback commit lookup.
const gitTimeout = 5 * time.Second

// newProvenance fills the invocation's results.Provenance once, here at
// the command's edge: the commit (buildCommit, else gitCommit), the
// command line (cmd and its words; then every key of keyNames that came
// from the environment only, as "NAME=VALUE"), the machine
// (bench.DescribeMachine), the images and the start time now (UTC).
func newProvenance(now time.Time, cmd string, args []string, keyNames []string, getenv func(string) string, images vendormock.Images) *results.Provenance {
	p := &results.Provenance{
		Command: append([]string{cmd}, args...),
		Machine: bench.DescribeMachine(),
		Images:  results.ImagesInfoOf(images),
		Date:    now.UTC().Format(time.RFC3339),
	}
	for _, name := range keyNames {
		if given(args, nil, name) || getenv == nil {
			continue
		}
		if v := getenv(name); v != "" {
			p.EnvKeys = append(p.EnvKeys, name+"="+v)
		}
	}
	if rev, dirty, ok := buildCommit(); ok {
		if dirty {
			// go build's stamp counts the result folders too: a second
			// reference run in one checkout would read as dirty because of
			// the first one's files. Ask git about the code alone.
			if codeDirty, known := gitCodeDirty("."); known {
				dirty = codeDirty
			}
		}
		p.Commit, p.Dirty, p.CommitSource = rev, dirty, "buildinfo"
	} else if rev, dirty, ok := gitCommit(); ok {
		p.Commit, p.Dirty, p.CommitSource = rev, dirty, "git"
	}
	p.RunID = runID(now, p.Commit)
	return p
}

// runID is "<UTC time, 20060102T150405Z>-<first 7 of commit>", "-unknown"
// without a commit.
func runID(now time.Time, commit string) string {
	short := "unknown"
	if len(commit) >= 7 {
		short = commit[:7]
	}
	return now.UTC().Format("20060102T150405Z") + "-" + short
}

// buildCommit reads the vcs.revision and vcs.modified stamps go build
// writes inside a git checkout (run.sh builds with -buildvcs=auto); ok is
// false without them (go run, go test, a copy outside git).
func buildCommit() (rev string, dirty, ok bool) {
	bi, found := debug.ReadBuildInfo()
	if !found {
		return "", false, false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return rev, dirty, rev != ""
}

// gitCommit asks git in the working directory for HEAD and whether the
// tracked tree differs from it; ok is false when git or the checkout is
// missing.
func gitCommit() (rev string, dirty, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false, false
	}
	rev = strings.TrimSpace(string(out))
	dirty, _ = gitCodeDirty(".")
	return rev, dirty, rev != ""
}

// gitCodeDirty reports whether the tracked tree under dir differs from
// HEAD outside results/ (the lab's own result folders, which every
// reference run rewrites: docs/running.md, "Provenance"); known is false when
// git or the checkout is missing.
func gitCodeDirty(dir string) (dirty, known bool) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return false, false
	}
	return len(strings.TrimSpace(string(out))) > 0, true
}

// benchKeyNames are the names of the run's and the audit's keys.
func benchKeyNames() []string { return namesOf(cmdRun) }

// matrixKeyNames are the names of the matrix's keys.
func matrixKeyNames() []string { return namesOf(cmdMatrix) }

// finishRun ends a measuring run whose result folder is out: for a run
// without OUT (perRun) that wrote a result file, it points
// outdir.RunsDir/latest at its folder (announceRunDir said where); a
// folder this run made and left without a file (the stack did not start)
// is removed, and latest keeps naming the last run that wrote one. runErr
// is returned as it is (joined with a failure to update the link). A run
// that succeeded says where its files are in its last line on w, after the
// stack's own closing lines (a failed run ends with its error instead).
func finishRun(w io.Writer, perRun bool, out, runID string, runErr error) error {
	if runErr == nil {
		defer func() {
			if _, err := os.Stat(out); err == nil {
				if v := passedVerdict(out, runID); v != "" {
					fmt.Fprintln(w, v)
				}
				fmt.Fprintf(w, "results of this run: %s/\n", out)
			}
		}()
	}
	if !perRun {
		return runErr
	}
	if _, err := os.Stat(out); err != nil {
		return runErr
	}
	if empty, err := outdir.OnlyMarker(out); err != nil || empty {
		if err == nil {
			err = os.RemoveAll(out)
		}
		return errors.Join(runErr, err)
	}
	if err := outdir.PointLatest(runID); err != nil {
		return errors.Join(runErr, err)
	}
	return runErr
}

// announceRunDir says, before a run without OUT starts, where its files
// go, so the run's last lines stay its verdict.
func announceRunDir(w io.Writer, out string) {
	fmt.Fprintf(w, "results of this run: %s/ (%s links to it when the run has written a file)\n", out, filepath.Join(outdir.RunsDir, outdir.Latest))
}

// passedVerdict is the one-line verdict of a passed bench run, from
// out/verdict.json when it is run runID's and says pass ("" otherwise: a
// failed run's error is its last line, and other commands write no
// verdict.json). It comes after the containers' teardown lines, so the
// verdict is on screen when the run ends.
func passedVerdict(out, runID string) string {
	b, err := os.ReadFile(filepath.Join(out, results.VerdictFile))
	if err != nil {
		return ""
	}
	var v results.Verdict
	if json.Unmarshal(b, &v) != nil || !v.Pass || v.Provenance == nil || v.Provenance.RunID != runID {
		return ""
	}
	return fmt.Sprintf("verdict: pass: %s (0 lost and 0 duplicated in every run; thresholds when given), %s",
		v.ChecksPassed(), filepath.Join(out, results.VerdictFile))
}
