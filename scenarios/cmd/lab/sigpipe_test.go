package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A lab whose standard output is a closed pipe (`./run.sh | head` after
// head exited) is not killed by SIGPIPE: it gets the signal as a stop, like
// Ctrl-C, and ends on its own terms. Before, Go's default killed it at the
// first write (exit 141), and a run that had written files never named its
// folder results/runs/latest (found by a fresh-user trial).
func TestBrokenStdoutDoesNotKillTheLab(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "lab")
	if b, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone before the lab writes
	cmd := exec.Command(bin, "list")
	cmd.Stdout = w
	err = cmd.Run()
	w.Close()
	var ee *exec.ExitError
	if errors.As(err, &ee) && !ee.Exited() {
		t.Fatalf("lab list into a closed pipe was killed by a signal (%v); want it to end on its own", ee)
	} else if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
}
