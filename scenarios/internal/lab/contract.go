package lab

import (
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// Files of a contract worker's state folder: the records file is the
// contract's (RecordsFile); the ledger is in the worker's own format, so
// it gets a name of its own (docs/worker-contract.md#what-the-lab-gives-the-worker).
const ContractLedgerFile = "ledger.jsonl"

// ContractEnv returns the environment of a worker that follows
// docs/worker-contract.md (any WORKER but go): the stack's contract
// variables for topo's queues, the broker at amqpURL ("" = the stack's
// network URL), records and ledger in the state folder, MAX_MESSAGES
// (0 = run until stopped), CLOCK_START when clockStart is not zero, plus
// the selection's own knobs (CLIENT_MODE, and CLIENT_IDLE_TIMEOUT_MS below
// the stack's keep-alive for a fixed variant: WorkerSelection.SetIdleTimeout).
// It holds the client secret: never log it.
func ContractEnv(st *vendormock.Stack, sel vendormock.WorkerSelection, topo queues.Topology, amqpURL string, maxMessages int, clockStart time.Time) map[string]string {
	env := vendormock.ContractEnv(st, vendormock.ContractOptions{
		Queue:                topo.Names.Main,
		QueueType:            string(topo.Type),
		SingleActiveConsumer: topo.SingleActiveConsumer,
		RetryDelay:           topo.RetryDelay,
		RetryMaxDelay:        topo.RetryMaxDelay,
		MaxAttempts:          topo.MaxAttempts,
		RecordsPath:          vendormock.WorkerOutDir + "/" + RecordsFile,
		LedgerPath:           vendormock.WorkerOutDir + "/" + ContractLedgerFile,
		MaxMessages:          maxMessages,
		ClockStart:           clockStart,
	})
	if amqpURL != "" {
		env["AMQP_URL"] = amqpURL
	}
	for k, v := range sel.Env {
		env[k] = v
	}
	sel.SetIdleTimeout(env, st.KeepaliveTimeout)
	return env
}
