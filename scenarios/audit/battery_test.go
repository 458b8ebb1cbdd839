package audit

import "testing"

// TestAgainstPlanted: only what exceeds a negative control's plant counts.
func TestAgainstPlanted(t *testing.T) {
	for _, c := range []struct{ seen, planted, as, beyond int }{
		{0, 0, 0, 0}, {2, 0, 0, 2}, {1, 1, 1, 0}, {3, 1, 1, 2}, {0, 1, 0, 0},
	} {
		as, beyond := againstPlanted(c.seen, c.planted)
		if as != c.as || beyond != c.beyond {
			t.Errorf("againstPlanted(%d, %d) = %d, %d; want %d, %d", c.seen, c.planted, as, beyond, c.as, c.beyond)
		}
	}
}
