package fault

import (
	"errors"
	"fmt"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// Kinds of scenario.
const (
	KindFault    = "fault"     // steps against one worker, checked against Expect
	KindIdleRace = "idle-race" // the stale keep-alive race, IdleRace section
)

// Tools that produce a fault (Scenario.Tool). Transport failures come from
// Toxiproxy or nginx, never from WireMock faults (nginx would turn those
// into 502s).
var Tools = []string{"toxiproxy", "nginx", "wiremock", "broker", "worker", "clock", "publisher", "streamreset"}

// ToxicTypes are the stock Toxiproxy toxics (v2.12.0) a scenario may add.
var ToxicTypes = []string{"latency", "bandwidth", "slow_close", "timeout", "reset_peer", "slicer", "limit_data"}

// Proxies a step may disable or enable: the vendor path
// (vendormock.ProxyName), the worker's broker connection (BrokerProxy) and
// the replicas' PostgreSQL ledger connection (LedgerProxy) and the mock
// vendor's report pushes to the worker (ReportsProxy, with server.reports).
var Proxies = []string{vendormock.ProxyName, BrokerProxy, LedgerProxy, ReportsProxy}

// BrokerProxy is the Toxiproxy proxy every fault scenario's worker reaches
// RabbitMQ through, so a step can cut the broker connection.
const BrokerProxy = "broker"

// ErrInvalidScenario is wrapped by every *ScenarioError.
var ErrInvalidScenario = errors.New("invalid scenario")

// ScenarioError is a scenario file that cannot be used: the file, the
// field path (e.g. "steps[2].toxic_add.type") and what is wrong. Load
// returns all problems of one file joined.
type ScenarioError struct {
	File  string // path as given
	Field string // YAML path, "" for the whole file
	Msg   string
}

// Error returns "FILE: FIELD: MSG".
func (e *ScenarioError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Msg)
}

// Unwrap returns ErrInvalidScenario.
func (e *ScenarioError) Unwrap() error { return ErrInvalidScenario }

// Scenario is one file of the catalog (scenarios/catalog/<name>.yaml): a
// named, declarative fault or race run through the real stack. Every
// section but name, description, tool and fault is optional; the
// defaults are listed on each field.
type Scenario struct {
	Name        string `yaml:"name"`        // lower case, digits, '-'; equals the file name without .yaml
	Description string `yaml:"description"` // one line for `./run.sh list`
	Kind        string `yaml:"kind"`        // KindFault (default) or KindIdleRace
	// Tool says which part of the lab produces the fault (Tools).
	Tool string `yaml:"tool"`
	// Fault is what goes wrong and what must follow, in a sentence.
	Fault    string       `yaml:"fault"`
	Vendor   VendorSpec   `yaml:"vendor"`
	Network  NetworkSpec  `yaml:"network"`
	Server   ServerSpec   `yaml:"server"`
	Client   ClientSpec   `yaml:"client"`
	Workload WorkloadSpec `yaml:"workload"`
	// Workers, when set, runs the scenario on worker replicas
	// (vendormock.StartReplicas) instead of one worker; the replica steps
	// (kill_worker, stop_worker, add_worker, recreate_worker) need it.
	Workers *WorkersSpec `yaml:"workers"`
	// BrokerNodes runs the scenario on a RabbitMQ cluster of that many
	// nodes (rabbitmq-1 .. rabbitmq-N; vendormock.Options.BrokerNodes),
	// 0 or 1 = the one node of every other scenario. Above 1 it needs a
	// workers section: the replicas get every node's address and reach
	// the cluster directly, not through the broker proxy. Run starts one
	// stack per value.
	BrokerNodes int `yaml:"broker_nodes"`
	// Steps run in order: sends (the worker handles them before the next
	// step unless wait: false), waits, checks, and faults switched on and
	// off. They say when each fault applies.
	// AppliesTo says which workers under test and profiles the scenario
	// applies to (default all; see AppliesTo for the replica rule).
	AppliesTo AppliesTo     `yaml:"applies_to"`
	Steps     []Step        `yaml:"steps"`
	Expect    Expect        `yaml:"expect"`
	IdleRace  *IdleRaceSpec `yaml:"idle_race"`

	// File is the path the scenario was read from.
	File string `yaml:"-"`
}

// VendorSpec names the vendor profile; one stack serves a whole
// invocation, so it must be the run's PROFILE (empty = any).
type VendorSpec struct {
	Profile string `yaml:"profile"` // e.g. "alimtalk" (the profile's name)
}

// NetworkSpec is the vendor path through Toxiproxy at the start of the
// scenario.
type NetworkSpec struct {
	RTTMS  int         `yaml:"rtt_ms"` // round trip added by Toxiproxy, ms (default 3)
	Toxics []ToxicSpec `yaml:"toxics"` // added on the vendor proxy before the first step
}

// ToxicSpec is one Toxiproxy toxic (https://github.com/Shopify/toxiproxy
// README, "Toxics"): its name, type, direction and attributes (whole
// numbers: ms for latency/timeout/delay, bytes for limit_data/slicer).
type ToxicSpec struct {
	Name       string         `yaml:"name"`
	Type       string         `yaml:"type"`     // ToxicTypes
	Stream     string         `yaml:"stream"`   // "upstream" (to nginx) or "downstream" (to the worker); default downstream
	Proxy      string         `yaml:"proxy"`    // Proxies; default the vendor proxy
	Toxicity   *float64       `yaml:"toxicity"` // 0..1, default 1
	Attributes map[string]int `yaml:"attributes"`
}

// ServerSpec is the vendor side: WireMock think time, extra stubs, and the
// nginx config in effect at the start.
type ServerSpec struct {
	// DelayMS is WireMock's fixed delay on a send, ms (default 18).
	DelayMS *int `yaml:"delay_ms"`
	// Nginx is the nginx config at the start (default: the profile's).
	Nginx NginxSpec `yaml:"nginx"`
	// Stubs are extra WireMock stubs in the vendor profile's stub format
	// (vendormock/profiles/alimtalk/stubs/stubs.yaml explains it), for
	// business answers such as a rejection code. Not for transport faults.
	Stubs []vendormock.StubSpec `yaml:"stubs"`
	// StreamReset, when set, puts the stream-reset proxy into the vendor
	// path for the whole scenario (streamreset.go); needs
	// client.http_version "2".
	StreamReset *StreamResetSpec `yaml:"stream_reset"`
	// Reports, when set, turns the vendor's delivery reports on: the
	// worker gets the profile's reports section, a secret and a journal,
	// and the mock vendor pushes a report per accepted send (reports.go).
	Reports *ReportsRunSpec `yaml:"reports"`
}

// NginxSpec is an nginx config variant (vendormock.NginxVariant).
type NginxSpec struct {
	// KeepaliveTimeout is nginx keepalive_timeout (one parameter, no
	// Keep-Alive hint); default the profile's (or KEEPALIVE_TIMEOUT).
	KeepaliveTimeout Duration `yaml:"keepalive_timeout"`
	// SendLocation are nginx directives for "location = <send path>",
	// e.g. "proxy_pass http://127.0.0.1:9;" (nothing listens: 502).
	SendLocation string `yaml:"send_location"`
	// RateLimit is the vendor's sends/s for the whole account while the
	// variant is in force: nginx answers a send above it 429 with
	// Retry-After (docs/deployment.md#vendor-rate-limit); 0 = none. Not
	// with SendLocation.
	RateLimit int `yaml:"rate_limit"`
	// KeepaliveHint sends "Keep-Alive: timeout=N" (keepalive_timeout's
	// second parameter) while the variant is in force.
	KeepaliveHint bool `yaml:"keepalive_hint"`
}

// ClientSpec is the worker under test: strategy and timeouts (worker
// flags of the same names). Zero values keep the worker's defaults.
type ClientSpec struct {
	Strategy            string   `yaml:"strategy"`              // pooled (default) or per-request
	IdleConnTimeout     Duration `yaml:"idle_conn_timeout"`     // default: keepalive_timeout - RTT - 1s
	ResponseTimeout     Duration `yaml:"response_timeout"`      // default the worker's (10s)
	TLSHandshakeTimeout Duration `yaml:"tls_handshake_timeout"` // default the worker's
	DialTimeout         Duration `yaml:"dial_timeout"`          // default the worker's
	RetryDelay          Duration `yaml:"retry_delay"`           // retry queue TTL, default 2s
	MaxAttempts         int      `yaml:"max_attempts"`          // default 5
	// Concurrency is how many messages the worker handles at once
	// (-concurrency: sends in flight; the prefetch is one more), 1..worker.MaxConcurrency;
	// default 1, the case's (docs/case.md). Above 1 the queue order is not
	// kept; the outcomes and the never-twice rule are (docs/outcomes.md).
	Concurrency int `yaml:"concurrency"`
	// ClockStart starts the worker's clock at this RFC 3339 time
	// (-clock-start), e.g. "2026-11-30T20:49:54+09:00".
	ClockStart string `yaml:"clock_start"`
	// HTTPVersion is the HTTP version the worker offers the vendor
	// (-http-version): "1.1" (default, the case's) or "2" (h2 through
	// ALPN; nginx then offers h2 for the scenario). The Go worker only.
	HTTPVersion string `yaml:"http_version"`
	// UnsafeAllowTransportReplay turns the worker's
	// -unsafe-allow-transport-replay on: Go's transport replays a POST
	// the vendor may have processed. Negative controls only (the Go
	// worker); docs/outcomes.md#automatic-replays.
	UnsafeAllowTransportReplay bool `yaml:"unsafe_allow_transport_replay"`
	// SendInterval paces the worker (-send-interval): it takes a message
	// no sooner than this after the previous one, its share of a vendor
	// rate limit (docs/deployment.md#vendor-rate-limit); 0 = not paced.
	SendInterval Duration `yaml:"send_interval"`
}

// WorkloadSpec are the defaults of every send step.
type WorkloadSpec struct {
	Category string `yaml:"category"` // info (default) or ad
	Template string `yaml:"template"` // template_code, default LAB_FAULT_01
	Seed     uint64 `yaml:"seed"`     // seeds the pauses of paced sends (default 1)
	// RefKeyPrefix is put before every refkey of the scenario, e.g. "rl-"
	// (the alimtalk profile answers the first "rl-" send of a run 429 with
	// Retry-After); default none. a-z, 0-9, '-', up to 16.
	RefKeyPrefix string `yaml:"refkey_prefix"`
}

// Step is one thing the runner does; exactly one field is set.
type Step struct {
	Send          *SendStep    `yaml:"send"`
	Wait          *WaitStep    `yaml:"wait"`
	CheckJournal  *Count       `yaml:"check_journal"` // the journal's sends of this scenario so far
	ToxicAdd      *ToxicSpec   `yaml:"toxic_add"`
	ToxicRemove   string       `yaml:"toxic_remove"`  // a toxic's name (vendor proxy)
	ProxyDisable  string       `yaml:"proxy_disable"` // Proxies
	ProxyEnable   string       `yaml:"proxy_enable"`  // Proxies
	Nginx         *NginxSpec   `yaml:"nginx"`         // reload nginx with this variant ({} = the start config)
	ServerDelayMS *int         `yaml:"server_delay_ms"`
	RotateToken   bool         `yaml:"rotate_token"`   // the vendor refuses the current token (401) from now on
	RestartWorker *RestartStep `yaml:"restart_worker"` // SIGTERM the worker, start it again on the same ledger
	Sleep         Duration     `yaml:"sleep"`
	// Replica steps (a workers section is needed) and the broker restart.
	KillWorker     *ReplicaRef        `yaml:"kill_worker"`     // SIGKILL: no in-flight message finished
	StopWorker     *ReplicaRef        `yaml:"stop_worker"`     // SIGTERM, up to the shutdown grace, then SIGKILL
	AddWorker      *AddWorkerStep     `yaml:"add_worker"`      // one more replica (a rolling deploy's new pod)
	RecreateWorker *RecreateStep      `yaml:"recreate_worker"` // SIGKILL, new container, ledger kept or lost
	RestartBroker  *RestartBrokerStep `yaml:"restart_broker"`  // RabbitMQ stopped and started again
	// Nemesis steps (nemesis.go): each names a Target; what a scenario
	// leaves paused or partitioned is undone when it ends.
	Pause        string        `yaml:"pause"`         // freeze the target (docker pause)
	Unpause      string        `yaml:"unpause"`       // thaw what pause froze
	Partition    string        `yaml:"partition"`     // cut the target off the run's network
	Heal         string        `yaml:"heal"`          // connect it again, aliases restored
	CheckHealthz *HealthzCheck `yaml:"check_healthz"` // a replica's /healthz status within a time
	// Broker node steps (nodes.go; broker_nodes above 1): a node a
	// scenario leaves down is started again when it ends.
	KillNode  *NodeStep `yaml:"kill_node"`  // SIGKILL a node (a crash, a lost machine)
	StopNode  *NodeStep `yaml:"stop_node"`  // SIGTERM a node (a shutdown)
	StartNode *NodeStep `yaml:"start_node"` // start nodes a step took down, at once
}

// WorkersSpec are the worker replicas of a scenario, all consuming its
// main queue (vendormock.ReplicaOptions; docs/deployment.md describes the
// deployment they model).
type WorkersSpec struct {
	// Count is the number of replicas started before the first step
	// (worker-1 .. worker-N, started in that order), 1..5; default 1.
	Count int `yaml:"count"`
	// Ledger is bbolt (default: one file per replica on its own volume) or
	// postgres (one database shared by every replica).
	Ledger string `yaml:"ledger"`
	// QueueType is classic (default) or quorum: the worker's queues.
	QueueType string `yaml:"queue_type"`
	// SingleActiveConsumer declares the main queue with RabbitMQ's single
	// active consumer (default true); false only for a negative control,
	// where every replica consumes at once.
	SingleActiveConsumer *bool `yaml:"single_active_consumer"`
	// DeadLetter is the quorum queues' dead-letter strategy:
	// DeadLetterAtLeastOnce (default) or DeadLetterAtMostOnce, RabbitMQ's
	// default, only for a negative control (worker
	// -dead-letter-at-most-once).
	DeadLetter string `yaml:"dead_letter"`
	// QueueNodes pins queues of the scenario, by QueueRoles name, to one
	// node each (broker_nodes above 1), e.g. {main: rabbitmq-1}: each is
	// declared through that node with the worker's arguments, and a quorum
	// queue keeps only that node's member (the others are removed: a
	// queue whose every member is down, as when a majority is lost)
	// (RabbitMQ puts a classic queue on the
	// declaring client's node). The lab does it before the replicas
	// start. Default: where RabbitMQ puts them.
	QueueNodes map[string]string `yaml:"queue_nodes"`
}

// Dead-letter strategies of WorkersSpec.DeadLetter (RabbitMQ's
// x-dead-letter-strategy values).
const (
	DeadLetterAtLeastOnce = "at-least-once"
	DeadLetterAtMostOnce  = "at-most-once"
)

// SAC reports whether single active consumer is on (the default).
func (w *WorkersSpec) SAC() bool { return w.SingleActiveConsumer == nil || *w.SingleActiveConsumer }

// ReplicaActive names, in a replica step, the active replica: the one
// whose /healthz says active, else the running one whose records file has
// the latest record, else the only one running.
const ReplicaActive = "active"

// ReplicaRef names the replica a step acts on: ReplicaActive (default) or
// an id, "worker-1" .. "worker-N" in start order.
type ReplicaRef struct {
	Replica string `yaml:"replica"`
}

// AddWorkerStep starts one more replica with the scenario's options and,
// for the bbolt ledger, a fresh volume; the step returns once the main
// queue has one consumer per running replica (or after 60 s with a log
// line: a standby of single active consumer may count later).
type AddWorkerStep struct{}

// RecreateStep kills a replica (SIGKILL) and starts a new container with
// the same id and records file. KeepLedger false gives a bbolt replica a
// fresh, empty volume (a lost disk); a PostgreSQL ledger is shared and
// always kept.
type RecreateStep struct {
	Replica    string `yaml:"replica"`     // ReplicaActive (default) or an id
	KeepLedger bool   `yaml:"keep_ledger"` // default false: the ledger is lost
}

// RestartBrokerStep stops RabbitMQ (SIGTERM, up to StopTimeout) and starts
// the same container again: durable queues and persistent messages
// survive, every connection closes and the workers reconnect.
type RestartBrokerStep struct {
	StopTimeout Duration `yaml:"stop_timeout"` // default 10s
}

// SendStep publishes messages and, by default, waits until the worker
// has handled as many (one record each).
type SendStep struct {
	Count    int    `yaml:"count"`    // valid notifications, >= 0
	Invalid  int    `yaml:"invalid"`  // malformed messages mixed in evenly, >= 0
	Category string `yaml:"category"` // default Workload.Category
	Template string `yaml:"template"` // default Workload.Template
	Pacing   Pacing `yaml:"pacing"`
	// Wait false returns at once after publishing.
	Wait *bool `yaml:"wait"`
	// SameRefKey: every message of the step reuses the refkey of the
	// scenario's previous valid message with another body (another text):
	// a producer reusing a refkey for a new notification. Not with invalid.
	SameRefKey bool `yaml:"same_refkey"`
}

// Pacing spreads a send step's messages over time. Continuous (default)
// publishes one every Interval (0 = all at once); bursts publishes Burst
// messages, waits until the worker handled them, then pauses for a time
// drawn uniformly from [PauseMin, PauseMax] (seeded by Workload.Seed),
// measured from the end of the burst's last send.
type Pacing struct {
	Mode     string   `yaml:"mode"` // continuous | bursts
	Interval Duration `yaml:"interval"`
	Burst    int      `yaml:"burst"`
	PauseMin Duration `yaml:"pause_min"`
	PauseMax Duration `yaml:"pause_max"`
}

// WaitStep waits until every condition set holds (or Timeout, default
// 60s, fails the scenario).
type WaitStep struct {
	Records  int                     `yaml:"records"`  // records (handled messages) at least
	Outcomes map[outcome.Outcome]int `yaml:"outcomes"` // records of each outcome at least
	Journal  int                     `yaml:"journal"`  // journal sends of this scenario at least
	// Settled is records that end their message's stay at least: every
	// record but NOT_SENT (a 429'd message is recorded NOT_SENT, then
	// again when its retry is handled), so it counts messages done.
	Settled int `yaml:"settled"`
	// Clock "HH:MM:SS" (alone; needs client.clock_start) waits until the
	// worker's clock has surely passed that time, e.g. a window opening.
	Clock   string   `yaml:"clock"`
	Timeout Duration `yaml:"timeout"`
}

// RestartStep stops the worker with SIGTERM (it finishes the message in
// flight) and starts a new one with the same ledger and records.
type RestartStep struct {
	After Duration `yaml:"after"` // pause between stop and start
}

// Expect is what must be observed after the steps (and Settle). Counts
// are Count strings. Every scenario also needs exactly Duplicates
// duplicates, 0 lost and a reconciler verdict of OK (its duplicate
// findings aside).
type Expect struct {
	// Duplicates is how many refkeys must reach the vendor more than once
	// without a 4xx answer (default 0), seen by the reconciler AND counted
	// in WireMock's journal: a negative control plants one and passes only
	// if both see it.
	Duplicates int `yaml:"duplicates"`
	// Lost is how many published messages the reconciler must find
	// nowhere (not sent, in no queue; default 0): a negative control
	// plants a loss and passes only if the reconciler sees exactly it.
	Lost int `yaml:"lost"`
	// Outcomes counts where each published message ended (reconciler).
	Outcomes map[outcome.Outcome]Count `yaml:"outcomes"`
	// Records counts the worker's records by outcome (attempts, so a
	// retried message counts once per attempt).
	Records map[outcome.Outcome]Count `yaml:"records"`
	// Journal counts POSTs to the send path of this scenario (every status).
	Journal *Count `yaml:"journal"`
	// JournalByOutcome counts journal sends of the messages that ended in
	// each outcome (e.g. UNKNOWN: 1 = the one unknown send reached the vendor).
	JournalByOutcome map[outcome.Outcome]Count `yaml:"journal_by_outcome"`
	// Settle is how long to wait after the steps before counting the
	// journal: at least the slowest response that could still arrive.
	Settle Duration `yaml:"settle"`
	// WindowCutoff "HH:MM" (the worker's window zone): no record SENT at
	// or after it, none OUTSIDE_SEND_WINDOW before it.
	WindowCutoff string `yaml:"window_cutoff"`
	// Reasons: every INVALID, REJECTED, NOT_SENT and UNKNOWN record
	// carries a reason (error text).
	Reasons bool `yaml:"reasons"`
	// RetryAfter: every NOT_SENT record followed by another record of its
	// refkey is followed no sooner than this (the next record's start
	// minus the NOT_SENT record's end): a retry honouring the vendor's
	// Retry-After. 0 = not checked.
	RetryAfter Duration `yaml:"retry_after"`
	// LedgerAgrees (PostgreSQL ledger only) compares the ledger with the
	// journal after the run, for every refkey of the scenario: each refkey
	// the vendor received has a ledger row (no send without its Begin),
	// one the vendor accepted (2xx) is SENT or UNKNOWN there, never
	// NOT_SENT or still ATTEMPTING, and one the vendor never received is
	// not SENT.
	LedgerAgrees bool `yaml:"ledger_agrees"`
	// NoCrash: every replica (or the one worker) that no step killed or
	// stopped is still running when the steps end: the faults made no
	// worker exit (in a deployment, a crash loop).
	NoCrash bool `yaml:"no_crash"`
	// ReportsSettled counts the pushed reports the worker answered
	// "settled" (an UNKNOWN it settled by the report); needs
	// server.reports.
	ReportsSettled *Count `yaml:"reports_settled"`
	// ReportsForged counts the forged reports (server.reports.forge) the
	// worker refused with 401; one it answered otherwise always fails.
	ReportsForged *Count `yaml:"reports_forged"`
	// SettledBy counts the ledger's settlements of UNKNOWN by source
	// (report, pull, horizon, operator); a source not named must be 0.
	SettledBy map[string]Count `yaml:"settled_by"`
	// UnknownLeft counts the messages left UNKNOWN for an operator at the
	// end (a ledger entry UNKNOWN or a copy in <main>.unknown). Required
	// with server.reports, and "0" when the worker is told the vendor's
	// reports are complete.
	UnknownLeft *Count `yaml:"unknown_left"`
	// SettledAfter: every UNKNOWN settled by a vendor report took at least
	// this long from its send attempt (a delay really applied); 0 = not
	// checked.
	SettledAfter Duration `yaml:"settled_after"`
}

// Published counts the messages the scenario's steps publish.
func (sc *Scenario) Published() int {
	n := 0
	for _, st := range sc.Steps {
		if st.Send != nil {
			n += st.Send.Count + st.Send.Invalid
		}
	}
	return n
}
