package fault

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/message"
)

// No lane's prefix is a prefix of another lane's in the same run: the
// journal is counted per lane by prefix (failed before: idle-race-window's
// "r-<id>-300-default-" matched idle-race-h2's "r-<id>-300-default-h2-").
func TestLanePrefixesDoNotOverlap(t *testing.T) {
	type lane struct {
		race    string
		rtt     int
		setting string
		h2      bool
	}
	lanes := []lane{
		{"idle-race-window", 300, "default", false}, {"idle-race-window", 300, "t_plus_1s", false},
		{"idle-race-window", 300, "t_minus_rtt_margin", false},
		{"idle-race-h2", 300, "default", true}, {"idle-race-h2", 300, "t_minus_rtt_margin", true},
		{"idle-race", 10, "default", false}, {"idle-race", 150, "t_minus_half_rtt", false},
	}
	id := "20261202T031255Z-1935e09"
	for i, a := range lanes {
		pa := lanePrefix(id, a.race, a.rtt, a.setting, a.h2)
		if n := len(pa) + len("0001"); n > message.MaxRefKeyLen {
			t.Errorf("%s: a refkey of %d characters, above %d", pa, n, message.MaxRefKeyLen)
		}
		for j, b := range lanes {
			if i == j {
				continue
			}
			if pb := lanePrefix(id, b.race, b.rtt, b.setting, b.h2); strings.HasPrefix(pb, pa) {
				t.Errorf("lane %q is a prefix of lane %q: the first would count the second's sends", pa, pb)
			}
		}
	}
}
