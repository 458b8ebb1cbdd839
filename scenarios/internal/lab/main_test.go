package lab

import (
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/leaktest"
)

// TestMain checks that no test leaves a goroutine behind.
func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
