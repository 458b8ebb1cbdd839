package queues

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package (unit and integration builds alike) when a
// test leaves a goroutine running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
