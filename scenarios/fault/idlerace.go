package fault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/vendormock"
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
}

// IdleRaceResult is results/idle-race.json.
type IdleRaceResult struct {
	Scenario           string        `json:"scenario"`
	Date               string        `json:"date"`
	KeepaliveTimeoutMS float64       `json:"keepalive_timeout_ms"`
	Burst              int           `json:"burst"`
	PauseMinMS         float64       `json:"pause_min_ms"`
	PauseMaxMS         float64       `json:"pause_max_ms"`
	MarginMS           float64       `json:"margin_ms"`
	Seed               uint64        `json:"seed"`
	SendsPerLane       int           `json:"sends_per_lane"`
	ServerDelayMS      int           `json:"server_delay_ms"`
	Rows               []IdleRaceRow `json:"rows"`
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
		KeepaliveTimeoutMS: ms(t), Burst: spec.Burst,
		PauseMinMS: ms(spec.PauseMin.D()), PauseMaxMS: ms(spec.PauseMax.D()),
		MarginMS: ms(spec.Margin.D()), Seed: spec.Seed, SendsPerLane: spec.Count, ServerDelayMS: *spec.ServerDelayMS,
		Expect: spec.Expect,
		Note: "nginx keepalive_timeout has one parameter (no Keep-Alive hint to the client). Toxiproxy delays data, not the TCP handshake: " +
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
		_ = r.reloadNginx(cctx, NginxSpec{})
	}()
	if err := r.reloadNginx(ctx, NginxSpec{KeepaliveTimeout: spec.KeepaliveTimeout}); err != nil {
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
	type laneOut struct {
		lane *lane
		err  error
	}
	var (
		lanes []*lane
		wg    sync.WaitGroup
	)
	for i, rtt := range spec.RTTsMS {
		for j, setting := range spec.Settings {
			l := &lane{r: r, spec: spec, rtt: rtt, setting: setting, port: ports[rtt],
				idle:   IdleTimeout(setting, t, rtt, spec.Margin.D()),
				prefix: fmt.Sprintf("r-%s-%d-%s-", r.runID, rtt, strings.ReplaceAll(setting, "_", "")),
				rng:    rand.New(rand.NewPCG(spec.Seed, uint64(i*100+j)))}
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
	perSetting := map[string]int{}
	for _, l := range lanes {
		row, err := l.judge(ctx, all)
		if err != nil {
			return res, err
		}
		res.Rows = append(res.Rows, row)
		perSetting[row.Setting] += row.Failures
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
	res.Pass = len(res.Failures) == 0
	return res, nil
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
	prefix  string
	rng     *rand.Rand
	topo    queues.Topology
	dir     string
	pub     *publisher
	tail    *tail
}

func (l *lane) name() string {
	return fmt.Sprintf("race-%dms-%s", l.rtt, strings.ReplaceAll(l.setting, "_", "-"))
}

// run starts the lane's worker, sends its bursts and stops the worker.
func (l *lane) run(ctx context.Context) (err error) {
	r, st := l.r, l.r.Stack
	l.topo = queues.DefaultTopology("race." + strconv.Itoa(l.rtt) + "." + l.setting)
	l.dir = filepath.Join(r.opts.WorkDir, "idle-race", l.name())
	_ = os.RemoveAll(l.dir)
	if err := os.MkdirAll(l.dir, 0o777); err != nil {
		return err
	}
	_ = os.Chmod(l.dir, 0o777)
	l.tail = newTail(filepath.Join(l.dir, recordsFile))
	// A scenario of the same name may have run before on this broker.
	if l.pub, err = freshPublisher(r.conn, l.topo); err != nil {
		return err
	}
	defer l.pub.ch.Close()
	args := []string{
		"-amqp-url", st.AMQPURLNetwork,
		"-queue", l.topo.Names.Main,
		"-retry-delay", l.topo.RetryDelay.String(),
		"-max-attempts", strconv.Itoa(l.topo.MaxAttempts),
		"-vendor-url", st.VendorURL,
		"-vendor-addr", st.VendorHost + ":" + strconv.Itoa(l.port),
		"-ca-file", vendormock.WorkerCAPath,
		"-client-id", st.ClientID,
		"-strategy", vendorapi.PooledName,
		"-idle-conn-timeout", l.idle.String(),
		"-records", vendormock.WorkerOutDir + "/" + recordsFile,
		"-ledger", vendormock.WorkerOutDir + "/" + ledgerFile,
		"-summary-every", "100000",
	}
	wk, err := st.StartWorker(ctx, vendormock.WorkerOptions{
		Name: l.name(), Args: args, CPUs: workerCPUs, OutDir: l.dir,
		Env: map[string]string{"GOMAXPROCS": "1", "VENDOR_CLIENT_SECRET": st.ClientSecret},
	})
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
	if err := l.pub.waitConsumer(ctx, wk, 60*time.Second); err != nil {
		return fmt.Errorf("lane %s: %w", l.name(), err)
	}
	r.logf("lane %s: idle timeout %s, worker up", l.name(), l.idle)
	pmin, pmax := l.spec.PauseMin.D(), l.spec.PauseMax.D()
	for done := 0; done < l.spec.Count; {
		n := min(l.spec.Burst, l.spec.Count-done)
		for range n {
			if err := l.pub.publishValid(ctx, l.prefix, message.Info, "LAB_RACE_01"); err != nil {
				return fmt.Errorf("lane %s: %w", l.name(), err)
			}
		}
		done += n
		if err := l.waitRecords(ctx, done, 60*time.Second+time.Duration(n)*time.Duration(*l.spec.ServerDelayMS+6*l.rtt+300)*time.Millisecond); err != nil {
			logs, _ := wk.Logs(context.WithoutCancel(ctx))
			return fmt.Errorf("lane %s: %w\nworker logs:\n%s", l.name(), err, lastLines(logs, 20))
		}
		if done%(l.spec.Burst*20) == 0 {
			r.logf("lane %s: %d of %d sent, %s", l.name(), done, l.spec.Count, formatCounts(l.tail.counts()))
		}
		if done < l.spec.Count {
			pause := pmin + time.Duration(l.rng.Int64N(int64(pmax-pmin)+1))
			last := l.tail.recs[len(l.tail.recs)-1].End
			if err := sleep(ctx, time.Until(last.Add(pause))); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *lane) waitRecords(ctx context.Context, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if err := l.tail.poll(); err != nil {
			return err
		}
		if len(l.tail.recs) >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %d of %d records after %s", ErrWaitTimeout, len(l.tail.recs), n, timeout)
		}
		if err := sleep(ctx, 5*time.Millisecond); err != nil {
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
			journal = append(journal, reconcile.JournalEntry{Method: e.Method, Path: e.Path, RefKey: e.RefKey, Status: e.Status, LoggedAt: e.LoggedAt})
		}
	}
	in, err := reconcile.Gather(ctx, reconcile.GatherOptions{
		Published: l.pub.published, RecordsPath: l.tail.path, LedgerPath: filepath.Join(l.dir, ledgerFile),
		AMQPURL: st.AMQPURL, Main: l.topo.Names.Main, SendPath: st.Profile.API.SendPath,
	})
	if err != nil {
		return IdleRaceRow{}, fmt.Errorf("lane %s: reconcile: %w", l.name(), err)
	}
	in.Journal = journal
	rep := reconcile.Reconcile(in)
	_ = os.WriteFile(filepath.Join(l.dir, "reconcile.json"), mustJSON(rep), 0o644)
	return raceRow(l.rtt, l.setting, l.idle, len(l.pub.published), in.Records, len(journal), rep), nil
}

// raceRow counts one lane's records.
func raceRow(rtt int, setting string, idle time.Duration, sends int, recs []records.Record, reached int, rep reconcile.Report) IdleRaceRow {
	row := IdleRaceRow{RTTMS: rtt, Setting: setting, IdleConnTimeoutMS: ms(idle), Sends: sends, Outcomes: map[outcome.Outcome]int{},
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

// WriteIdleRace writes OUT/<scenario>.json, OUT/charts/<scenario>.svg and
// OUT/<scenario>.md (idle-race.json for the catalog's idle-race), adds a
// section named after the scenario to OUT/summary.md, and prints the
// table to w.
func WriteIdleRace(out string, res IdleRaceResult, w io.Writer) error {
	name := cmpOr(res.Scenario, "idle-race")
	if err := os.MkdirAll(filepath.Join(out, "charts"), 0o755); err != nil {
		return fmt.Errorf("create results dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out, name+".json"), append(mustJSON(res), '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s.json: %w", name, err)
	}
	f, err := os.Create(filepath.Join(out, "charts", name+".svg"))
	if err != nil {
		return fmt.Errorf("create chart: %w", err)
	}
	err = WriteIdleRaceChart(f, res)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# Idle race (stale keep-alive): %s\n\nnginx keepalive_timeout %.0f ms, bursts of %d, pauses uniform in [%.0f, %.0f] ms (seed %d), %d sends per lane, server delay %d ms. Per 1,000 sends.\n\n",
		name, res.KeepaliveTimeoutMS, res.Burst, res.PauseMinMS, res.PauseMaxMS, res.Seed, res.SendsPerLane, res.ServerDelayMS)
	WriteIdleRaceTable(&md, res, true)
	fmt.Fprintf(&md, "\n![failures per 1,000](charts/%s.svg)\n\n%s\n", name, res.Note)
	if err := os.WriteFile(filepath.Join(out, name+".md"), []byte(md.String()), 0o644); err != nil {
		return fmt.Errorf("write %s.md: %w", name, err)
	}
	sec := fmt.Sprintf("## Idle race: %s\n\n%s. Table: [%[3]s.md](%[3]s.md), data: [%[3]s.json](%[3]s.json), chart: [charts/%[3]s.svg](charts/%[3]s.svg).\n",
		name, idleSummary(res), name)
	if err := appendSection(filepath.Join(out, "summary.md"), name, sec); err != nil {
		return err
	}
	fmt.Fprintln(w)
	WriteIdleRaceTable(w, res, false)
	if len(res.Failures) > 0 {
		fmt.Fprintf(w, "idle race FAILED: %s\n", strings.Join(res.Failures, "; "))
	} else {
		fmt.Fprintln(w, "idle race passed")
	}
	return nil
}

func idleSummary(res IdleRaceResult) string {
	var parts []string
	for _, r := range res.Rows {
		parts = append(parts, fmt.Sprintf("%s at %d ms: %.1f", r.Setting, r.RTTMS, r.FailuresPer1000))
	}
	return "Failures per 1,000 sends: " + strings.Join(parts, "; ")
}

// WriteIdleRaceTable writes one row per lane (Markdown when md).
func WriteIdleRaceTable(w io.Writer, res IdleRaceResult, md bool) {
	head := []string{"RTT ms", "setting", "idle timeout", "sends", "UNKNOWN", "NOT_SENT", "failures/1000", "absorbed/1000", "new conns", "reached vendor", "dup", "lost"}
	var rows [][]string
	for _, r := range res.Rows {
		rows = append(rows, []string{strconv.Itoa(r.RTTMS), r.Setting, (time.Duration(r.IdleConnTimeoutMS) * time.Millisecond).String(),
			strconv.Itoa(r.Sends), strconv.Itoa(r.Unknown), strconv.Itoa(r.NotSent), fmt.Sprintf("%.1f", r.FailuresPer1000),
			fmt.Sprintf("%.1f", r.AbsorbedPer1000), strconv.Itoa(r.NewConnections), strconv.Itoa(r.ReachedVendor),
			strconv.Itoa(r.Duplicates), strconv.Itoa(r.Lost)})
	}
	if md {
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush()
}

// WriteIdleRaceChart writes an SVG of failures (UNKNOWN + NOT_SENT) per 1,000 sends against the
// client idle timeout (log scale, s), one line per RTT, with nginx's
// keepalive_timeout marked.
func WriteIdleRaceChart(w io.Writer, res IdleRaceResult) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Stale keep-alive failures vs client idle timeout (nginx T = %g s)", res.KeepaliveTimeoutMS/1000)
	p.X.Label.Text = "client idle timeout, s (log scale)"
	p.Y.Label.Text = "failures per 1,000 sends"
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	for _, v := range []float64{0.5, 1, 1.5, 2, 3, 5, 10, 20, 30, 60, 90} {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Legend.Top = true
	// Inside the plot, clear of the right edge: the text is right-aligned
	// to the thumbnails, which would otherwise sit on the canvas border.
	p.Legend.XOffs = -vg.Points(12)
	p.Legend.YOffs = -vg.Points(4)
	p.Legend.Padding = vg.Points(6) // between a label and its line sample
	p.Title.Padding = vg.Points(8)
	byRTT := map[int]plotter.XYs{}
	var rtts []int
	ymax := 1.0
	for _, r := range res.Rows {
		if _, ok := byRTT[r.RTTMS]; !ok {
			rtts = append(rtts, r.RTTMS)
		}
		byRTT[r.RTTMS] = append(byRTT[r.RTTMS], plotter.XY{X: r.IdleConnTimeoutMS / 1000, Y: r.FailuresPer1000})
		ymax = math.Max(ymax, r.FailuresPer1000)
	}
	colors := []color.Color{color.RGBA{R: 0x2c, G: 0x6f, B: 0xbb, A: 0xff}, color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff},
		color.RGBA{R: 0x27, G: 0x8e, B: 0x4a, A: 0xff}, color.RGBA{R: 0x8e, G: 0x44, B: 0xad, A: 0xff}}
	for i, rtt := range rtts {
		xys := byRTT[rtt]
		sortXY(xys)
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("plot idle race: %w", err)
		}
		c := colors[i%len(colors)]
		line.Color, points.Color = c, c
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(fmt.Sprintf("RTT %d ms", rtt), line, points)
		labels := make([]string, len(xys))
		for k, xy := range xys {
			labels[k] = fmt.Sprintf("%.1f", xy.Y)
		}
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return fmt.Errorf("plot idle race: %w", err)
		}
		l.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(4)}
		for k := range l.TextStyle {
			l.TextStyle[k].Font.Size = vg.Points(7)
			l.TextStyle[k].Color = c
		}
		p.Add(l)
	}
	t := res.KeepaliveTimeoutMS / 1000
	ka, err := plotter.NewLine(plotter.XYs{{X: t, Y: 0}, {X: t, Y: ymax * 1.3}})
	if err == nil {
		ka.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		ka.Color = color.Gray{Y: 0x80}
		p.Add(ka)
		p.Legend.Add("nginx keepalive_timeout", ka)
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.5
	xmin, xmax := t, t
	for _, r := range res.Rows {
		xmin, xmax = math.Min(xmin, r.IdleConnTimeoutMS/1000), math.Max(xmax, r.IdleConnTimeoutMS/1000)
	}
	p.X.Min, p.X.Max = xmin*0.8, xmax*1.6 // room for the value labels
	wt, err := p.WriterTo(18*vg.Centimeter, 11*vg.Centimeter, "svg")
	if err != nil {
		return fmt.Errorf("render idle race chart: %w", err)
	}
	_, err = wt.WriteTo(w)
	return err
}

func sortXY(xys plotter.XYs) {
	for i := 1; i < len(xys); i++ {
		for j := i; j > 0 && xys[j].X < xys[j-1].X; j-- {
			xys[j], xys[j-1] = xys[j-1], xys[j]
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return []byte(`{"error": "` + err.Error() + `"}`)
	}
	return b
}
