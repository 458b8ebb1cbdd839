package lab

import (
	"os"

	"github.com/notifier-lab/notifier-lab/vendormock"
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

// FindRepoRoot is vendormock.FindRepoRoot, the module's one "find go.mod
// upward" (the bench, the matrix, the fault runner and the audit use it
// through here).
func FindRepoRoot() (string, bool) { return vendormock.FindRepoRoot() }
