package lab

import (
	"path"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
)

// ReplicaArgs returns vendormock.ReplicaOptions.Args for cfg: each
// replica's command line is cfg with its own records file and, for a
// bbolt ledger, its ledger file (vendormock.ReplicaFiles), and no
// -max-messages (the lab stops replicas itself); a -cpu-profile becomes
// the replica's own, ReplicaProfile beside it.
func ReplicaArgs(cfg worker.Config) func(vendormock.ReplicaFiles) []string {
	return func(f vendormock.ReplicaFiles) []string {
		c := cfg
		c.RecordsPath, c.LedgerPath = f.RecordsPath, f.LedgerFile
		c.MaxMessages = 0
		if c.CPUProfile != "" {
			c.CPUProfile = path.Join(path.Dir(c.CPUProfile), ReplicaProfile(f.ID))
		}
		return c.Args()
	}
}

// ReplicaProfile is the file name of replica id's CPU profile
// (cpu-<id>.pprof), written when it stops after SIGTERM.
func ReplicaProfile(id string) string { return "cpu-" + id + ".pprof" }

// ContractGrace is the shutdown grace the lab gives a contract worker,
// whose own budget it does not know: the Go worker's at its defaults
// (worker.ShutdownGrace of a zero Config, 55 s).
func ContractGrace() time.Duration { return worker.ShutdownGrace(worker.Config{}) }
