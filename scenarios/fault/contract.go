package fault

import (
	"fmt"
	"strconv"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// IdleSettingWorker is the idle race setting of a contract worker: the
// lab sets no idle timeout, the worker keeps its own default
// (docs/worker-contract.md lists the reference workers' knobs), so the
// race measures what an auditor's worker does as shipped.
const IdleSettingWorker = "worker"

// contract reports whether the runner's worker under test is configured
// by the contract's environment (any WORKER but go).
func (r *Runner) contract() bool { return r.opts.Worker.Contract }

// contractEnv is the environment of a contract worker in a fault
// scenario: the scenario's queues, the broker through Toxiproxy
// (BrokerProxy, so a step can cut it), the scenario's clock start and
// response timeout. The Go-only client knobs (strategy, idle, dial and
// TLS handshake timeouts) have no contract variable and are left out.
func (s *scenarioRun) contractEnv() (map[string]string, error) {
	c := s.sc.Client
	var clock time.Time
	if c.ClockStart != "" {
		t, err := time.Parse(time.RFC3339, c.ClockStart)
		if err != nil {
			return nil, fmt.Errorf("client.clock_start %q: %w", c.ClockStart, err)
		}
		clock = t
	}
	amqpURL := fmt.Sprintf("amqp://guest:guest@%s:%d/", vendormock.AliasToxiproxy, BrokerPort)
	env := lab.ContractEnv(s.r.Stack, s.r.opts.Worker, s.topo, amqpURL, 0, clock)
	if d := c.ResponseTimeout.D(); d > 0 {
		env["VENDOR_RESPONSE_TIMEOUT_MS"] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	return env, nil
}

// ledgerPath returns the one worker's ledger file for the reconciler, ""
// when it is not readable by it: replicas (on volumes or in PostgreSQL)
// and a contract worker's ledger (its own format).
func (s *scenarioRun) ledgerPath() string {
	if s.ws != nil || s.r.contract() {
		return ""
	}
	return s.dir + "/" + lab.LedgerFile
}

// AuditIdleRace returns the idle race of an audit (kind idle-race, the
// defaults of the catalog's race otherwise): nginx keepalive_timeout
// keepalive (the profile's), the given RTTs, count sends per lane in
// bursts of burst with pauses in [keepalive - 500ms, keepalive + 500ms],
// one lane per RTT with the idle setting (IdleSettingWorker for a
// contract worker, "t_minus_rtt_margin" for the Go worker as the lab
// deploys it), and no failure expected in that setting.
func AuditIdleRace(keepalive time.Duration, rtts []int, count, burst int, setting string) *Scenario {
	sc := &Scenario{
		Name: "audit-idle-race", Kind: KindIdleRace, Tool: "nginx",
		Description: "The stale keep-alive race at the profile's keep-alive timeout",
		Fault:       "nginx closes a connection idle for its keepalive_timeout; the worker must not send on it",
		IdleRace: &IdleRaceSpec{
			KeepaliveTimeout: Duration(keepalive), RTTsMS: rtts, Count: count, Burst: burst,
			Settings: []string{setting}, Expect: map[string]Count{setting: Exactly(0)},
		},
	}
	sc.applyDefaults()
	return sc
}
