package vendormock

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites the golden files under testdata/vendormock/:
// go test ./vendormock/ -run Golden -update
var update = flag.Bool("update", false, "rewrite golden files in testdata/vendormock")

// testdataDir is the repository's shared test data folder for this package.
var testdataDir = filepath.Join("..", "testdata", "vendormock")

// golden compares got with testdata/vendormock/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testdataDir, name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (create it with -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (rerun with -update if intended):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// loadTestProfile loads the lab's default profile.
func loadTestProfile(t *testing.T) *Profile {
	t.Helper()
	p, err := LoadProfile(DefaultProfileDir)
	if err != nil {
		t.Fatalf("LoadProfile(%s): %v", DefaultProfileDir, err)
	}
	return p
}
