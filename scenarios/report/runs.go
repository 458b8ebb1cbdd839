package report

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Files RunsReport writes in the parent folder.
const (
	RunsSummary = "summary.md"
	RunsChart   = "runs-residual.svg" // under charts/
)

// Run is one bench run of a parent folder: its subfolder's name and its
// results (results.ReadRun).
type Run struct {
	Folder string
	Rs     []results.Result
}

// ReadRuns reads every subfolder of dir that holds a bench run, in name
// order. Errors: none found, or a subfolder's results.ReadRun error.
func ReadRuns(dir string) ([]Run, error) {
	subs, err := filepath.Glob(filepath.Join(dir, "*", "bench-*.json"))
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var folders []string
	for _, s := range subs {
		if f := filepath.Base(filepath.Dir(s)); !slices.Contains(folders, f) {
			folders = append(folders, f)
		}
	}
	slices.Sort(folders)
	var out []Run
	for _, f := range folders {
		rs, _, err := results.ReadRun(filepath.Join(dir, f))
		if err != nil {
			return nil, fmt.Errorf("read run %s: %w", f, err)
		}
		out = append(out, Run{Folder: f, Rs: rs})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read runs: no */bench-*.json in %s", dir)
	}
	return out, nil
}

// runTLS is the highest TLS version of a run's new-connection clients
// ("1.2" when none names one): the runs with the same one are repeats.
func runTLS(rs []results.Result) string {
	for _, r := range rs {
		if r.Mode != vendorapi.PooledName && r.TLSMax != "" {
			return r.TLSMax
		}
	}
	return netmodel.DefaultPerRequestTLS
}

// RunsRow is one (TLS, RTT, client) of the repeated runs: the model row of
// each run that has it, in run order, and the median over them.
type RunsRow struct {
	TLS, Mode          string
	RTTMS              int
	Folders            []string
	Rows               []ModelRow
	P50MS, PooledP50MS []float64
	MedianMeasured     float64 // median of the runs' p50 - pooled p50, ms
	MedianSum          float64 // median of the runs' model + parts, ms
	MedianResidual     float64 // median of the runs' residuals, ms
	Within             bool    // |MedianResidual| <= netmodel.ResidualLimitMS
}

// RunsRows groups the runs' ModelRows by per-request TLS, RTT and client,
// in that order. A single run gives rows of one run each.
func RunsRows(runs []Run) []RunsRow {
	var out []RunsRow
	idx := map[string]int{}
	for _, run := range runs {
		tlsV := runTLS(run.Rs)
		for _, mr := range ModelRows(run.Rs) {
			k := fmt.Sprintf("%s|%d|%s", tlsV, mr.RTTMS, mr.Mode)
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, RunsRow{TLS: tlsV, Mode: mr.Mode, RTTMS: mr.RTTMS})
			}
			nr, _ := find(run.Rs, mr.RTTMS, mr.Mode)
			po, _ := find(run.Rs, mr.RTTMS, vendorapi.PooledName)
			out[i].Folders = append(out[i].Folders, run.Folder)
			out[i].Rows = append(out[i].Rows, mr)
			out[i].P50MS = append(out[i].P50MS, nr.LatencyMS.P50)
			out[i].PooledP50MS = append(out[i].PooledP50MS, po.LatencyMS.P50)
		}
	}
	for i := range out {
		r := &out[i]
		r.MedianMeasured = medianOf(r.Rows, func(m ModelRow) float64 { return m.MeasuredMS })
		r.MedianSum = medianOf(r.Rows, func(m ModelRow) float64 { return m.Parts.SumMS() })
		r.MedianResidual = medianOf(r.Rows, func(m ModelRow) float64 { return m.ResidualMS })
		r.Within = math.Abs(r.MedianResidual) <= netmodel.ResidualLimitMS
	}
	slices.SortStableFunc(out, func(a, b RunsRow) int {
		return cmp.Or(cmp.Compare(a.TLS, b.TLS), cmp.Compare(a.RTTMS, b.RTTMS), cmp.Compare(results.ModeRank(a.Mode), results.ModeRank(b.Mode)))
	})
	return out
}

// medianOf is the median of f over rows (the mean of the middle two for
// an even count), NaN when rows is empty or a value is NaN.
func medianOf(rows []ModelRow, f func(ModelRow) float64) float64 {
	vs := make([]float64, 0, len(rows))
	for _, r := range rows {
		vs = append(vs, f(r))
	}
	return medianFloat(vs)
}

// medianFloat is the median of vs, NaN when empty or any is NaN.
func medianFloat(vs []float64) float64 {
	if len(vs) == 0 || slices.ContainsFunc(vs, math.IsNaN) {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// joinF1 is vs with one decimal each, " / " between.
func joinF1(vs []float64, f func(float64) string) string {
	var s []string
	for _, v := range vs {
		s = append(s, nanDash(v, f))
	}
	return strings.Join(s, " / ")
}

// RunsMarkdown is the parent folder's summary.md: the runs and their
// settings, each figure of the round-trip model per run beside the median
// of the runs, and what stays unexplained beyond 1 ms.
func RunsMarkdown(dir string, runs []Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: the runs side by side\n\n", filepath.Base(dir))
	b.WriteString("Each folder below is one `./run.sh` (its own `summary.md` has the full report and charts). The runs of one per-request TLS version repeat the same settings: " +
		"the project runs a cell twice before it trusts a difference of 1 ms, so every figure here is given per run (in the runs' order) and as the median of the runs (with two runs, their mean). " +
		"Re-render offline: `./run.sh report " + dir + "`.\n\n")
	var at []string
	for _, run := range runs {
		c := "unknown"
		if p := run.Rs[0].Provenance; p != nil {
			c = p.ShortCommit()
		}
		at = append(at, run.Folder+" at commit "+c)
	}
	b.WriteString("Runs: " + strings.Join(at, ", ") + ".\n\n")
	b.WriteString("| folder | run | commit | load at start | per-request TLS | nginx session cache and tickets | measured + warm-up sends per point | command |\n|---|---|---|---|---|---|---|---|\n")
	for _, run := range runs {
		r := run.Rs[0]
		id, commit, load, command := "-", "-", "-", "-"
		if p := r.Provenance; p != nil {
			id, commit, load, command = p.RunID, p.ShortCommit(), fmt.Sprintf("%.2f", p.Machine.LoadAvg1), "`"+p.CommandLine()+"`"
		}
		fmt.Fprintf(&b, "| [%s](%s/summary.md) | %s | %s | %s | %s | %s | %d + %d | %s |\n", run.Folder, run.Folder, id, commit, load, runTLS(run.Rs),
			cmp.Or(r.TLSResumption, "off"), r.Count, r.Warmup, command)
	}
	rows := RunsRows(runs)
	b.WriteString("\n## p50 per run\n\n| TLS | RTT | client | p50 ms (each run) | pooled p50 ms (each run) | TLS handshake p50 ms (each run) | resumed by nginx (each run) |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		var hs []float64
		var resumed []string
		for i, m := range r.Rows {
			hs = append(hs, m.HandshakeP50MS)
			for _, run := range runs {
				if run.Folder == r.Folders[i] {
					nr, _ := find(run.Rs, r.RTTMS, r.Mode)
					resumed = append(resumed, fmt.Sprintf("%d of %d", nr.TLSSessionsResumed, nr.TCPConnections))
				}
			}
		}
		fmt.Fprintf(&b, "| %s | %d ms | %s | %s | %s | %s | %s |\n", r.TLS, r.RTTMS, r.Mode, joinF1(r.P50MS, f1), joinF1(r.PooledP50MS, f1), joinF1(hs, f1), strings.Join(resumed, " / "))
	}
	fmt.Fprintf(&b, "\n## Round-trip model, each run and the median\n\nThe penalty of a new connection (p50 minus pooled p50), the model's round trips plus the parts measured in the same run (each run's summary.md: \"Round-trip model, measured parts\"), and the residual; a median residual beyond %.0f ms is named below the table.\n\n", netmodel.ResidualLimitMS)
	b.WriteString("| TLS | RTT | client | model ms | measured ms (each run) | model + parts ms (each run) | residual ms (each run) | measured, median | model + parts, median | residual, median |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		var meas, sums, res []float64
		for _, m := range r.Rows {
			meas, sums, res = append(meas, m.MeasuredMS), append(sums, m.Parts.SumMS()), append(res, m.ResidualMS)
		}
		med := nanDash(r.MedianResidual, signed)
		if !r.Within {
			med = "**" + med + "**"
		}
		fmt.Fprintf(&b, "| %s | %d ms | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.TLS, r.RTTMS, r.Mode, f1(r.Rows[0].Parts.ModelMS()),
			joinF1(meas, f1), joinF1(sums, f1), joinF1(res, signed), nanDash(r.MedianMeasured, f1), nanDash(r.MedianSum, f1), med)
	}
	b.WriteString("\nChart: [the residual of each run](charts/" + RunsChart + ").\n")
	var named []string
	for _, r := range rows {
		if r.Within {
			continue
		}
		var why []string
		for i, m := range r.Rows {
			if !m.Within {
				why = append(why, r.Folders[i]+": "+m.Unexplained)
			}
		}
		named = append(named, fmt.Sprintf("- TLS %s, %d ms, %s: median residual %s ms. %s.", r.TLS, r.RTTMS, r.Mode, nanDash(r.MedianResidual, signed), strings.Join(why, "; ")))
	}
	if len(named) > 0 {
		fmt.Fprintf(&b, "\nNot explained within %.0f ms (median of the runs):\n\n%s\n", netmodel.ResidualLimitMS, strings.Join(named, "\n"))
	} else {
		fmt.Fprintf(&b, "\nEvery median residual is within %.0f ms.\n", netmodel.ResidualLimitMS)
	}
	return b.String()
}

// RunsResidualPlot draws each row's residual, one bar per repeat (run 1 is
// the first folder of the row's TLS version, run 2 the second, ...), with
// dashed lines at ±1 ms. Errors: no rows.
func RunsResidualPlot(runs []Run) (*plot.Plot, error) {
	rows := RunsRows(runs)
	if len(rows) == 0 {
		return nil, fmt.Errorf("plot %s: no new-connection and pooled runs at one RTT", RunsChart)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Residual of the round-trip model per run (within %.0f ms: explained)", netmodel.ResidualLimitMS)
	p.Y.Label.Text = "ms (measured - model - parts)"
	p.Legend.Top = true
	names := make([]string, len(rows))
	repeats := 0
	for i, r := range rows {
		names[i] = fmt.Sprintf("TLS %s %d ms %s", r.TLS, r.RTTMS, chartModeName(r.Mode))
		repeats = max(repeats, len(r.Rows))
	}
	palette := []color.Color{color.RGBA{R: 0x2c, G: 0x6f, B: 0xbb, A: 0xff}, color.RGBA{R: 0xe6, G: 0x7e, B: 0x22, A: 0xff}, color.RGBA{R: 0x27, G: 0x8e, B: 0x4a, A: 0xff}}
	w := vg.Points(10)
	lo, hi := -1.5, 1.5
	for k := range repeats {
		vals := make(plotter.Values, len(rows))
		for i, r := range rows {
			if k < len(r.Rows) && !math.IsNaN(r.Rows[k].ResidualMS) {
				vals[i] = r.Rows[k].ResidualMS
				lo, hi = min(lo, vals[i]-0.5), max(hi, vals[i]+0.5)
			}
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", RunsChart, err)
		}
		bars.Color = palette[k%len(palette)]
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(k)-float64(repeats-1)/2) * w
		p.Add(bars)
		p.Legend.Add(fmt.Sprintf("run %d", k+1), bars)
	}
	for _, y := range []float64{-netmodel.ResidualLimitMS, netmodel.ResidualLimitMS} {
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: y}, {X: float64(len(rows)) - 0.5, Y: y}})
		if err == nil {
			l.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
			p.Add(l)
		}
	}
	p.Y.Min, p.Y.Max = lo, hi*1.3
	p.X.Min, p.X.Max = -0.5, float64(len(rows))-0.5
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = -1
	return p, nil
}

// RunsReport writes dir/summary.md and dir/charts/runs-residual.svg from
// the bench runs in dir's subfolders (the `lab report DIR` of a folder of
// repeated runs, such as results/tls-resumption). Errors: ReadRuns', the
// file system's, the chart's.
func RunsReport(dir string, w io.Writer) error {
	runs, err := ReadRuns(dir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, RunsSummary), []byte(RunsMarkdown(dir, runs)), 0o644); err != nil {
		return fmt.Errorf("write runs summary: %w", err)
	}
	p, err := RunsResidualPlot(runs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "charts"), 0o755); err != nil {
		return fmt.Errorf("write runs chart: %w", err)
	}
	if err := SaveSVG(filepath.Join(dir, "charts", RunsChart), p, 24*vg.Centimeter, 12*vg.Centimeter); err != nil {
		return fmt.Errorf("write runs chart: %w", err)
	}
	fmt.Fprintf(w, "runs report of %d run(s) in %s: %s, charts/%s\n", len(runs), dir, filepath.Join(dir, RunsSummary), RunsChart)
	return nil
}
