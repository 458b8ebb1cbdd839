package lab

import (
	"cmp"
	"os"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// envImagesPostgres is the PostgreSQL image's variable in the images file
// vendormock/images/ensure-images.sh writes (.lab/images.env).
const envImagesPostgres = "LAB_IMAGE_POSTGRES"

// PostgresImage returns the PostgreSQL image of the run:
// vendormock.EnvPostgresImage when set, else the images file's
// LAB_IMAGE_POSTGRES; "" leaves the choice to vendormock.StartPostgres.
func PostgresImage() string {
	return cmp.Or(os.Getenv(vendormock.EnvPostgresImage), os.Getenv(envImagesPostgres))
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
