package scenarios

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer the command's output copier writes while
// the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runShFunction returns the text of one shell function of ../run.sh, from
// its "name() {" line to the "}" that closes it at the start of a line.
func runShFunction(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../run.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?ms)^` + name + `\(\) \{\n.*?^\}\n`).Find(b)
	if m == nil {
		t.Fatalf("run.sh has no function %s", name)
	}
	return string(m)
}

// TestRunShForwardsSignals: a SIGTERM to run.sh while the lab runs reaches
// the lab, and run.sh exits 130 as soon as the lab is gone. The lab is
// played by a bash that says when it got SIGTERM and exits; run.sh's own
// run_forwarding_signals starts it. Before this function, run.sh ran the lab
// in the foreground with `trap 'exit 130' INT TERM`: bash ran the trap only
// after the lab's whole run, so the user's kill did nothing for minutes.
func TestRunShForwardsSignals(t *testing.T) {
	lab := `trap 'echo lab: got TERM; exit 3' TERM; echo lab: running; sleep 60 >/dev/null 2>&1 & wait`
	script := "set -euo pipefail\n" + runShFunction(t, "run_forwarding_signals") +
		"run_forwarding_signals bash -c \"$LAB\"\necho run.sh: not reached\n"
	var out lockedBuffer
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "LAB="+lab)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the sleep is killed with its group below
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "lab: running"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the stand-in lab never started: %q", out.String())
		}
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil { // to run.sh alone, as kill PID does
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 130 {
			t.Errorf("run.sh ended with %v, want exit status 130", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("run.sh still running 20 s after SIGTERM (the lab was not told): %q", out.String())
	}
	if !strings.Contains(out.String(), "lab: got TERM") || strings.Contains(out.String(), "not reached") {
		t.Errorf("output %q: want the lab to get SIGTERM and run.sh to stop there", out.String())
	}
	t.Logf("run.sh exited %v after SIGTERM", time.Since(start).Round(time.Millisecond))
}

// TestRunShPassesTheExitStatus: without a signal, run.sh returns the lab's
// own exit status (1 for a failed check, 2 for a bad argument).
func TestRunShPassesTheExitStatus(t *testing.T) {
	for _, code := range []int{0, 1, 2} {
		script := runShFunction(t, "run_forwarding_signals") + "run_forwarding_signals bash -c 'exit " + string(rune('0'+code)) + "'\n"
		err := exec.Command("bash", "-c", script).Run()
		got := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			got = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != code {
			t.Errorf("lab exit %d: run.sh returned %d", code, got)
		}
	}
}
