package lab

import (
	"os"
	"path/filepath"
)

// RepoRoot returns the nearest folder at or above the working directory
// that holds go.mod (the repository root; run.sh runs from there), else the
// working directory. Run folders go under its git-ignored .lab/.
func RepoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}
