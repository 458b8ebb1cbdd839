package defaults

import (
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/leaktest"
)

// TestMain applies the lab's testcontainers settings and checks that no
// test leaves a goroutine behind, in the unit and the integration build.
func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
