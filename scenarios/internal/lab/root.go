package lab

import (
	"os"
	"path/filepath"
)

// RepoRoot returns the nearest folder at or above the working directory
// that holds go.mod (the repository root; run.sh runs from there), else the
// working directory. Run folders go under its git-ignored .lab/.
func RepoRoot() string {
	if root, ok := FindRepoRoot(); ok {
		return root
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return "."
}

// FindRepoRoot returns the nearest folder at or above the working
// directory that holds go.mod, and false when there is none (or the
// working directory is unknown). It is scenarios/' one "find go.mod
// upward" (the bench, the matrix, the fault runner and the audit use it).
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
