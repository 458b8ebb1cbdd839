package fault

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRefKeyPrefixesDoNotOverlap: every scenario's sends are told apart by
// their refkey prefix, so no prefix may start another scenario's refkeys
// ("broker-cut" vs "broker-cut-c8" once counted each other's sends).
func TestRefKeyPrefixesDoNotOverlap(t *testing.T) {
	scs, err := LoadCatalog(filepath.Join("..", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range scs {
		for _, b := range scs {
			pa, pb := refKeyPrefix(a, "a1b2"), refKeyPrefix(b, "a1b2")
			if a != b && strings.HasPrefix(pb+"0001", pa) {
				t.Errorf("refkeys of %s (%s0001) start with %s's prefix %q", b.Name, pb, a.Name, pa)
			}
		}
	}
}
