package lab

import (
	"os"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// PostgresImage returns the PostgreSQL image of the run, from the images
// file vendormock/images/ensure-images.sh writes (.lab/images.env,
// vendormock.EnvPostgresImage); "" leaves the choice to
// vendormock.StartPostgres.
func PostgresImage() string {
	return os.Getenv(vendormock.EnvPostgresImage)
}

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
