// Package gotest runs `go test -json` in a folder and reads its events:
// which tests passed, what each logged, what go test printed outside any
// test. It is the lab's one place that builds a go test command line
// (./run.sh simulate TEETH=1 runs worker/sim's teeth tests in temporary
// worktrees with it).
package gotest

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Options say what Run runs.
type Options struct {
	Dir     string   // the folder go test runs in (a module's root)
	Go      string   // the go command ("" = go)
	Env     []string // the whole environment (nil = the process's)
	Run     string   // -run's regexp
	Package string   // the package pattern, e.g. ./worker/sim
}

// MaxLogLines bounds the lines Logs returns.
const MaxLogLines = 40

// Run runs `go test -json -count=1 -run o.Run o.Package` in o.Dir, in a
// process group of its own that ctx's end kills whole (go test and the
// test binary under it), and returns its events and its error (go test's
// exit status: a failed test or a failed build).
func Run(ctx context.Context, o Options) (Events, error) {
	cmd := exec.CommandContext(ctx, cmp.Or(o.Go, "go"), "test", "-json", "-count=1", "-run", o.Run, o.Package)
	cmd.Dir, cmd.Env = o.Dir, o.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		err = fmt.Errorf("go test %s in %s: %w", o.Package, o.Dir, err)
	}
	return Parse(out), err
}

// Events are go test -json's events by test: each test's output lines
// and its last action.
type Events struct {
	// other is the output of no test: the build's, go test's last lines.
	other []string
	// lines are the tests' output lines as they came, with their test.
	lines  []testLine
	action map[string]string
	order  []string
}

type testLine struct{ test, text string }

// Parse reads go test -json output; a line that is not an event (a build
// error printed as text) counts as output outside any test.
func Parse(raw []byte) Events {
	ev := Events{action: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e struct{ Action, Test, Output string }
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			ev.other = append(ev.other, sc.Text())
			continue
		}
		if e.Test == "" {
			if e.Output != "" {
				ev.other = append(ev.other, strings.TrimRight(e.Output, "\n"))
			}
			continue
		}
		if _, seen := ev.action[e.Test]; !seen {
			ev.order = append(ev.order, e.Test)
			ev.action[e.Test] = ""
		}
		switch e.Action {
		case "output":
			ev.lines = append(ev.lines, testLine{e.Test, strings.TrimRight(e.Output, "\n")})
		case "pass", "fail", "skip":
			ev.action[e.Test] = e.Action
		}
	}
	return ev
}

// Passed reports whether test passed.
func (ev Events) Passed(test string) bool { return ev.action[test] == "pass" }

// Subtests are parent's direct subtests, in the order they ran.
func (ev Events) Subtests(parent string) []string {
	var out []string
	for _, n := range ev.order {
		if rest, ok := strings.CutPrefix(n, parent+"/"); ok && !strings.Contains(rest, "/") {
			out = append(out, n)
		}
	}
	return out
}

// Logs are the log lines of test and its subtests (t.Log's text without
// its file:line prefix, a continuation line trimmed), at most MaxLogLines
// of them.
func (ev Events) Logs(test string) []string {
	out := []string{}
	for _, tl := range ev.lines {
		if tl.test != test && !strings.HasPrefix(tl.test, test+"/") {
			continue
		}
		l, trimmed := tl.text, strings.TrimSpace(tl.text)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "=== ") || strings.HasPrefix(trimmed, "--- "):
		case testLogRE.MatchString(l):
			out = append(out, testLogRE.ReplaceAllString(l, ""))
		default:
			out = append(out, trimmed)
		}
	}
	if len(out) > MaxLogLines {
		out = append(out[:MaxLogLines], fmt.Sprintf("... %d more lines", len(out)-MaxLogLines))
	}
	return out
}

var testLogRE = regexp.MustCompile(`^\s+\S+_test\.go:\d+: `)

// LastLines is the last lines go test printed outside any test (a build
// error, its FAIL line), else its error.
func (ev Events) LastLines(err error) string {
	var keep []string
	for _, l := range ev.other {
		if strings.TrimSpace(l) != "" {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	if len(keep) > 5 {
		keep = keep[len(keep)-5:]
	}
	if len(keep) == 0 && err != nil {
		return err.Error()
	}
	return strings.Join(keep, "; ")
}
