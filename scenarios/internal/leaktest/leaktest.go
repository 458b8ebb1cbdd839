// Package leaktest is the TestMain of the scenario packages: it applies the
// lab's testcontainers settings (vendormock.EnsureTestcontainersEnv, the
// one place that sets them) and fails the package when a test leaves a
// goroutine behind, in the unit and the integration build alike. Import it
// from _test files only.
package leaktest

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Options are the goroutines that may outlive a test: the idle keep-alive
// connections of the Docker client's HTTP transport (testcontainers keeps
// one client per process). Everything else must be gone.
func Options() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	}
}

// VerifyTestMain runs the package's tests (m) and then checks for leaked
// goroutines; it exits the process.
func VerifyTestMain(m *testing.M) {
	vendormock.EnsureTestcontainersEnv()
	goleak.VerifyTestMain(m, Options()...)
}
