//go:build !integration

package scenarios

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no unit test leaves a goroutine behind (progress
// tailing, worker waits). The integration build has its own goroutines
// from the Docker client, so it is not checked there.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
