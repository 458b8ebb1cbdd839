package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Timing of a contract worker's run (docs/worker-contract.md): the lab
// cannot rely on it exiting after MAX_MESSAGES or writing records, so it
// also watches the main queue.
const (
	// contractSettle is how long the main queue must stay empty with no
	// new record before the lab stops a worker that did not exit by itself.
	contractSettle = 5 * time.Second
	// contractExitGrace is how long a worker that wrote every record may
	// take to exit (MAX_MESSAGES) before the lab stops it.
	contractExitGrace = 10 * time.Second
	// contractStall is how long the lab waits when the main queue does
	// not move and no record is written (a worker that consumes nothing).
	contractStall = 45 * time.Second
)

// RunModes returns the runs of every RTT, in order: MODES for the Go
// worker; for any other worker its own run (WorkerMode) and, with
// Baseline, the Go worker's pooled run after it.
func (c Config) RunModes() []string {
	if !c.ContractWorker() {
		return c.Modes
	}
	modes := []string{WorkerMode(c.Worker)}
	if c.Baseline {
		modes = append(modes, vendorapi.PooledName)
	}
	return modes
}

// ContractWorker reports whether the worker under test is not the Go
// worker: it is configured by the contract's environment alone.
func (c Config) ContractWorker() bool {
	return c.Worker != "" && c.Worker != vendormock.WorkerGo
}

var unsafeModeRE = regexp.MustCompile(`[^a-z0-9.-]+`)

// WorkerMode returns the mode name a contract worker's runs carry in
// results and file names: the WORKER value itself for a reference worker
// ("node-fetch"), "image-" and the image name with every character other
// than a-z, 0-9, '.', '-' replaced by '-' for "image:NAME".
func WorkerMode(worker string) string {
	if img, ok := strings.CutPrefix(worker, vendormock.WorkerImagePrefix); ok {
		return "image-" + strings.Trim(unsafeModeRE.ReplaceAllString(strings.ToLower(img), "-"), "-")
	}
	return worker
}

// ErrContractStart is returned when a contract worker's container cannot
// start at all (a bad image name, a Docker error).
var ErrContractStart = errors.New("start contract worker")

// contractKind runs a contract worker (docs/worker-contract.md): its
// image, configured by the contract's environment alone; what it did not
// keep of the contract is data (results.ContractCheck), not an error.
type contractKind struct {
	b     *Bench
	check *results.ContractCheck
}

func (k *contractKind) run(ctx context.Context, p *point) error {
	b := k.b
	logf(b.w, "%s: self-check RTT %.1f ms; %d messages published; starting %s (%s, 1 CPU, contract environment)", p.label, lab.MS(p.selfRTT), p.n, b.sel.Name, b.sel.Image)
	cc, err := b.runContract(ctx, p.topo, p.dir, p.label, p.n, p.rtt, func(id string) { p.workerCPU = SampleWorkerCPU(ctx, id) })
	if err != nil {
		return p.fail("contract worker", err)
	}
	k.check = cc
	p.ledgerPath = "" // the worker's own format (docs/worker-contract.md): not read
	return nil
}

// readRecords checks the records against the contract; without a
// readable file the reconciler goes by the queues and the journal alone.
func (k *contractKind) readRecords(p *point, recs []records.Record, err error) error {
	checkRecords(k.check, recs, err, k.check.Consumed)
	if err != nil {
		p.recordsPath = ""
	}
	return nil
}

func (k *contractKind) complete(_ *point, r *results.Result, entries []vendormock.AccessEntry) error {
	k.b.contractResult(r, k.check, entries)
	return nil
}

// runContract runs a contract worker on topo's published messages until
// it exits, wrote n records, or left the main queue alone long enough,
// and returns what it saw. An image that breaks the contract is not an
// error: it is a ContractCheck with Missing filled in later (checkRecords).
func (b *Bench) runContract(ctx context.Context, topo queues.Topology, runDir, label string, n, rtt int, started func(containerID string)) (*results.ContractCheck, error) {
	env := lab.ContractEnv(b.stack, b.sel, topo, "", n, time.Time{})
	wk, err := b.stack.StartWorker(ctx, vendormock.WorkerOptions{
		Name: fmt.Sprintf("%s-%dms", WorkerMode(b.cfg.Worker), rtt), Image: b.sel.Image, Env: env, CPUs: 1, OutDir: runDir,
		Grace: lab.ContractGrace(),
	})
	if err != nil {
		return nil, fmt.Errorf("%w %s (%s): %w", ErrContractStart, b.sel.Name, b.sel.Image, err)
	}
	if started != nil {
		started(wk.ContainerID())
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
		defer cancel()
		if logs, lerr := wk.Logs(cctx); lerr == nil {
			_ = os.WriteFile(runDir+"/worker.log", []byte(logs), 0o644)
		}
		_ = wk.Stop(cctx, 10*time.Second)
	}()
	cc := &results.ContractCheck{Worker: b.sel.Name, Image: b.sel.Image, Expected: n}
	ch, err := b.amqp.Channel()
	if err != nil {
		return nil, fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	depth := func() (int, bool) {
		q, err := ch.QueueDeclarePassive(topo.Names.Main, true, false, false, false, nil)
		if err != nil {
			return 0, false
		}
		return q.Messages, true
	}

	deadline := time.Now().Add(WorkerTimeout(n, rtt, b.cfg.ServerDelayMS))
	lastDepth, lastRecs, lastChange := n, 0, time.Now()
	var allRecordsAt time.Time
	err = waitWorker(ctx, b.prog, wk, runDir+"/"+lab.RecordsFile, label, n, workerWatch{
		// A malformed records line is reported by checkRecords, not here.
		tick: func(recs int, _ error) (int, bool, error) {
			d, ok := depth()
			if !ok {
				d = lastDepth
			}
			if d != lastDepth || recs != lastRecs {
				lastDepth, lastRecs, lastChange = d, recs, time.Now()
			}
			if recs >= n && allRecordsAt.IsZero() {
				allRecordsAt = time.Now()
			}
			switch {
			case !allRecordsAt.IsZero() && time.Since(allRecordsAt) > contractExitGrace:
				cc.Missing = append(cc.Missing, fmt.Sprintf("did not exit within %s of its %d records (MAX_MESSAGES=%d)", contractExitGrace, n, n))
			case d == 0 && recs < n && time.Since(lastChange) > contractSettle:
				// The queue is drained and no record comes: it handled what it would.
			case time.Since(lastChange) > contractStall:
				// Neither the queue nor the records moved (checkRecords says what is missing).
			case time.Now().After(deadline):
				cc.Missing = append(cc.Missing, fmt.Sprintf("handled %d of %d messages in %s", recs, n, WorkerTimeout(n, rtt, b.cfg.ServerDelayMS)))
			default:
				return max(recs, n-d), false, nil
			}
			cc.Records, cc.Consumed = recs, n-d
			logf(b.w, "%s: stopping the worker: main queue %d of %d left, %d records", label, d, n, recs)
			return max(recs, n-d), true, nil
		},
		exit: func(code int, waitErr error, recs int) error {
			if waitErr == nil {
				cc.ExitCode = &code
			}
			cc.Records = recs
			if d, ok := depth(); ok {
				cc.Consumed = n - d
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	return cc, nil
}

// checkRecords completes cc from the run's records (recs, nil when the
// file is missing or unreadable: readErr) and the access log's figures:
// the parts of the contract the worker did not keep, and where each figure
// of the result comes from.
func checkRecords(cc *results.ContractCheck, recs []records.Record, readErr error, handledOutside int) {
	cc.Sources = map[string]string{
		"TCP connections, connections per send":             results.SourceNginx,
		"TLS version":                                       results.SourceNginx,
		"sends that reached the vendor, refkeys sent twice": results.SourceJournal,
		"where each message ended, lost":                    results.SourceQueues,
	}
	if cc.Consumed == 0 {
		cc.Missing = append(cc.Missing, fmt.Sprintf("consumed nothing from the main queue (QUEUE): %d messages left there", cc.Expected))
	}
	switch {
	case readErr != nil && errors.Is(readErr, os.ErrNotExist):
		cc.Sources["where each message ended, lost"] = results.SourceNotMeasure + " (no records: an acked message leaves no trace in the queues)"
		cc.Missing = append(cc.Missing, fmt.Sprintf("wrote no records file (RECORDS=%s/%s, docs/worker-contract.md#records); %d messages left the queue, their figures come from nginx and the journal",
			vendormock.WorkerOutDir, lab.RecordsFile, handledOutside))
	case readErr != nil:
		cc.Missing = append(cc.Missing, fmt.Sprintf("records file unreadable: %v", readErr))
	case len(recs) < cc.Expected:
		cc.Missing = append(cc.Missing, fmt.Sprintf("wrote %d records for %d messages (one line per handled message, docs/worker-contract.md#records)", len(recs), cc.Expected))
	}
	has := func(f func(records.Record) bool) bool { return slices.ContainsFunc(recs, f) }
	latency, cpu := results.SourceNotMeasure, results.SourceNotMeasure
	if has(func(r records.Record) bool { return r.TotalMS > 0 }) {
		latency = results.SourceRecords + " (total_ms)"
	} else {
		latency = results.SourceNginx + " ($request_time, server side)"
		if len(recs) > 0 {
			cc.Missing = append(cc.Missing, "records carry no total_ms: latency is nginx's $request_time (server side, without the client's connect and handshake)")
		}
	}
	if has(func(r records.Record) bool { return r.CPUMS > 0 }) {
		cpu = results.SourceRecords + " (cpu_ms)"
	} else if len(recs) > 0 {
		cc.Missing = append(cc.Missing, "records carry no cpu_ms: CPU per send is not measured")
	}
	cc.Sources["latency p50/p99, sends/s"] = latency
	cc.Sources["CPU per send"] = cpu
	if has(func(r records.Record) bool { return r.TLSVersion != "" }) {
		cc.Sources["TLS version (client side)"] = results.SourceRecords + " (tls_version)"
	}
	if has(func(r records.Record) bool { return r.Reused }) {
		cc.Sources["connection reuse (client side)"] = results.SourceRecords + " (reused)"
	}
	if has(func(r records.Record) bool { return r.ConnectMS > 0 || r.TLSHandshakeMS > 0 }) {
		cc.Sources[results.SourcePhasesKey] = results.SourceRecords + " (connect_ms, tls_handshake_ms)"
	} else {
		cc.Sources[results.SourcePhasesKey] = results.SourceNotMeasure + " (no record carries connect_ms or tls_handshake_ms)"
	}
}

// contractResult adds a contract worker's run to r: the check, and the
// figures its records lack taken from nginx's log (entries): latency as
// nginx's $request_time of the sends and sends/s over their span. CPU per
// send without cpu_ms in the records is -1 (unknown).
func (b *Bench) contractResult(r *results.Result, cc *results.ContractCheck, entries []vendormock.AccessEntry) {
	r.Worker, r.Contract = cc.Worker, cc
	if b.sel.IdleFromKeepalive {
		// The idle timeout the lab gave the fixed variant (lab.ContractEnv),
		// for the audit's idle rule.
		r.IdleConnTimeoutS = vendormock.FixedIdleTimeout(b.stack.KeepaliveTimeout).Seconds()
	}
	if r.JournalCount == 0 && cc.Consumed > 0 {
		cc.Missing = append(cc.Missing, fmt.Sprintf("called the vendor for none of the %d messages it took from the queue (WireMock journal: 0 sends)", cc.Consumed))
	}
	for _, m := range cc.Missing {
		logf(b.w, "%s at %d ms: CONTRACT: %s", cc.Worker, r.RTTMS, m)
	}
	if cc.Sources["CPU per send"] == results.SourceNotMeasure {
		r.CPUMSPerSend = -1
	}
	if r.LatencyMS.P50 > 0 {
		return
	}
	var times []float64
	var first, last time.Time
	for _, e := range entries {
		if e.Method != "POST" || e.Path != results.SendPath {
			continue
		}
		times = append(times, e.RequestTime*1000)
		if first.IsZero() || e.Time.Before(first) {
			first = e.Time
		}
		if e.Time.After(last) {
			last = e.Time
		}
	}
	if len(times) == 0 {
		return
	}
	slices.Sort(times)
	r.LatencyMS = results.Latency{P50: results.Percentile(times, 0.5), P90: results.Percentile(times, 0.9), P99: results.Percentile(times, 0.99), Max: times[len(times)-1]}
	if len(times) > 1 && last.After(first) {
		r.WallS = last.Sub(first).Seconds()
		r.SendsPerS = float64(len(times)-1) / r.WallS
	}
}
