package lab

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Files of a worker's state folder (mounted at vendormock.WorkerOutDir).
const (
	RecordsFile = "records.jsonl"
	LedgerFile  = "ledger.db"
)

// WorkerConfig returns the worker.Config of a lab worker (its command
// line is WorkerConfig(...).Args()): base (the run's pass-through knobs,
// bench.Config.WorkerKnobs; the zero Config for the worker's defaults)
// with what the lab owns set on top: the broker at amqpURL
// and topo's main queue with its retry delay and attempts, the stack's
// vendor URL, CA and client id, the profile's vendor API shape and
// correlation header (none without a profile: the worker's defaults, the
// alimtalk shape), the client strategy, and records and ledger in the
// state folder. The client secret goes by environment only (WorkerEnv).
func WorkerConfig(base worker.Config, st *vendormock.Stack, amqpURL string, topo queues.Topology, strategy string) worker.Config {
	c := base
	c.AMQPURL, c.Queue, c.RetryDelay, c.MaxAttempts = amqpURL, topo.Names.Main, topo.RetryDelay, topo.MaxAttempts
	c.VendorURL, c.CAFile, c.ClientID, c.Strategy = st.VendorURL, vendormock.WorkerCAPath, st.ClientID, strategy
	c.RecordsPath, c.LedgerPath = vendormock.WorkerOutDir+"/"+RecordsFile, vendormock.WorkerOutDir+"/"+LedgerFile
	if p := st.Profile; p != nil {
		a := p.API.WithDefaults()
		c.VendorAPI = vendorapi.API{TokenPath: a.TokenPath, TokenAuth: a.TokenAuth, SendPath: a.SendPath,
			RefKeyField: a.RefKeyField, CodeField: a.CodeField}
		c.CorrelationHeader = p.Client.CorrelationHeader
	}
	return c
}

// WorkerEnv is the environment of a lab worker: one Go processor, the
// client secret, the profile's vendor API shape (the contract's variables,
// for a worker started without WorkerConfig's Args) and status table (when it has
// one).
func WorkerEnv(st *vendormock.Stack) map[string]string {
	env := st.Profile.VendorAPIEnv()
	env["GOMAXPROCS"] = "1"
	env["VENDOR_CLIENT_SECRET"] = st.ClientSecret
	if st.Profile != nil && st.Profile.StatusTableJSON != "" {
		env[vendormock.EnvStatusTable] = st.Profile.StatusTableJSON
	}
	return env
}

// StateDir creates dir for a worker's state, writable by any user (the
// worker image may run as another user). Errors: the file system's.
func StateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	return nil
}

// Sleep waits d or until ctx is done (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// MS converts d to milliseconds.
func MS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// LastLines returns the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// PrefixWriter prefixes every line written through it with Prefix.
type PrefixWriter struct {
	W      io.Writer
	Prefix string
}

var _ io.Writer = PrefixWriter{}

// Write writes each line of b to W with Prefix; it returns len(b) or the
// first error of W.
func (p PrefixWriter) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if _, err := io.WriteString(p.W, p.Prefix+l+"\n"); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
