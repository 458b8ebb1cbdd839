package lab

import (
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
)

// ReplicaArgs returns vendormock.ReplicaOptions.Args for cfg: each
// replica's command line is cfg with its own records file and, for a
// bbolt ledger, its ledger file (vendormock.ReplicaFiles), and no
// -max-messages or -cpu-profile (the lab stops replicas itself).
func ReplicaArgs(cfg worker.Config) func(vendormock.ReplicaFiles) []string {
	return func(f vendormock.ReplicaFiles) []string {
		c := cfg
		c.RecordsPath, c.LedgerPath = f.RecordsPath, f.LedgerFile
		c.MaxMessages, c.CPUProfile = 0, ""
		return c.Args()
	}
}

// ContractGrace is the shutdown grace the lab gives a contract worker,
// whose own budget it does not know: the Go worker's at its defaults
// (worker.ShutdownGrace of a zero Config, 55 s).
func ContractGrace() time.Duration { return worker.ShutdownGrace(worker.Config{}) }
