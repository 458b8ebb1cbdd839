package fault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// raceProxyPort is the first Toxiproxy port of the idle race's per-RTT
// proxies (one per RTT, so every lane runs at once).
const raceProxyPort = 20000

// IdleRaceRow is one (RTT, idle-timeout setting) lane of the idle race.
// Per-1,000 figures divide by Sends.
type IdleRaceRow struct {
	RTTMS             int                     `json:"rtt_ms"`
	Setting           string                  `json:"setting"`
	IdleConnTimeoutMS float64                 `json:"idle_conn_timeout_ms"`
	Sends             int                     `json:"sends"`
	Outcomes          map[outcome.Outcome]int `json:"outcomes"` // worker records by outcome
	Unknown           int                     `json:"unknown"`
	NotSent           int                     `json:"not_sent"`
	// Failures is Unknown + NotSent.
	Failures        int     `json:"failures"`
	FailuresPer1000 float64 `json:"failures_per_1000"`
	UnknownPer1000  float64 `json:"unknown_per_1000"`
	NotSentPer1000  float64 `json:"not_sent_per_1000"`
	// Absorbed counts sends the transport silently redialled (a record
	// with got_conns > 1: a dead pooled connection was replaced before a
	// byte was written).
	Absorbed        int     `json:"absorbed"`
	AbsorbedPer1000 float64 `json:"absorbed_per_1000"`
	// NewConnections counts sends that did not reuse a connection.
	NewConnections int `json:"new_connections"`
	// ReachedVendor counts POSTs of this lane in WireMock's journal.
	ReachedVendor int  `json:"reached_vendor"`
	Duplicates    int  `json:"duplicates"`
	Lost          int  `json:"lost"`
	ReconcileOK   bool `json:"reconcile_ok"`
	// With idle_race.reports (nil, empty when off): the UNKNOWN left for
	// an operator at the end, the ledger's settlements by source and the
	// time to settle by report or pull (measureSettle).
	UnknownLeft  *int           `json:"unknown_left,omitempty"`
	SettledBy    map[string]int `json:"settled_by,omitempty"`
	TimeToSettle *SettleTimes   `json:"time_to_settle,omitempty"`
}

// IdleRaceResult is results/idle-race.json.
type IdleRaceResult struct {
	// Provenance is the run's commit, command line, machine, images and
	// date; nil in files written before it existed.
	Provenance         *results.Provenance `json:"provenance,omitempty"`
	Scenario           string              `json:"scenario"`
	Date               string              `json:"date"`
	KeepaliveTimeoutMS float64             `json:"keepalive_timeout_ms"`
	// KeepaliveHint: nginx sent "Keep-Alive: timeout=T" (idle_race.keepalive_hint).
	KeepaliveHint bool    `json:"keepalive_hint,omitempty"`
	Burst         int     `json:"burst"`
	PauseMinMS    float64 `json:"pause_min_ms"`
	PauseMaxMS    float64 `json:"pause_max_ms"`
	MarginMS      float64 `json:"margin_ms"`
	Seed          uint64  `json:"seed"`
	SendsPerLane  int     `json:"sends_per_lane"`
	ServerDelayMS int     `json:"server_delay_ms"`
	// Reports describes idle_race.reports ("" when off: older files too).
	Reports string        `json:"reports,omitempty"`
	Rows    []IdleRaceRow `json:"rows"`
	// Expect is the scenario's expectation of failures per setting (all
	// RTTs together); Failures lists what did not hold.
	Expect   map[string]Count `json:"expect,omitempty"`
	Failures []string         `json:"failures,omitempty"`
	Pass     bool             `json:"pass"`
	Note     string           `json:"note"`
}

// RunIdleRace runs the idle race of sc (kind idle-race): nginx reloaded
// with keepalive_timeout T, one Toxiproxy proxy per RTT, and one pooled
// worker with its own queue per (RTT, setting), all at once. count > 0
// overrides the sends per lane. The error is for what keeps the race from
// being measured; a failed expectation is Pass false.
func (r *Runner) RunIdleRace(ctx context.Context, sc *Scenario, count int) (IdleRaceResult, error) {
	spec := *sc.IdleRace
	if count > 0 {
		spec.Count = count
	}
	t := spec.KeepaliveTimeout.D()
	res := IdleRaceResult{
		Scenario: sc.Name, Date: time.Now().UTC().Format(time.RFC3339),
		KeepaliveTimeoutMS: lab.MS(t), KeepaliveHint: spec.KeepaliveHint, Burst: spec.Burst,
		PauseMinMS: lab.MS(spec.PauseMin.D()), PauseMaxMS: lab.MS(spec.PauseMax.D()),
		MarginMS: lab.MS(spec.Margin.D()), Seed: spec.Seed, SendsPerLane: spec.Count, ServerDelayMS: *spec.ServerDelayMS,
		Expect: spec.Expect, Reports: reportsNote(spec.Reports),
		Note: hintNote(spec.KeepaliveHint) + " Toxiproxy delays data, not the TCP handshake: " +
			"a new connection costs one RTT less than on a real network. A failure is a send that was UNKNOWN or NOT_SENT; absorbed = the transport redialled before writing (got_conns > 1).",
	}
	r.logf("%s: nginx keepalive_timeout %s, RTTs %v ms, settings %v, %d sends per lane in bursts of %d, pauses uniform in [%s, %s], seed %d",
		sc.Name, t, spec.RTTsMS, spec.Settings, spec.Count, spec.Burst, spec.PauseMin.D(), spec.PauseMax.D(), spec.Seed)
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		for i, rtt := range spec.RTTsMS {
			if p, err := r.Stack.Toxiproxy().Proxy(raceProxyName(rtt)); err == nil {
				_ = p.Delete()
			}
			_ = i
		}
		_ = r.reloadNginx(cctx, NginxSpec{}, false)
	}()
	h2 := sc.Client.HTTPVersion == "2"
	if err := r.reloadNginx(ctx, NginxSpec{KeepaliveTimeout: spec.KeepaliveTimeout, KeepaliveHint: spec.KeepaliveHint}, h2); err != nil {
		return res, err
	}
	if err := r.setServer(ctx, *spec.ServerDelayMS, nil); err != nil {
		return res, err
	}
	ports := map[int]int{}
	for i, rtt := range spec.RTTsMS {
		ports[rtt] = raceProxyPort + i
		if _, err := r.Stack.AddProxy(ctx, raceProxyName(rtt), ports[rtt], vendormock.AliasNginx+":443", rtt); err != nil {
			return res, err
		}
	}
	var (
		lanes []*lane
		wg    sync.WaitGroup
	)
	for i, rtt := range spec.RTTsMS {
		for j, setting := range spec.Settings {
			l := &lane{r: r, spec: spec, rtt: rtt, setting: setting, port: ports[rtt], h2: h2,
				idle:   IdleTimeout(setting, t, rtt, spec.Margin.D()),
				prefix: lanePrefix(r.runID, sc.Name, rtt, setting, h2), seed: spec.Seed + uint64(i*100+j),
				rng: rand.New(rand.NewPCG(spec.Seed, uint64(i*100+j)))}
			lanes = append(lanes, l)
		}
	}
	errs := make([]error, len(lanes))
	for i, l := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = l.run(ctx)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	all, err := r.Stack.Journal(ctx)
	if err != nil {
		return res, err
	}
	perSetting, left := map[string]int{}, 0
	for _, l := range lanes {
		row, err := l.judge(ctx, all)
		if err != nil {
			return res, err
		}
		res.Rows = append(res.Rows, row)
		perSetting[row.Setting] += row.Failures
		if row.UnknownLeft != nil {
			left += *row.UnknownLeft
		}
		if row.Duplicates > 0 {
			res.Failures = append(res.Failures, fmt.Sprintf("%s at %d ms: %d duplicates", row.Setting, row.RTTMS, row.Duplicates))
		}
		if row.Lost > 0 {
			res.Failures = append(res.Failures, fmt.Sprintf("%s at %d ms: %d lost", row.Setting, row.RTTMS, row.Lost))
		}
		if !row.ReconcileOK {
			res.Failures = append(res.Failures, fmt.Sprintf("%s at %d ms: reconciler found broken invariants", row.Setting, row.RTTMS))
		}
	}
	for _, s := range sortedKeys(spec.Expect) {
		if !spec.Expect[s].Match(perSetting[s]) {
			res.Failures = append(res.Failures, fmt.Sprintf("%s: %d failures over all RTTs, want %s", s, perSetting[s], spec.Expect[s]))
		}
	}
	if u := spec.UnknownLeft; u != nil && !u.Match(left) {
		res.Failures = append(res.Failures, fmt.Sprintf("UNKNOWN left for an operator: %d over all lanes, want %s", left, u))
	}
	res.Pass = len(res.Failures) == 0
	return res, nil
}

// ledgerPath is the lane's ledger file for the reconciler; "" for a
// contract worker (its ledger has its own format).
func (l *lane) ledgerPath() string {
	if l.r.contract() {
		return ""
	}
	return filepath.Join(l.dir, lab.LedgerFile)
}

func raceProxyName(rtt int) string { return "race-" + strconv.Itoa(rtt) + "ms" }

// lane is one worker of the idle race.
type lane struct {
	r       *Runner
	spec    IdleRaceSpec
	rtt     int
	setting string
	port    int
	idle    time.Duration
	h2      bool // the worker offers HTTP/2 (client.http_version 2)
	prefix  string
	rng     *rand.Rand
	topo    queues.Topology
	dir     string
	pub     *sender
	recs    *lab.Records
	// Delivery reports (idlerace_reports.go): the seed of the relay's
	// jitter, the secret and its host folder, the horizon, the relay.
	seed      uint64
	secret    []byte
	secretDir string
	horizon   time.Duration
	relay     *vendormock.ReportRelay
}

func (l *lane) name() string {
	return fmt.Sprintf("race-%dms-%s%s", l.rtt, strings.ReplaceAll(l.setting, "_", "-"), h2Suffix(l.h2))
}

// h2Suffix tells an HTTP/2 lane's names apart from an HTTP/1.1 lane's.
// lanePrefix starts every refkey of one lane: "r-<run id>-<race>-<rtt>-
// <setting>[-h2]-". The race's name is in it so that two races of one run
// at the same RTT and settings never share refkeys: without it
// idle-race-window's lane "r-<id>-300-default-" was a prefix of
// idle-race-h2's "r-<id>-300-default-h2-", and the window race counted the
// h2 race's sends as its own (reached vendor 58 for 30 sends).
func lanePrefix(runID, race string, rtt int, setting string, h2 bool) string {
	return fmt.Sprintf("r-%s-%s-%d-%s%s-", runID, race, rtt, strings.ReplaceAll(setting, "_", ""), h2Suffix(h2))
}

func h2Suffix(h2 bool) string {
	if h2 {
		return "-h2"
	}
	return ""
}

// run starts the lane's worker, sends its bursts and stops the worker.
func (l *lane) run(ctx context.Context) (err error) {
	r, st := l.r, l.r.Stack
	l.topo = queues.DefaultTopology("race." + strconv.Itoa(l.rtt) + "." + l.setting + h2Suffix(l.h2))
	l.dir = filepath.Join(r.opts.WorkDir, "idle-race", l.name())
	_ = os.RemoveAll(l.dir)
	if err := lab.StateDir(l.dir); err != nil {
		return err
	}
	l.recs = lab.NewRecords(filepath.Join(l.dir, lab.RecordsFile))
	// A scenario of the same name may have run before on this broker.
	if l.pub, err = newSender(r.conn, l.topo, lab.Delete); err != nil {
		return err
	}
	defer l.pub.close()
	wcfg := lab.WorkerConfig(worker.Config{}, st, st.AMQPURLsNetwork, l.topo, vendorapi.PooledName)
	wcfg.VendorAddr = st.VendorHost + ":" + strconv.Itoa(l.port)
	wcfg.IdleConnTimeout, wcfg.SummaryEvery = l.idle, 100000
	if l.h2 {
		wcfg.HTTPVersion = "2"
	}
	o := vendormock.WorkerOptions{
		Name: l.name(), Args: wcfg.Args(), CPUs: workerCPUs, OutDir: l.dir,
		Env: lab.WorkerEnv(st), Grace: worker.ShutdownGrace(wcfg),
	}
	if r.contract() {
		// The lane's proxy port in the URL: the certificate's SAN is the
		// host, the port does not matter to it.
		o.Args, o.Image, o.Grace = nil, r.opts.Worker.Image, lab.ContractGrace()
		o.Env = lab.ContractEnv(st, r.opts.Worker, l.topo, "", 0, time.Time{})
		o.Env["VENDOR_URL"] = "https://" + st.VendorHost + ":" + strconv.Itoa(l.port)
		// A fixed variant idles out below the race's keep-alive, not the stack's.
		r.opts.Worker.SetIdleTimeout(o.Env, l.spec.KeepaliveTimeout.D())
	}
	if err := l.reportsOn(&wcfg, &o); err != nil {
		return err
	}
	defer l.removeSecret()
	wk, err := st.StartWorker(ctx, o)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if serr := wk.Stop(cctx, stopTimeout); serr != nil {
			err = errors.Join(err, serr)
		}
	}()
	if err := l.pub.waitConsumer(ctx, wk); err != nil {
		return fmt.Errorf("lane %s: %w", l.name(), err)
	}
	defer l.closeRelay() // before the worker stops: no push to a stopped worker
	if err := l.startRelay(ctx, wk); err != nil {
		return err
	}
	r.logf("lane %s: idle timeout %s, worker up", l.name(), l.idle)
	pmin, pmax := l.spec.PauseMin.D(), l.spec.PauseMax.D()
	for done := 0; done < l.spec.Count; {
		n := min(l.spec.Burst, l.spec.Count-done)
		for range n {
			if err := l.pub.valid(ctx, l.prefix, message.Info, "LAB_RACE_01"); err != nil {
				return fmt.Errorf("lane %s: %w", l.name(), err)
			}
		}
		done += n
		if err := l.waitRecords(ctx, done, 60*time.Second+time.Duration(n)*time.Duration(*l.spec.ServerDelayMS+6*l.rtt+300)*time.Millisecond); err != nil {
			logs, _ := wk.Logs(context.WithoutCancel(ctx))
			return fmt.Errorf("lane %s: %w\nworker logs:\n%s", l.name(), err, lab.LastLines(logs, 20))
		}
		if done%(l.spec.Burst*20) == 0 {
			r.logf("lane %s: %d of %d sent, %s", l.name(), done, l.spec.Count, formatCounts(l.recs.Counts()))
		}
		if done < l.spec.Count {
			pause := pmin + time.Duration(l.rng.Int64N(int64(pmax-pmin)+1))
			last, _ := l.recs.Last() // waitRecords saw done records
			if err := lab.Sleep(ctx, time.Until(last.End.Add(pause))); err != nil {
				return err
			}
		}
	}
	if l.spec.Reports != nil {
		return l.waitSettled(ctx)
	}
	return nil
}

func (l *lane) waitRecords(ctx context.Context, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if err := l.recs.Poll(); err != nil {
			return err
		}
		if l.recs.Len() >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %d of %d records after %s", ErrWaitTimeout, l.recs.Len(), n, timeout)
		}
		if err := lab.Sleep(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
}

// judge reconciles the lane (its worker stopped) and counts its row.
func (l *lane) judge(ctx context.Context, all []vendormock.JournalEntry) (IdleRaceRow, error) {
	st := l.r.Stack
	var journal []reconcile.JournalEntry
	for _, e := range all {
		if e.Method == "POST" && e.Path == st.Profile.API.SendPath && strings.HasPrefix(e.RefKey, l.prefix) {
			journal = append(journal, reconcile.JournalEntry(e))
		}
	}
	in, err := reconcile.Gather(ctx, reconcile.GatherOptions{
		Published: l.pub.pub.Published(), RecordsPath: l.recs.Path(), LedgerPath: l.ledgerPath(),
		AMQPURL: st.AMQPURL, Main: l.topo.Names.Main, SendPath: st.Profile.API.SendPath,
		MaxAttempts: l.topo.MaxAttempts,
	})
	if err != nil {
		return IdleRaceRow{}, fmt.Errorf("lane %s: reconcile: %w", l.name(), err)
	}
	in.Journal = journal
	rep := reconcile.Reconcile(in)
	_ = os.WriteFile(filepath.Join(l.dir, "reconcile.json"), mustJSON(rep), 0o644)
	row := raceRow(l.rtt, l.setting, l.idle, len(l.pub.pub.Published()), in.Records, len(journal), rep)
	if l.spec.Reports != nil {
		row.addSettle(measureSettle(in, l.topo.Names.Unknown, in.Records))
	}
	return row, nil
}

// raceRow counts one lane's records.
func raceRow(rtt int, setting string, idle time.Duration, sends int, recs []records.Record, reached int, rep reconcile.Report) IdleRaceRow {
	row := IdleRaceRow{RTTMS: rtt, Setting: setting, IdleConnTimeoutMS: lab.MS(idle), Sends: sends, Outcomes: map[outcome.Outcome]int{},
		ReachedVendor: reached, Duplicates: rep.Duplicates, Lost: rep.Lost, ReconcileOK: rep.OK}
	for _, r := range recs {
		row.Outcomes[r.Outcome]++
		switch r.Outcome {
		case outcome.Unknown:
			row.Unknown++
		case outcome.NotSent:
			row.NotSent++
		}
		if r.GotConns > 1 && r.Outcome == outcome.Sent {
			row.Absorbed++
		}
		if r.GotConns > 0 && !r.Reused {
			row.NewConnections++
		}
	}
	row.Failures = row.Unknown + row.NotSent
	per := func(n int) float64 {
		if sends == 0 {
			return 0
		}
		return math.Round(float64(n)*1000/float64(sends)*10) / 10
	}
	row.FailuresPer1000, row.UnknownPer1000, row.NotSentPer1000, row.AbsorbedPer1000 = per(row.Failures), per(row.Unknown), per(row.NotSent), per(row.Absorbed)
	return row
}

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return []byte(`{"error": "` + err.Error() + `"}`)
	}
	return b
}

// hintNote is the idle race note's first sentence: whether nginx told the
// client its keepalive_timeout.
func hintNote(hint bool) string {
	if hint {
		return "nginx keepalive_timeout has two parameters: the Keep-Alive: timeout hint goes to the client."
	}
	return "nginx keepalive_timeout has one parameter (no Keep-Alive hint to the client)."
}
