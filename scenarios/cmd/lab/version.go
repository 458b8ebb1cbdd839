package main

import (
	"fmt"
	"runtime/debug"
)

// version returns "notifier-lab <commit>[ (dirty)] built <time>, <go
// version>" from the binary's build information (the VCS stamp go build
// writes inside a git checkout); "notifier-lab (unknown commit)" when it
// has none (go run, a copy outside git).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "notifier-lab (unknown commit)"
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = " (dirty tree)"
			}
		}
	}
	if rev == "" {
		return fmt.Sprintf("notifier-lab (unknown commit), %s", bi.GoVersion)
	}
	return fmt.Sprintf("notifier-lab %s%s, committed %s, %s", rev, dirty, at, bi.GoVersion)
}
