package vendormock

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"strconv"
	"time"
)

// Ledger stores a replica set can run on (ReplicaOptions.Ledger).
const (
	// LedgerBbolt gives each replica its own bbolt file on a named Docker
	// volume mounted at WorkerLedgerDir: it survives a SIGKILL and a
	// restart, and is lost only when the replica is recreated without it.
	LedgerBbolt = "bbolt"
	// LedgerPostgres gives every replica the same PostgreSQL database
	// (StartPostgres), reached on the run's network.
	LedgerPostgres = "postgres"
)

// Queue types the worker declares its queues with (ReplicaOptions.QueueType).
const (
	QueueClassic = "classic"
	QueueQuorum  = "quorum"
)

// Paths and ports inside a replica container, besides WorkerCAPath and
// WorkerOutDir.
const (
	// WorkerLedgerDir is where a replica's ledger volume is mounted; the
	// bbolt file is WorkerLedgerDir/ledger.db.
	WorkerLedgerDir = "/ledger"
	// WorkerOpsPort is the port of the worker's /healthz and /metrics
	// (OPS_ADDR=:9090), published on 127.0.0.1 for the host.
	WorkerOpsPort = 9090
	// ReportsProxyPort is the port in the Toxiproxy container, published
	// on 127.0.0.1 as Stack.ReportsAddrHost, where a caller's proxy
	// carries the report relay's pushes to a worker's ops port.
	ReportsProxyPort = 9091
)

// WorkerAlias is the network alias of the worker StartWorker started with
// WorkerOptions.Name name ("worker-" + name).
func WorkerAlias(name string) string { return "worker-" + name }

// Environment variables the lab sets on every replica. The worker reads
// them (docs/deployment.md); ReplicaOptions.Env may not set them.
const (
	EnvWorkerID             = "WORKER_ID"              // "worker-1".."worker-N"
	EnvLedger               = "LEDGER"                 // a bbolt file path or a postgres:// URL
	EnvLedgerEphemeralOK    = "LEDGER_EPHEMERAL_OK"    // never set: the lab mounts a volume
	EnvQueueType            = "QUEUE_TYPE"             // QueueClassic or QueueQuorum
	EnvSingleActiveConsumer = "SINGLE_ACTIVE_CONSUMER" // "true" or "false"
	EnvOpsAddr              = "OPS_ADDR"               // ":9090"
	EnvStatusTable          = "VENDOR_STATUS_TABLE"    // the profile's status table, JSON (Profile.StatusTableJSON)
	EnvRecords              = "RECORDS"                // the records file of a contract worker (docs/worker-contract.md)
)

// ErrReplicaOptions is wrapped by every error ReplicaOptions.Validate
// returns.
var ErrReplicaOptions = errors.New("invalid replica options")

// ReplicaOptions configure StartReplicas. The zero value of a field means
// its default.
type ReplicaOptions struct {
	// Name tells replica sets of one stack apart in container and volume
	// names (for example the scenario's name); "" = none. Letters, digits,
	// '_', '.', '-'.
	Name string
	// Count is the number of replicas started at once (WORKERS), >= 1.
	Count int
	// Ledger is LedgerBbolt ("" = it) or LedgerPostgres.
	Ledger string
	// PostgresImage is the PostgreSQL image for LedgerPostgres; "" = the
	// environment's LAB_IMAGE_POSTGRES (.lab/images.env), else DefaultPostgresImage.
	PostgresImage string
	// PostgresAddr is the host:port on the run's network the replicas
	// reach PostgreSQL through (LedgerPostgres), for example a Toxiproxy
	// proxy in front of it (AliasToxiproxy+":5432") so a fault can cut or
	// slow the ledger's path; "" = PostgreSQL itself (AliasPostgres:5432).
	PostgresAddr string
	// QueueType is QueueClassic ("" = it) or QueueQuorum.
	QueueType string
	// NoSingleActiveConsumer turns RabbitMQ's single active consumer off
	// on the main queue: only for the negative control, where every
	// replica consumes at once.
	NoSingleActiveConsumer bool
	// Args returns the command line of the replica whose files are f (for
	// the Go worker, a worker.Config with f's records and ledger files, its
	// Args); nil = none (a contract worker). The broker, vendor URL, CA,
	// client id and the profile's vendor API shape reach the worker through
	// its environment fallbacks (AMQP_URL, VENDOR_URL, VENDOR_CA_FILE,
	// VENDOR_CLIENT_ID, Profile.VendorAPIEnv); a flag in Args wins.
	Args func(f ReplicaFiles) []string
	// Grace is how long Stop lets a replica finish after SIGTERM before
	// it is killed: the worker's own shutdown budget (for the Go worker
	// worker.ShutdownGrace of its config, docs/deployment.md), rounded up
	// to whole seconds (Docker's stop timeout). Required (> 0).
	Grace time.Duration
	// Env is added to every replica's environment (GOMAXPROCS defaults to
	// the CPU limit, VENDOR_CLIENT_SECRET to the stack's). It may not set
	// the lab's own variables (EnvWorkerID ... EnvOpsAddr).
	Env map[string]string
	// CPUs is each replica's CPU limit; 0 = 1, as the case ran.
	CPUs float64
	// OutDir is the host dir bind-mounted at WorkerOutDir in every
	// replica; replica ID writes OutDir/records-ID.jsonl. Required.
	OutDir string
	// Image is the worker under test's image (WorkerSelection.Image); "" =
	// the Go worker. A contract worker ignores Args: give it ContractEnv
	// (without RecordsPath, LedgerPath and WorkerID, which the lab sets)
	// and WorkerSelection.Env in Env.
	Image string
}

// ReplicaFiles are a replica's own files, as paths inside its container,
// for ReplicaOptions.Args.
type ReplicaFiles struct {
	// ID is the replica's ReplicaID, also its WORKER_ID.
	ID string
	// RecordsPath is its records file, WorkerOutDir/RecordsFileName(ID).
	RecordsPath string
	// LedgerFile is its bbolt ledger on its volume (LedgerBbolt,
	// WorkerLedgerDir/ledger.db); "" for LedgerPostgres, whose URL the
	// worker reads from LEDGER (the password stays off the command line).
	LedgerFile string
}

// labEnv are the variables the lab sets itself.
var labEnv = []string{EnvWorkerID, EnvLedger, EnvLedgerEphemeralOK, EnvQueueType, EnvSingleActiveConsumer, EnvOpsAddr, EnvRecords}

// withDefaults returns o with its zero fields set.
func (o ReplicaOptions) withDefaults() ReplicaOptions {
	if o.Ledger == "" {
		o.Ledger = LedgerBbolt
	}
	if o.QueueType == "" {
		o.QueueType = QueueClassic
	}
	if o.CPUs == 0 {
		o.CPUs = 1
	}
	return o
}

// Validate checks o (zero fields meaning their defaults) and returns every
// problem found, joined, each wrapping ErrReplicaOptions and naming what is
// allowed. It touches neither Docker nor the disk.
func (o ReplicaOptions) Validate() error {
	o = o.withDefaults()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrReplicaOptions}, args...)...))
	}
	if o.Name != "" && !workerNameRE.MatchString(o.Name) {
		bad("name %q: letters, digits, '_', '.', '-' only", o.Name)
	}
	if o.Count < 1 {
		bad("count %d: want >= 1 replica", o.Count)
	}
	if o.Ledger != LedgerBbolt && o.Ledger != LedgerPostgres {
		bad("ledger %q: known ledgers: %s, %s", o.Ledger, LedgerBbolt, LedgerPostgres)
	}
	if o.QueueType != QueueClassic && o.QueueType != QueueQuorum {
		bad("queue type %q: known types: %s, %s", o.QueueType, QueueClassic, QueueQuorum)
	}
	if o.CPUs < 0 || math.IsNaN(o.CPUs) || math.IsInf(o.CPUs, 0) {
		bad("cpus %g: want > 0 (0 = 1)", o.CPUs)
	}
	if o.OutDir == "" {
		bad("out dir: empty (the host dir for the records files)")
	}
	for _, k := range labEnv {
		if _, ok := o.Env[k]; ok {
			bad("env sets %s: the lab sets it from the options", k)
		}
	}
	if o.Grace <= 0 {
		bad("grace %v: want the worker's shutdown budget (worker.ShutdownGrace), > 0", o.Grace)
	}
	return errors.Join(errs...)
}

// stopGrace is a shutdown budget rounded up to whole seconds: Docker's
// stop timeout is in seconds, and a budget cut short could kill a worker
// between a send and its ledger record.
func stopGrace(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

// replicaSpec is everything one replica container is started with.
type replicaSpec struct {
	args []string
	env  map[string]string
}

// stackEnv are the stack values a replica's environment defaults to.
type stackEnv struct {
	amqpURL, vendorURL, clientID, clientSecret string
	statusTable                                string            // the profile's, JSON; "" = the worker's default
	vendorAPI                                  map[string]string // Profile.VendorAPIEnv
}

// buildReplica returns the arguments and environment of replica id of o
// (after withDefaults), given the stack's values and, for LedgerPostgres,
// the database URL on the run's network.
func buildReplica(o ReplicaOptions, id string, st stackEnv, postgresURL string) replicaSpec {
	env := map[string]string{
		"AMQP_URL":             st.amqpURL,
		"VENDOR_URL":           st.vendorURL,
		"VENDOR_CA_FILE":       WorkerCAPath,
		"VENDOR_CLIENT_ID":     st.clientID,
		"VENDOR_CLIENT_SECRET": st.clientSecret,
		"GOMAXPROCS":           strconv.Itoa(max(1, int(math.Ceil(o.CPUs)))),
	}
	if st.statusTable != "" {
		env[EnvStatusTable] = st.statusTable
	}
	maps.Copy(env, st.vendorAPI)
	maps.Copy(env, o.Env)
	env[EnvWorkerID] = id
	env[EnvQueueType] = o.QueueType
	env[EnvSingleActiveConsumer] = strconv.FormatBool(!o.NoSingleActiveConsumer)
	env[EnvOpsAddr] = ":" + strconv.Itoa(WorkerOpsPort)
	files := ReplicaFiles{ID: id, RecordsPath: path.Join(WorkerOutDir, RecordsFileName(id))}
	env[EnvRecords] = files.RecordsPath // a contract worker's records path
	if o.Ledger == LedgerPostgres {
		env[EnvLedger] = postgresURL
	} else {
		// The worker's ledger flag too (files.LedgerFile), so that a worker
		// reading only the flag puts its file on the volume as well.
		env[EnvLedger] = path.Join(WorkerLedgerDir, "ledger.db")
		files.LedgerFile = env[EnvLedger]
	}
	var args []string
	if o.Args != nil {
		args = o.Args(files)
	}
	return replicaSpec{args: args, env: env}
}

// ReplicaID returns the id of the i-th replica (1-based): "worker-i".
func ReplicaID(i int) string { return "worker-" + strconv.Itoa(i) }

// RecordsFileName returns the records file of replica id in
// ReplicaOptions.OutDir: "records-<id>.jsonl".
func RecordsFileName(id string) string { return "records-" + id + ".jsonl" }
