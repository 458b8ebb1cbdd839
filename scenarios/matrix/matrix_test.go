package matrix

import "testing"

func TestMatrixPlan(t *testing.T) {
	cfg := DefaultConfig()
	cells := cfg.plan()
	if len(cells) != 36 {
		t.Fatalf("%d cells, want 3 schemes x 2 drivers x 2 modes x 3 concurrencies = 36", len(cells))
	}
	if cells[0].name() != "direct-http-per-request-c1" || cells[35].name() != "worker-mtls-pooled-c32" {
		t.Errorf("order: first %s, last %s", cells[0].name(), cells[35].name())
	}
}
