package ledger_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine running (the
// concurrent Begin test starts several).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
