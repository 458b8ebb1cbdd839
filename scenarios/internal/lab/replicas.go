package lab

import (
	"slices"
	"strings"
)

// StripFlags returns args without the flags named (given as -name value,
// -name=value, --name value or --name=value): WorkerArgs minus what
// vendormock.StartReplicas sets itself (records, ledger).
func StripFlags(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "-") || name == "" {
			out = append(out, a)
			continue
		}
		if slices.Contains(names, name) {
			i++ // and its value
			continue
		}
		if k, _, found := strings.Cut(name, "="); found && slices.Contains(names, k) {
			continue
		}
		out = append(out, a)
	}
	return out
}
