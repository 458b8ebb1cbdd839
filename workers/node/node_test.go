package node

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNodeUnit runs the worker's unit tests (test/*.test.js: the handler's
// send-window re-check after the ledger's begin, outcome
// classification, status table, ledger, send window, records shape) with
// node's built-in test runner. They need no npm package. A missing node
// fails the test: the Node worker would otherwise go unchecked.
func TestNodeUnit(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: install Node.js 18 or later (Debian: apt-get install nodejs) to check the Node reference worker")
	}
	b, err := exec.Command(node, "--test", "test/").CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "# fail 0") {
		t.Fatalf("node --test did not report its results:\n%s", b)
	}
}
