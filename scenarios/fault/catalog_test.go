package fault

import (
	"path/filepath"
	"testing"
)

func TestCatalogLoads(t *testing.T) {
	scs, err := LoadCatalog(filepath.Join("..", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) < 10 {
		t.Errorf("catalog has %d scenarios; want at least 10", len(scs))
	}
}
