package scale

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Files of a scale run's report in OUT.
const (
	SummaryFile = "summary.md"
	ChartsDir   = "charts"
	SendsChart  = "scale-sends-per-s.svg"
	CPUChart    = "scale-container-cpu.svg"
)

// Report re-renders dir's summary.md and charts from its point-*.json,
// offline (`./run.sh report results/scale`).
func Report(dir string, w io.Writer) error {
	ps, err := ReadPoints(dir)
	if err != nil {
		return err
	}
	ps, left := NewestRun(ps)
	if len(left) > 0 {
		fmt.Fprintf(w, "left out %d point file(s) of other runs in %s (not the newest run's, %s): %s\n\n",
			len(left), dir, ps[0].Provenance.RunID, strings.Join(left, ", "))
	}
	return WriteReport(dir, ps, w)
}

// NewestRun keeps the points of the newest run among ps (the latest
// Provenance.Date; points without provenance count as older than any with
// it), as the bench's report does, and returns the file names of the
// others (PointFile): a scale run into a folder an earlier one used never
// mixes the two in one summary.
func NewestRun(ps []Point) (kept []Point, left []string) {
	newest := ""
	var newestDate string
	for _, p := range ps {
		if p.Provenance != nil && (newest == "" || p.Provenance.Date > newestDate) {
			newest, newestDate = p.Provenance.RunID, p.Provenance.Date
		}
	}
	for _, p := range ps {
		if newest == "" || p.Provenance != nil && p.Provenance.RunID == newest {
			kept = append(kept, p)
		} else {
			left = append(left, PointFile(p.Name))
		}
	}
	return kept, left
}

// sortPoints orders points as the plan runs them: series (grid, case,
// soak), concurrency, repeat, the direct driver first, then workers.
func sortPoints(ps []Point) {
	rank := map[string]int{SeriesGrid: 0, SeriesCase: 1, SeriesSoak: 2}
	slices.SortFunc(ps, func(a, b Point) int {
		return cmp.Or(cmp.Compare(rank[a.Series], rank[b.Series]), cmp.Compare(a.Concurrency, b.Concurrency),
			cmp.Compare(turn(a), turn(b)), cmp.Compare(driverRank(a.Driver), driverRank(b.Driver)), cmp.Compare(a.Workers, b.Workers))
	})
}

func driverRank(d string) int {
	if d == results.DriverDirect {
		return 0
	}
	return 1
}

// WriteReport writes dir/summary.md (the table, the scaling and cost
// ratios, memory, where each point's CPU went) and dir/charts/, and
// prints the summary to w.
func WriteReport(dir string, ps []Point, w io.Writer) error {
	ps = slices.Clone(ps)
	sortPoints(ps)
	if err := os.MkdirAll(filepath.Join(dir, ChartsDir), 0o755); err != nil {
		return fmt.Errorf("create charts dir: %w", err)
	}
	if err := sendsChart(filepath.Join(dir, ChartsDir, SendsChart), ps); err != nil {
		return err
	}
	if err := cpuChart(filepath.Join(dir, ChartsDir, CPUChart), ps); err != nil {
		return err
	}
	md := Summary(ps)
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(md), 0o644); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	_, err := io.WriteString(w, md)
	return err
}

// roles are the columns of the CPU table, in order.
var roles = []string{RoleWorker, "rabbitmq", "postgres", "nginx", "toxiproxy", "wiremock"}

// roleCores sums a point's containers' cores by role.
func roleCores(p Point) map[string]float64 {
	m := map[string]float64{}
	for _, c := range p.Containers {
		m[c.Role] += c.Cores
	}
	return m
}

// bottleneckOf names p's bottleneck from its stored CPU figures with
// today's Bottleneck, so a re-rendered summary (lab report) applies its
// rules to older point files too; a point without CPU figures keeps the
// label it was written with.
func bottleneckOf(p Point) string {
	if len(p.Containers) == 0 || p.Environment.CPUs == 0 {
		return p.Bottleneck
	}
	return Bottleneck(p.Containers, p.Environment.CPUs, p.HostBusyCores)
}

// workersLabel says how the run's worker points kept their ledger: the
// shared PostgreSQL one with competing consumers (scale's default; points
// written before Point.Ledger was set for bbolt say nothing), or the
// case's one worker on its own bbolt file.
func workersLabel(ps []Point) string {
	label, state := "competing consumers on the shared PostgreSQL ledger", ""
	for _, p := range ps {
		if p.Driver != results.DriverWorker {
			continue
		}
		if p.Ledger == vendormock.LedgerBbolt {
			label = "one worker on its own bbolt ledger (the case's, LEDGER=bbolt)"
		}
		if p.WorkerState != "" {
			state = p.WorkerState
		}
	}
	if state != "" {
		label += ", its files on " + state + " (WORKER_STATE)"
	}
	return label
}

// Summary is the markdown of a scale run.
func Summary(ps []Point) string {
	var b strings.Builder
	b.WriteString("# Scale: sends/s against concurrency and active workers\n\n")
	if len(ps) > 0 {
		b.WriteString(ps[0].Provenance.Header())
		p := ps[0]
		fmt.Fprintf(&b, "\nRTT %d ms, HTTPS over HTTP/%s, pooled client; worker points: %s, 1 CPU per worker container; direct: `notifier-worker direct` (the client alone, 1 CPU). Host: %d cores. CPU columns: cores used by each container (cgroup CPU time over the time the workers ran; 1.00 = one core busy), workers summed; host: the whole machine's busy cores (/proc/stat), other processes included.%s\n\n",
			p.RTTMS, p.HTTPVersion, workersLabel(ps), p.Environment.CPUs, poolLabel(p))
	}
	b.WriteString("| series | driver | workers | concurrency | think ms | sends | sends/s | p50 ms | p99 ms | CPU ms/send | in send calls | " +
		strings.Join(roles, " | ") + " | host | bottleneck | check |\n|" + strings.Repeat("---|", 14+len(roles)) + "\n")
	for _, p := range ps {
		rc := roleCores(p)
		var cpu []string
		for _, r := range roles {
			cpu = append(cpu, fmt.Sprintf("%.2f", rc[r]))
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %.1f | %.1f | %.1f | %.3f | %.3f | %s | %.2f | %s | %s |\n",
			seriesLabel(p), p.Driver, p.Workers, p.Concurrency, p.ServerDelayMS, p.Count, p.SendsPerS, p.LatencyMS.P50, p.LatencyMS.P99,
			p.CPUMSPerSend, p.ClientCPUMSPerSend, strings.Join(cpu, " | "), p.HostBusyCores, bottleneckOf(p), p.Check())
	}
	b.WriteString(repeatsSection(ps))
	b.WriteString(scalingSection(ps))
	b.WriteString(cpuPerSendSection(ps))
	b.WriteString(splitSection(ps))
	b.WriteString(memorySection(ps))
	fmt.Fprintf(&b, "\n![sends/s against concurrency](%s/%s)\n\n![CPU by container](%s/%s)\n", ChartsDir, SendsChart, ChartsDir, CPUChart)
	return b.String()
}

// poolLabel names nginx's upstream keep-alive pool of p's run, "" when
// the point does not say (written before UPSTREAM_POOL).
func poolLabel(p Point) string {
	if p.UpstreamKeepalive <= 0 {
		return ""
	}
	return fmt.Sprintf(" nginx keeps up to %d idle connections to WireMock (UPSTREAM_POOL).", p.UpstreamKeepalive)
}

// scalingSection gives, per series and concurrency, each worker count's
// sends/s over one worker's, and the worker's CPU per send over the bare
// client's.
func scalingSection(ps []Point) string {
	var b strings.Builder
	for _, p := range ps {
		if p.Driver != results.DriverWorker || p.Workers == 1 {
			continue
		}
		if one, ok := findTurn(ps, p, results.DriverWorker, 1); ok && one.SendsPerS > 0 {
			fmt.Fprintf(&b, "- %s, concurrency %d: %d workers send %.2fx one worker's sends/s (%.1f vs %.1f)\n",
				seriesLabel(p), p.Concurrency, p.Workers, p.SendsPerS/one.SendsPerS, p.SendsPerS, one.SendsPerS)
		}
	}
	for _, p := range ps {
		if p.Driver != results.DriverWorker || p.Workers != 1 {
			continue
		}
		if d, ok := findTurn(ps, p, results.DriverDirect, 1); ok && d.CPUMSPerSend > 0 {
			fmt.Fprintf(&b, "- %s, concurrency %d: one worker spends %.2fx the bare client's CPU per send (%.3f vs %.3f ms) and sends %.2fx its rate\n",
				seriesLabel(p), p.Concurrency, p.CPUMSPerSend/d.CPUMSPerSend, p.CPUMSPerSend, d.CPUMSPerSend, p.SendsPerS/max(d.SendsPerS, 1e-9))
		}
	}
	if b.Len() == 0 {
		return "" // one worker count and no bare client: nothing to compare
	}
	return "\n## Scaling and the worker's cost\n\n" + b.String()
}

// find returns the point of series, driver, workers and concurrency.
func find(ps []Point, series, driver string, workers, conc int) (Point, bool) {
	i := slices.IndexFunc(ps, func(p Point) bool {
		return p.Series == series && p.Driver == driver && p.Workers == workers && p.Concurrency == conc
	})
	if i < 0 {
		return Point{}, false
	}
	return ps[i], true
}

// memorySection lists the workers' RSS per worker point and judges the
// memory run (issue 17: flat and under RSSLimitMB over RSSMinDuration).
func memorySection(ps []Point) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Worker memory (RSS, the largest replica)\n\n| point | sampled s | max MB | early MB | late MB | trend MB/min |\n|---|---|---|---|---|---|\n")
	for _, p := range ps {
		if p.RSS == nil || p.Driver != results.DriverWorker {
			continue
		}
		r := p.RSS
		fmt.Fprintf(&b, "| %s | %.0f | %.1f | %.1f | %.1f | %+.2f |\n", p.Name, r.DurationS, r.MaxMB, r.EarlyMB, r.LateMB, r.TrendMBPerMin)
	}
	for _, p := range ps {
		if p.Series != SeriesSoak {
			continue
		}
		if p.RSS == nil {
			fmt.Fprintf(&b, "\nMemory run %s: CHECK: no RSS sample (%s)\n", p.Name, strings.Join(p.SampleErrors, "; "))
			continue
		}
		fmt.Fprintf(&b, "\nMemory run %s (concurrency %d, %.0f s sampled): max %.1f MB, %.1f MB early, %.1f MB late, trend %+.2f MB/min: %s (flat within %.0f%% and under %d MB over at least %s)\n",
			p.Name, p.Concurrency, p.RSS.DurationS, p.RSS.MaxMB, p.RSS.EarlyMB, p.RSS.LateMB, p.RSS.TrendMBPerMin, p.RSS.Check(),
			100*RSSFlatGrowth, RSSLimitMB, RSSMinDuration)
	}
	return b.String()
}

// Chart size.
const (
	chartWidth  = 18 * vg.Centimeter
	chartHeight = 11 * vg.Centimeter
)

// sendsChart draws sends/s against concurrency (log 2 axis): one line
// per worker count and the bare client, per series (the case series
// dashed).
func sendsChart(path string, ps []Point) error {
	p := plot.New()
	p.Title.Text = "Sends/s against concurrency, per active workers"
	p.X.Label.Text = "concurrency per worker (log scale)"
	p.Y.Label.Text = "sends/s"
	p.X.Scale = plot.LogScale{}
	p.Legend.Top = true
	p.Legend.Left = true
	var ticks plot.ConstantTicks
	seen := map[int]bool{}
	type key struct {
		series, driver string
		workers        int
	}
	lines := map[key]plotter.XYs{}
	var order []key
	for _, pt := range ps {
		if pt.Series == SeriesSoak || pt.SendsPerS <= 0 {
			continue
		}
		k := key{pt.Series, pt.Driver, pt.Workers}
		if _, ok := lines[k]; !ok {
			order = append(order, k)
		}
		lines[k] = append(lines[k], plotter.XY{X: float64(pt.Concurrency), Y: pt.SendsPerS})
		if !seen[pt.Concurrency] {
			seen[pt.Concurrency] = true
			ticks = append(ticks, plot.Tick{Value: float64(pt.Concurrency), Label: fmt.Sprint(pt.Concurrency)})
		}
	}
	if len(order) == 0 {
		return nil
	}
	slices.SortFunc(ticks, func(a, b plot.Tick) int { return cmp.Compare(a.Value, b.Value) })
	p.X.Tick.Marker = ticks
	if len(ticks) == 1 {
		// One concurrency: gonum would pad the empty range to [c-1, c+1],
		// which a log axis cannot draw at c = 1 (it panics).
		p.X.Min, p.X.Max = ticks[0].Value/2, ticks[0].Value*2
	}
	for i, k := range order {
		l, pts, err := plotter.NewLinePoints(lines[k])
		if err != nil {
			return fmt.Errorf("sends chart: %w", err)
		}
		l.Color = plotutil.Color(i)
		pts.Color = l.Color
		pts.Shape = plotutil.Shape(i)
		if k.series == SeriesCase {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		name := fmt.Sprintf("%s: %d worker(s)", k.series, k.workers)
		if k.driver == results.DriverDirect {
			name = k.series + ": bare client"
		}
		if d := pointDelay(ps, k.series); d >= 0 {
			name += fmt.Sprintf(", think %d ms", d)
		}
		p.Add(l, pts)
		p.Legend.Add(name, l, pts)
	}
	return report.SaveSVG(path, p, chartWidth, chartHeight)
}

func pointDelay(ps []Point, series string) int {
	for _, p := range ps {
		if p.Series == series {
			return p.ServerDelayMS
		}
	}
	return -1
}

// cpuChart draws each point's cores used, stacked by container role.
func cpuChart(path string, ps []Point) error {
	var names []string
	var used []Point
	for _, p := range ps {
		if len(p.Containers) == 0 {
			continue
		}
		used = append(used, p)
		names = append(names, shortName(p))
	}
	if len(used) == 0 {
		return nil
	}
	p := plot.New()
	p.Title.Text = "CPU by container while the workers ran (cores; host cores dashed)"
	p.Y.Label.Text = "cores"
	p.X.Tick.Label.Rotation = 0.9
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -1, -0.5
	p.Legend.Top = true
	var below *plotter.BarChart
	for i, role := range roles {
		vals := make(plotter.Values, len(used))
		for j, pt := range used {
			vals[j] = roleCores(pt)[role]
		}
		bars, err := plotter.NewBarChart(vals, vg.Points(8))
		if err != nil {
			return fmt.Errorf("cpu chart: %w", err)
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		p.Legend.Add(role, bars)
	}
	if cores := used[0].Environment.CPUs; cores > 0 {
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: float64(cores)}, {X: float64(len(used)) - 0.5, Y: float64(cores)}})
		if err == nil {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			l.Color = color.Gray{Y: 0x60}
			p.Add(l)
		}
	}
	p.NominalX(names...)
	return report.SaveSVG(path, p, chartWidth+vg.Length(len(used))*vg.Points(6), chartHeight+3*vg.Centimeter)
}

// shortName labels a point on the CPU chart: "g w2 c32", "c d c8".
func shortName(p Point) string {
	who := fmt.Sprintf("w%d", p.Workers)
	if p.Driver == results.DriverDirect {
		who = "direct"
	}
	return fmt.Sprintf("%s %s c%d", p.Series[:1], who, p.Concurrency)
}
