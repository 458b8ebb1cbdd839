//go:build !integration

package reconcile

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (httptest
// servers, readers). The integration build leaves it out: testcontainers'
// Docker client keeps its own goroutines.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
