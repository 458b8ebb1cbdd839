package vendormock

import "testing"

func TestSplitRTT(t *testing.T) {
	for _, tc := range []struct{ rtt, down, up int }{
		{0, 0, 0}, {1, 0, 1}, {3, 1, 2}, {10, 5, 5}, {11, 5, 6},
	} {
		down, up := SplitRTT(tc.rtt)
		if down != tc.down || up != tc.up || down+up != tc.rtt {
			t.Errorf("SplitRTT(%d) = %d down + %d up, want %d + %d", tc.rtt, down, up, tc.down, tc.up)
		}
	}
}
