package vendormock

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: Start's
// readiness goroutines, probes and worker waits must all end. Idle
// keep-alive connections of http.DefaultClient (used by go-wiremock and the
// Toxiproxy client) are not ours to close and are ignored.
func TestMain(m *testing.M) {
	EnsureTestcontainersEnv() // the test is the edge (Start does not)
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}
