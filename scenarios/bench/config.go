package bench

import (
	"slices"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
)

// Defaults of the lab's arguments. They reproduce the case of
// docs/case.md#reproduction-settings: 1,000 measured sends plus 50 warm-up
// sends, 3 ms and 10 ms RTT, both client strategies, an 18 ms vendor think time
// and a per-request engine capped at TLS 1.2. Usage prints them.
const (
	DefaultCount         = 1000
	DefaultWarmup        = 50
	DefaultServerDelayMS = 18
	DefaultPerRequestTLS = netmodel.DefaultPerRequestTLS
	// DefaultOut is the committed reference run's folder: OUT=results
	// refreshes it. The lab command gives a run without OUT a folder of
	// its own (outdir.RunsDir/<run id>); Config's default stays this for
	// callers of the library.
	DefaultOut          = "results"
	DefaultLabImages    = "auto"
	DefaultProfile      = vendormock.DefaultProfileDir
	DefaultWorkerState  = "tmpfs"
	DefaultCPUProfile   = "off"
	DefaultMalformed    = 0
	DefaultTCPHandshake = netmodel.HandshakeOff
	DefaultWorkers      = 1
	// DefaultLanes is LANES: four stacks side by side, as ./run.sh test
	// runs the catalog.
	DefaultLanes       = 4
	DefaultLedger      = vendormock.LedgerBbolt
	DefaultQueueType   = vendormock.QueueClassic
	DefaultWorker      = vendormock.WorkerGo
	DefaultScheme      = results.DefaultScheme
	DefaultConcurrency = 1
	DefaultHTTPVersion = results.DefaultHTTPVersion
	// MaxWorkers bounds WORKERS (each replica has a CPU of its own).
	MaxWorkers = 8
)

// Limits of the lab's arguments, checked by the lab command.
const (
	MaxRTTMS         = 1000  // largest RTT per value, ms
	MaxServerDelayMS = 10000 // largest SERVER_DELAY_MS, ms
	// MinKeepaliveTimeout is the smallest KEEPALIVE_TIMEOUT accepted: the
	// pooled client's idle timeout is netmodel.IdleConnTimeout
	// (keepalive_timeout - RTT - netmodel.IdleConnMargin) and must stay
	// positive.
	MinKeepaliveTimeout = 2 * time.Second
	MaxKeepaliveTimeout = time.Hour
)

// Config is one lab run (the lab command builds it from KEY=VALUE words
// and the environment). Durations are wall time; *MS fields are whole milliseconds.
type Config struct {
	Count         int      // COUNT: measured sends per (mode, RTT), >= 1
	Warmup        int      // WARMUP: warm-up sends before them, excluded from stats, >= 0
	RTTs          []int    // RTTS: round trips to run at, ms, each 0..MaxRTTMS, in the given order, no duplicates
	Modes         []string // MODES: client strategies, vendorapi.PerRequestName / vendorapi.PooledName
	ServerDelayMS int      // SERVER_DELAY_MS: WireMock fixed delay on a send, ms
	PerRequestTLS string   // PER_REQUEST_TLS: highest TLS version of the per-request client, "1.2" or "1.3"
	Out           string   // OUT: results directory
	LabImages     string   // LAB_IMAGES: official | offline | auto (used by the images script)
	// KeepaliveTimeout is nginx's keepalive_timeout (KEEPALIVE_TIMEOUT);
	// 0 means the vendor profile's value.
	KeepaliveTimeout time.Duration
	Profile          string // PROFILE: vendor profile directory
	// WorkerState is where the worker's ledger and records live during a
	// run (WORKER_STATE): "tmpfs" (/dev/shm, the default) or "disk" (next to
	// OUT). The ledger syncs to its file before every send; on this class of
	// shared VM a disk fsync costs CPU and wall time that has nothing to do
	// with the client strategies being compared, so the comparison runs on
	// tmpfs and "disk" measures that cost on its own (README, "Known limits").
	WorkerState string
	// CPUProfile "on" makes every worker write a Go CPU profile to
	// OUT/pprof/worker-<mode>-<rtt>ms.pprof (CPU_PROFILE).
	CPUProfile string
	// Scenario is a fault or race scenario of scenarios/catalog to run
	// instead of the bench (SCENARIO): a scenario's name or "all"; ""
	// runs the bench. The lab command checks the name against the catalog
	// (package scenarios/fault).
	Scenario string
	// Lanes is how many stacks run the scenarios of SCENARIO=all side by
	// side (LANES, 1..8; scenarios/fault.Options.Lanes); one scenario
	// always runs alone.
	Lanes int
	// Malformed is how many malformed messages (MALFORMED) are mixed among
	// the measured ones of every run: each must be dead-lettered with its
	// reason while every valid message is SENT . Their
	// handling time counts in wall_s and CPU per send.
	Malformed int
	// TCPHandshake is TCP_HANDSHAKE: HandshakeOn adds Toxiproxy's handshake
	// toxic (rtt = the run's RTT), so a new connection costs its TCP round
	// trip as on a real network; HandshakeOff (the default) is stock
	// Toxiproxy, the case's own conditions (docs/case.md, "Reproduction
	// settings").
	TCPHandshake string
	// TLSResumption is TLS_RESUMPTION: "on" turns nginx's
	// ssl_session_cache and ssl_session_tickets on whatever the profile
	// says, so the per-request-resume client can resume (docs/network.md,
	// "TLS session resumption"); "off" or "" keeps the profile's (both
	// off in the lab's profiles, as in the case).
	TLSResumption string
	// Bulk is BULK: how many messages the summary's bulk projection
	// calculates for (DefaultBulk), >= 1.
	Bulk int
	// Workers is the number of worker replicas of every run (WORKERS),
	// 1..MaxWorkers; all consume one queue under RabbitMQ's single active
	// consumer, so one of them handles everything and the others stand by.
	Workers int
	// Ledger is the replicas' ledger (LEDGER): vendormock.LedgerBbolt, one
	// file per replica on a Docker volume, or vendormock.LedgerPostgres,
	// one database shared by every replica.
	Ledger string
	// QueueType is the worker's queues' type (QUEUE_TYPE):
	// vendormock.QueueClassic or vendormock.QueueQuorum.
	QueueType string
	// BrokerNodes is the number of RabbitMQ nodes (BROKER_NODES):
	// 1, or a cluster of 2..vendormock.MaxBrokerNodes whose every node the
	// workers are given (they reconnect to another node when theirs goes).
	// 0 = 1.
	BrokerNodes int
	// Worker is the worker under test (WORKER, vendormock.WorkerImage):
	// vendormock.WorkerGo, a reference worker or "image:NAME"
	// (docs/worker-contract.md). Any other worker runs once per RTT in
	// place of MODES (kind_contract.go).
	Worker string
	// Baseline adds the Go worker's pooled run at every RTT beside a
	// contract worker's, so its figures (CPU per send) read side by side;
	// the audit command sets it, no key does.
	Baseline bool
	// Scheme is how the worker reaches nginx (SCHEME): "http", "https"
	// (the case's) or "mtls" (nginx requires a client certificate from the
	// run's CA); see docs/studies.md, study A.
	Scheme string
	// Concurrency is the messages each worker handles at once
	// (CONCURRENCY; sends in flight, the prefetch one more), 1 = the case's.
	Concurrency int
	// Active is how the replicas share the queue (ACTIVE): ActiveSingle
	// ("" = it; single active consumer, one works, the others stand by)
	// or ActiveCompeting (every replica consumes; needs LEDGER=postgres,
	// docs/deployment.md, Several active workers).
	Active string
	// RateLimit is the vendor's sends per second for the whole account
	// (RATE_LIMIT): nginx enforces it (vendormock.Options.RateLimit) and
	// each active worker paces at its share (RateShare); 0 = the profile's
	// (none in the lab's profiles). Runs on replicas (Replicated).
	RateLimit int
	// RatePace is RATE_PACE: RatePaceShare ("" = it; each active worker
	// paces at its share of RateLimit) or RatePaceOff (the workers do not
	// pace: the negative control, where nginx's 429s show).
	RatePace string
	// HTTPVersion is "1.1" or "2" (HTTP_VERSION; h2 through ALPN, TLS
	// schemes only).
	HTTPVersion string
	// UpstreamKeepalive is "on" (nginx keeps connections to WireMock
	// alive, the default) or "off" (a new upstream connection per request:
	// study A's fifth pitfall; UPSTREAM_KEEPALIVE, the matrix only).
	UpstreamKeepalive string
	// PoolSize is the pooled client's idle connections per host
	// (POOL_SIZE); 0 = the concurrency.
	PoolSize int
	// Images are the lab's container images, HostNote the operator's
	// note on the machine (LAB_HOST_NOTE) and Session the label value of
	// the run's containers (LAB_SESSION, vendormock.Options.Session): what
	// the command reads from the environment at its edge
	// (vendormock.ImagesFrom), no key sets them.
	Images   vendormock.Images
	HostNote string
	// Thresholds are THRESHOLD_P99_MS and THRESHOLD_CONNECTIONS (zero:
	// not judged); Run judges every result by them (Judge).
	Thresholds Thresholds
	// Arrivals is ARRIVALS: how the measured messages arrive (the zero
	// value, back-to-back, publishes them all before the worker starts;
	// a paced process publishes them at its gaps while the worker runs:
	// feed.go). Paced arrivals run one Go worker (not Replicated, not a
	// contract worker); the lab command refuses the others.
	Arrivals Arrivals
	// ClientIdle is CLIENT_IDLE: the pooled client's idle timeout in the
	// case's time (divided by TimeScale for the run); 0 = the lab's
	// default, one RTT and netmodel.IdleConnMargin below nginx's
	// keepalive_timeout.
	ClientIdle time.Duration
	// TimeScale is TIME_SCALE: the run divides every ARRIVALS gap, the
	// client's idle timeout and nginx's keepalive_timeout by it, so a run
	// with gaps of tens of seconds takes minutes; 0 or 1 = real time.
	// The lab command divides KeepaliveTimeout itself (CaseKeepalive
	// keeps the value before it).
	TimeScale int
	// CaseKeepalive is nginx's keepalive_timeout before TIME_SCALE
	// divided it (0 = KeepaliveTimeout is not scaled).
	CaseKeepalive time.Duration
	// AuditFixed is FIXED=1: `lab audit-clients` also audits each
	// third-party client's fixed variant after the defaults
	// (docs/auditing.md#fixed-variants); no other command reads it.
	AuditFixed bool
	// AuditIdleLadder is IDLE_LADDER: the doubling part of the audit's
	// idle probe ladder (audit.IdleGaps); nil = audit.DefaultIdleLadder.
	// No other command reads it.
	AuditIdleLadder []time.Duration
	// Provenance is the invocation's commit, command line, machine, images
	// and date (filled once by the lab command); every Result carries it.
	// nil in tests that build a Config by hand.
	Provenance *results.Provenance
	Session    string
	// WorkerKnobs are the Go worker's settings a run passes through as
	// they are: every Go worker of the run (bench, matrix) starts from
	// them, and the lab sets what it owns on top (lab.WorkerConfig: the
	// broker, queue, vendor, strategy and files; then the transport, the
	// per-request TLS cap, the idle timeout and the message count). The
	// zero value is the worker's defaults. A worker knob that needs no
	// arithmetic of the lab is one key of the lab's table setting a field
	// here (docs/running.md#adding-a-key).
	WorkerKnobs worker.Config
}

// TimeScaleOr1 is TimeScale, 1 when it is not set.
func (c Config) TimeScaleOr1() int { return max(c.TimeScale, 1) }

// Replicated reports whether the runs use worker replicas (WORKERS,
// LEDGER or QUEUE_TYPE away from its default, ACTIVE=competing or a
// RATE_LIMIT): each run then starts them
// with vendormock.StartReplicas, merges their records and checks every
// replica's /metrics against them (Result.MetricsCheck).
func (c Config) Replicated() bool {
	return c.Workers > 1 || c.Active == ActiveCompeting || c.RateLimit > 0 || (c.Ledger != "" && c.Ledger != DefaultLedger) || (c.QueueType != "" && c.QueueType != DefaultQueueType) || c.BrokerNodes > 1
}

// DefaultConfig returns the Config used when no word or environment
// variable sets a key: the case's 3 ms and 10 ms RTTs and both client
// strategies, per-request first.
func DefaultConfig() Config {
	return Config{
		Count:             DefaultCount,
		Warmup:            DefaultWarmup,
		RTTs:              []int{3, 10},
		Modes:             slices.Clone(results.AllModes),
		ServerDelayMS:     DefaultServerDelayMS,
		PerRequestTLS:     DefaultPerRequestTLS,
		Out:               DefaultOut,
		LabImages:         DefaultLabImages,
		Profile:           DefaultProfile,
		WorkerState:       DefaultWorkerState,
		CPUProfile:        DefaultCPUProfile,
		TCPHandshake:      DefaultTCPHandshake,
		Bulk:              report.DefaultBulk,
		Workers:           DefaultWorkers,
		Ledger:            DefaultLedger,
		QueueType:         DefaultQueueType,
		Worker:            DefaultWorker,
		Scheme:            DefaultScheme,
		Concurrency:       DefaultConcurrency,
		HTTPVersion:       DefaultHTTPVersion,
		UpstreamKeepalive: "on",
		Active:            DefaultActive,
		RatePace:          RatePaceShare,
		Lanes:             DefaultLanes,
	}
}
