//go:build !integration

package fault

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no unit test leaves a goroutine behind. The
// integration build has the Docker client's goroutines, so it is not
// checked there.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
