package ledger_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// afterAll runs after every test of the package (the integration tests
// stop their PostgreSQL container there).
var afterAll []func()

// TestMain fails the package if a test leaves a goroutine running (the
// concurrent Begin tests start several).
func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range afterAll {
		f()
	}
	if code == 0 {
		if err := goleak.Find(leakIgnores...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// leakIgnores lists goroutines the Docker client may leave behind (set by
// the integration tests).
var leakIgnores []goleak.Option
