package scale

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/matrix"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Defaults of the scale benchmark (docs/running.md#the-scale-benchmark).
const (
	// DefaultServerDelayMS is the grid's vendor think time, ms: long
	// enough that one worker at concurrency 32 (about 190 sends/s) stays
	// well below what this 2-core machine carries (about 760 sends/s).
	DefaultServerDelayMS = 150
	// DefaultCaseDelayMS is the think time of the case series (the
	// case's 18 ms); CaseOff turns the series off.
	DefaultCaseDelayMS = bench.DefaultServerDelayMS
	CaseOff            = -1
	// DefaultPointS is the wall time each point aims at, s (the count
	// model: PointCount).
	DefaultPointS = 60
	// DefaultSoakS is the memory run's length, s; 0 = no memory run.
	DefaultSoakS = 300
	// DefaultCount caps every point's measured sends; POINT_S sets the
	// count below it.
	DefaultCount  = 1_000_000
	DefaultWarmup = 100
	DefaultRTTMS  = 10
	// DefaultOut is the committed scale run's folder.
	DefaultOut = "results/scale"
	// MaxPointS and MaxSoakS bound POINT_S and SOAK_S (an hour).
	MaxPointS = 3600
	MaxSoakS  = 3600
)

// Config is one scale run. It carries the matrix's Config (itself
// carrying the bench's): COUNT (a cap), WARMUP, RTTS (one value),
// SERVER_DELAY_MS (the grid's think time), HTTP_VERSION, SCHEME,
// POOL_SIZE, KEEPALIVE_TIMEOUT, PROFILE, WORKER_STATE, RATE_LIMIT,
// RATE_PACE, OUT, the images and the worker's knobs reach every point as
// they are; Concurrencies and Drivers are the matrix's lists. Every
// worker point runs competing replicas on the shared PostgreSQL ledger
// (ACTIVE=competing, LEDGER=postgres: the only combination where N
// replicas are N active workers without sending twice,
// docs/deployment.md#several-active-workers), pooled client; LEDGER=bbolt
// with WORKERS=1 runs the case's one worker instead (WorkerLedger).
type Config struct {
	matrix.Config
	// WorkerCounts are the active workers of the grid's worker points
	// (WORKERS), each 1..bench.MaxWorkers.
	WorkerCounts []int
	// CaseDelayMS is the think time of the case series (CASE_DELAY_MS):
	// every concurrency, the bare client and one worker; CaseOff = none.
	CaseDelayMS int
	// PointS is the wall time a point aims at, s (POINT_S; PointCount).
	PointS int
	// SoakS is the length of the memory run (SOAK_S), s: one worker at
	// the largest concurrency and the grid's think time, its RSS sampled
	// every second; 0 = none.
	SoakS int
	// Repeats is how many times each grid and case point runs
	// (REPEATS, 1..MaxRepeats; 0 counts as 1), in turns: at each
	// concurrency the bare client, then the worker points, then the bare
	// client again... so that a drift of a shared machine's load falls
	// on both drivers alike (the summary gives each one's median).
	Repeats int
	// UpstreamPool is the idle connections nginx keeps to WireMock
	// (UPSTREAM_POOL; vendormock.Options.UpstreamKeepalive): by default
	// DefaultUpstreamPool; UpstreamPoolProfile (0) keeps the profile's
	// nginx.upstream_keepalive (8 in the sms profile).
	UpstreamPool int
}

// Upstream pools of the scale benchmark (UPSTREAM_POOL).
const (
	// DefaultUpstreamPool is vendormock.WireMockThreads (600): above the
	// grid's 4 x 128 sends in flight, so that nginx never closes an idle
	// connection to WireMock that the next request needs. With the sms
	// profile's 8, every burst of more than 8 requests ending together
	// closed the connections beyond 8, and the next burst opened them
	// again: the worker at 128 in flight, whose deliveries come in bursts,
	// paid that in nginx's CPU and in its sends' latency, the bare client
	// much less (docs/running.md#the-scale-benchmark).
	DefaultUpstreamPool = vendormock.WireMockThreads
	// UpstreamPoolProfile keeps the profile's upstream keep-alive pool.
	UpstreamPoolProfile = 0
	// MaxUpstreamPool bounds UPSTREAM_POOL (nginx's worker_connections
	// is 1024).
	MaxUpstreamPool = 1000
)

// MaxRepeats bounds Config.Repeats (REPEATS).
const MaxRepeats = 9

// DefaultConfig is the scale run of issue 17: concurrency 1, 8, 32 and
// 128, workers 1, 2 and 4 and the bare client at a 150 ms think time,
// the case series at 18 ms, a five-minute memory run; 10 ms RTT, HTTPS
// over HTTP/2 (one connection per worker), about a minute per point.
func DefaultConfig() Config {
	m := matrix.DefaultConfig()
	b := bench.DefaultConfig()
	b.Count, b.Warmup, b.RTTs = DefaultCount, DefaultWarmup, []int{DefaultRTTMS}
	b.Modes, b.ServerDelayMS, b.HTTPVersion, b.Out = []string{vendorapi.PooledName}, DefaultServerDelayMS, "2", DefaultOut
	b.Ledger, b.Active, b.Scheme = vendormock.LedgerPostgres, bench.ActiveCompeting, string(vendormock.SchemeHTTPS)
	m.Config = b
	m.Schemes = []vendormock.Scheme{vendormock.SchemeHTTPS}
	m.Concurrencies = []int{1, 8, 32, 128}
	m.Drivers = []string{results.DriverDirect, results.DriverWorker}
	return Config{Config: m, WorkerCounts: []int{1, 2, 4}, CaseDelayMS: DefaultCaseDelayMS, PointS: DefaultPointS, SoakS: DefaultSoakS,
		UpstreamPool: DefaultUpstreamPool}
}

// WorkerLedger is the worker points' ledger and how their replicas share
// the queue: the shared PostgreSQL ledger with competing consumers (the
// default: N replicas are N active workers), or, with LEDGER=bbolt (which
// the lab accepts only with WORKERS=1), the case's one worker on its own
// bbolt file under single active consumer.
func (c Config) WorkerLedger() (ledger, active string) {
	if c.Ledger == vendormock.LedgerBbolt {
		return vendormock.LedgerBbolt, bench.ActiveSingle
	}
	return vendormock.LedgerPostgres, bench.ActiveCompeting
}

// Model constants of PointCount.
const (
	// SendOverheadMS is what a pooled HTTPS send adds to the think time
	// and one RTT on this machine (TLS records, nginx, Toxiproxy), ms: the
	// issue's concurrency-1 row, 30.7 ms p50 at 18 ms think and 10 ms RTT.
	SendOverheadMS = 3
	// MachineSendsPerS is what this 2-core machine carried at most with
	// the PostgreSQL ledger (issue 17: 751-763 sends/s at concurrency 32
	// and 128), rounded up: no count is sized beyond it.
	MachineSendsPerS = 800
	// MinPointCount is the fewest measured sends of a point.
	MinPointCount = 50
)

// ModelRate is the sends/s expected from concurrency sends in flight on
// each of active workers, each send taking the think time, one RTT and
// SendOverheadMS: capped at MachineSendsPerS and, with a rate limit
// (sends/s, 0 = none), at bench.RateHeadroom of it.
func ModelRate(concurrency, active, delayMS, rttMS, rateLimit int) float64 {
	per := time.Duration(delayMS+rttMS+SendOverheadMS) * time.Millisecond
	rate := float64(concurrency*max(active, 1)) / per.Seconds()
	rate = min(rate, MachineSendsPerS)
	if rateLimit > 0 {
		rate = min(rate, bench.RateHeadroom*float64(rateLimit))
	}
	return rate
}

// PointCount is the measured sends of a point: about seconds of sends at
// ModelRate, never below MinPointCount, never above asked (COUNT). A
// point at concurrency 32 gets 32 times the sends of one at concurrency
// 1, so both last about as long (the bench's cap, netmodel.PointCounts,
// assumes one send at a time).
func PointCount(asked, seconds int, rate float64) int {
	n := int(math.Round(rate * float64(seconds)))
	return min(asked, max(n, MinPointCount))
}

// Drivers of a point: the matrix's two (results.DriverDirect,
// results.DriverWorker).

// Spec is one point of the plan.
type Spec struct {
	Driver      string // results.DriverDirect or results.DriverWorker
	Workers     int    // active workers (1 for the direct driver)
	Concurrency int    // sends in flight per worker
	DelayMS     int    // vendor think time, ms
	// Series is "grid", "case" or "soak".
	Series string
	Count  int // measured sends (PointCount)
	// Repeat is the point's turn among Config.Repeats (1 = the first;
	// 0 counts as 1).
	Repeat int
}

// Series of a point.
const (
	SeriesGrid = "grid"
	SeriesCase = "case"
	SeriesSoak = "soak"
)

// Name is the point's name: "<series>-<driver>-w<workers>-c<concurrency>-<delay>ms",
// and "-r<repeat>" from the second repeat on.
func (s Spec) Name() string {
	n := fmt.Sprintf("%s-%s-w%d-c%d-%dms", s.Series, s.Driver, s.Workers, s.Concurrency, s.DelayMS)
	if s.Repeat > 1 {
		n += fmt.Sprintf("-r%d", s.Repeat)
	}
	return n
}

// Plan lists the points in run order: the grid (each concurrency: the
// bare client, then each worker count), the case series (each
// concurrency: the bare client and one worker) and the memory run (one
// worker at the largest concurrency, SoakS long). With Repeats above 1
// each concurrency's points run that many times in turns (direct,
// workers, direct, workers...); the memory run runs once. Direct points come only
// with DriverDirect in Drivers, worker points with DriverWorker.
func (c Config) Plan() []Spec {
	rtt := c.RTTMS()
	has := func(d string) bool { return slices.Contains(c.Drivers, d) }
	var out []Spec
	add := func(s Spec, seconds int) {
		s.Count = PointCount(c.Count, seconds, ModelRate(s.Concurrency, s.Workers, s.DelayMS, rtt, c.RateLimit))
		out = append(out, s)
	}
	series := func(name string, delay int, workers []int) {
		for _, conc := range c.Concurrencies {
			for r := 1; r <= max(c.Repeats, 1); r++ {
				if has(results.DriverDirect) {
					add(Spec{Driver: results.DriverDirect, Workers: 1, Concurrency: conc, DelayMS: delay, Series: name, Repeat: r}, c.PointS)
				}
				if has(results.DriverWorker) {
					for _, w := range workers {
						add(Spec{Driver: results.DriverWorker, Workers: w, Concurrency: conc, DelayMS: delay, Series: name, Repeat: r}, c.PointS)
					}
				}
			}
		}
	}
	series(SeriesGrid, c.ServerDelayMS, c.WorkerCounts)
	if c.CaseDelayMS != CaseOff {
		series(SeriesCase, c.CaseDelayMS, []int{1})
	}
	if c.SoakS > 0 && has(results.DriverWorker) && len(c.Concurrencies) > 0 {
		add(Spec{Driver: results.DriverWorker, Workers: 1, Concurrency: slices.Max(c.Concurrencies), DelayMS: c.ServerDelayMS, Series: SeriesSoak, Repeat: 1}, c.SoakS)
	}
	return out
}

// Estimate is the plan's expected wall time: each point's count over its
// model rate, plus warm-up and about 20 s per point to publish, start and
// stop the workers, and about a minute to start the stack.
func (c Config) Estimate() time.Duration {
	d := time.Minute
	for _, s := range c.Plan() {
		rate := ModelRate(s.Concurrency, s.Workers, s.DelayMS, c.RTTMS(), c.RateLimit)
		d += time.Duration(float64(s.Count+c.Warmup)/rate*float64(time.Second)) + 20*time.Second
	}
	return d
}
