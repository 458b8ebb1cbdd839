package vendormock

import (
	"os"
	"path/filepath"
)

// FindRepoRoot returns the nearest folder at or above the working
// directory that holds go.mod (the repository root; run.sh runs from
// there), and false when there is none or the working directory is
// unknown. It is the module's one "find go.mod upward": profile and
// images.env paths resolve against it here, and scenarios/internal/lab
// (run folders under .lab/) calls it.
func FindRepoRoot() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		}
		if filepath.Dir(dir) == dir {
			return "", false
		}
	}
}
