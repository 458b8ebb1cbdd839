package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Sweep chart files under OUT/charts.
const (
	SweepP50Chart   = "sweep-p50.svg"
	SweepP99Chart   = "sweep-p99.svg"
	SweepRatioChart = "sweep-ratio.svg"
)

// CDFChartFile returns "cdf-<mode>-<rtt>ms.svg", the latency distribution
// chart of one run.
func CDFChartFile(mode string, rttMS int) string {
	return fmt.Sprintf("cdf-%s-%dms.svg", mode, rttMS)
}

// studyColor and caseColor mark the published points beside the lab's.
var (
	studyColor = color.RGBA{R: 0x33, G: 0x99, B: 0x33, A: 0xff}
	caseColor  = color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}
)

// sweepRTTs returns the RTTs of rs that a log axis can show (> 0).
func sweepRTTs(rs []results.Result) []int {
	return slices.DeleteFunc(rtts(rs), func(r int) bool { return r <= 0 })
}

// rttTicks puts one labelled tick at each RTT.
func rttTicks(rs []int) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(rs))
	for i, r := range rs {
		ticks[i] = plot.Tick{Value: float64(r), Label: strconv.Itoa(r)}
	}
	return ticks
}

// chartRTTs returns the RTTs a sweep chart shows: the lab's (> 0), the
// case's (3 and 10 ms) and, when rs are comparable with it, study B's.
func chartRTTs(rs []results.Result) []int {
	xs := sweepRTTs(rs)
	for _, c := range caseFigures {
		xs = append(xs, c.RTTMS)
	}
	if comparableWithNodeStudy(rs) {
		for _, s := range nodeStudyPoints {
			xs = append(xs, s.RTTMS)
		}
	}
	slices.Sort(xs)
	return slices.Compact(xs)
}

// newSweepPlot returns a plot with RTT on a log x axis spanning xs, legend
// at the bottom right (the lines rise to the right).
func newSweepPlot(title, ylabel string, xs []int) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "RTT, ms (log scale; RTT 0 is not shown)"
	p.Y.Label.Text = ylabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = rttTicks(xs)
	p.X.Min, p.X.Max = float64(xs[0])/1.3, float64(xs[len(xs)-1])*1.3
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.YOffs = vg.Points(8)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return p
}

// addLine adds a line with points for xys, labelled in the legend.
func addLine(p *plot.Plot, label string, xys plotter.XYs, c color.Color, dashed bool) error {
	if len(xys) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("plot %s: %w", label, err)
	}
	l.Color, s.Color = c, c
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l, s)
	p.Legend.Add(label, l, s)
	return nil
}

// addPoints adds unconnected marks for xys, labelled in the legend.
func addPoints(p *plot.Plot, label string, xys plotter.XYs, c color.Color, shape draw.GlyphDrawer) error {
	if len(xys) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return fmt.Errorf("plot %s: %w", label, err)
	}
	s.Color, s.Shape, s.Radius = c, shape, vg.Points(4)
	p.Add(s)
	p.Legend.Add(label, s)
	return nil
}

// SweepLatencyPlot plots a latency percentile (p50 when q is 0.5, p99 when
// 0.99) per send against RTT, one line per client strategy; beside them the
// case's published points and, when rs are comparable with it
// (SERVER_DELAY_MS=0, per-request on TLS 1.3), study B's medians
// (docs/studies.md; study B gives medians only, so they appear on the p50
// chart).
func SweepLatencyPlot(rs []results.Result, q float64) (*plot.Plot, error) {
	xs := sweepRTTs(rs)
	if len(xs) == 0 {
		return nil, fmt.Errorf("plot sweep: no result with RTT > 0")
	}
	name, value, caseValue := "p50", func(r results.Result) float64 { return r.LatencyMS.P50 }, func(c CaseFigure) float64 { return c.P50MS }
	if q >= 0.99 {
		name, value, caseValue = "p99", func(r results.Result) float64 { return r.LatencyMS.P99 }, func(c CaseFigure) float64 { return c.P99MS }
	}
	p := newSweepPlot(name+" send latency against RTT ("+handshakeTitle(rs)+")", "ms (log scale)", chartRTTs(rs))
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	for _, m := range modes(rs) {
		var xys plotter.XYs
		for _, x := range xs {
			if r, ok := find(rs, x, m); ok && value(r) > 0 {
				xys = append(xys, plotter.XY{X: float64(x), Y: value(r)})
			}
		}
		if err := addLine(p, m+" (lab)", xys, seriesColor(m, false), false); err != nil {
			return nil, err
		}
	}
	for _, m := range modes(rs) {
		var xys plotter.XYs
		for _, c := range caseFigures {
			if c.Mode == m {
				xys = append(xys, plotter.XY{X: float64(c.RTTMS), Y: caseValue(c)})
			}
		}
		if err := addPoints(p, m+" (case)", xys, seriesColor(m, true), draw.BoxGlyph{}); err != nil {
			return nil, err
		}
	}
	if name == "p50" && comparableWithNodeStudy(rs) {
		var reused, fresh plotter.XYs
		for _, s := range nodeStudyPoints {
			reused = append(reused, plotter.XY{X: float64(s.RTTMS), Y: s.ReusedP50})
			fresh = append(fresh, plotter.XY{X: float64(s.RTTMS), Y: s.NewConnP50})
		}
		if err := addPoints(p, "new connection (Node study)", fresh, studyColor, draw.TriangleGlyph{}); err != nil {
			return nil, err
		}
		if err := addPoints(p, "reused (Node study)", reused, studyColor, draw.CircleGlyph{}); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// SweepRatioPlot plots per-request p50 / pooled p50 against RTT, beside
// the case's ratios and, when comparable, study B's medians' ratios and its
// band (2.7x-3.0x from 1 to 380 ms, docs/studies.md).
func SweepRatioPlot(rs []results.Result) (*plot.Plot, error) {
	xs := sweepRTTs(rs)
	if len(xs) == 0 {
		return nil, fmt.Errorf("plot sweep ratio: no result with RTT > 0")
	}
	p := newSweepPlot("per-request p50 / pooled p50 against RTT ("+handshakeTitle(rs)+")", "ratio", chartRTTs(rs))
	p.Y.Min = 0
	var lab plotter.XYs
	for _, pen := range Penalties(rs) {
		if pen.RTTMS > 0 && !math.IsNaN(pen.Ratio) {
			lab = append(lab, plotter.XY{X: float64(pen.RTTMS), Y: pen.Ratio})
			p.Y.Max = max(p.Y.Max, pen.Ratio*1.2)
		}
	}
	if err := addLine(p, "lab", lab, seriesColor(vendorapi.PerRequestName, false), false); err != nil {
		return nil, err
	}
	var cs plotter.XYs
	for _, rtt := range []int{3, 10} {
		pr, ok1 := CaseFigureFor(rtt, vendorapi.PerRequestName)
		po, ok2 := CaseFigureFor(rtt, vendorapi.PooledName)
		if ok1 && ok2 {
			cs = append(cs, plotter.XY{X: float64(rtt), Y: pr.P50MS / po.P50MS})
		}
	}
	if err := addPoints(p, "case", cs, caseColor, draw.BoxGlyph{}); err != nil {
		return nil, err
	}
	if comparableWithNodeStudy(rs) {
		var pts plotter.XYs
		for _, s := range nodeStudyPoints {
			pts = append(pts, plotter.XY{X: float64(s.RTTMS), Y: s.Ratio()})
		}
		if err := addPoints(p, "Node study medians", pts, studyColor, draw.TriangleGlyph{}); err != nil {
			return nil, err
		}
		for i, y := range []float64{NodeStudyRatioLow, NodeStudyRatioHigh} {
			band := plotter.XYs{{X: NodeStudyRatioMinMS, Y: y}, {X: NodeStudyRatioMaxMS, Y: y}}
			label := ""
			if i == 0 {
				label = fmt.Sprintf("Node study band %.1fx-%.1fx", NodeStudyRatioLow, NodeStudyRatioHigh)
			}
			l, err := plotter.NewLine(band)
			if err != nil {
				return nil, fmt.Errorf("plot sweep ratio: %w", err)
			}
			l.Color, l.Dashes = studyColor, []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(l)
			if label != "" {
				p.Legend.Add(label, l)
			}
		}
	}
	p.Y.Max = max(p.Y.Max, 3.6)
	return p, nil
}

// CDFPlot plots one run's latency distribution (Result.LatencyCDF): the
// fraction of measured sends at or below each latency.
func CDFPlot(r results.Result) (*plot.Plot, error) {
	if len(r.LatencyCDF) == 0 {
		return nil, fmt.Errorf("plot cdf %s at %d ms: no latency distribution in the result", r.Mode, r.RTTMS)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Latency CDF: %s, %d ms, TCP_HANDSHAKE=%s, %d sends", clientLabel(r), r.RTTMS, handshakeLabel(r), r.Measured)
	p.X.Label.Text = "latency, ms"
	p.Y.Label.Text = "fraction of sends <= latency"
	p.Y.Min, p.Y.Max = 0, 1
	xys := make(plotter.XYs, len(r.LatencyCDF))
	for i, c := range r.LatencyCDF {
		xys[i] = plotter.XY{X: c.MS, Y: c.Q}
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, fmt.Errorf("plot cdf: %w", err)
	}
	l.Color = seriesColor(r.Mode, false)
	l.StepStyle = plotter.PostStep
	p.Add(l)
	return p, nil
}

// handshakeTitle says which TCP_HANDSHAKE rs used: "TCP_HANDSHAKE=on",
// "=off", or "mixed".
func handshakeTitle(rs []results.Result) string {
	seen := ""
	for _, r := range rs {
		h := handshakeLabel(r)
		if seen != "" && seen != h {
			return "TCP_HANDSHAKE mixed"
		}
		seen = h
	}
	return "TCP_HANDSHAKE=" + seen
}

// WriteSweepCharts writes into dir (created) the sweep charts of rs
// (SweepP50Chart, SweepP99Chart, SweepRatioChart; skipped when no RTT is
// > 0, the ratio also when no RTT has both modes) and one CDF chart per
// result that holds a distribution.
func WriteSweepCharts(dir string, rs []results.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create charts dir: %w", err)
	}
	var jobs []struct {
		file string
		plot func() (*plot.Plot, error)
	}
	add := func(file string, f func() (*plot.Plot, error)) {
		jobs = append(jobs, struct {
			file string
			plot func() (*plot.Plot, error)
		}{file, f})
	}
	// A log latency axis needs one latency > 0 (a worker that wrote no
	// records and sent nothing has none).
	if len(sweepRTTs(rs)) > 0 && slices.ContainsFunc(rs, func(r results.Result) bool { return r.RTTMS > 0 && r.LatencyMS.P50 > 0 }) {
		add(SweepP50Chart, func() (*plot.Plot, error) { return SweepLatencyPlot(rs, 0.5) })
		add(SweepP99Chart, func() (*plot.Plot, error) { return SweepLatencyPlot(rs, 0.99) })
		if slices.ContainsFunc(Penalties(rs), func(p Penalty) bool { return p.RTTMS > 0 }) {
			add(SweepRatioChart, func() (*plot.Plot, error) { return SweepRatioPlot(rs) })
		}
	}
	if hasModelParts(rs) && len(ModelRows(rs)) > 0 {
		add(RTTModelChart, func() (*plot.Plot, error) { return ModelPartsPlot(rs) })
	}
	for _, r := range rs {
		if len(r.LatencyCDF) > 0 {
			add(CDFChartFile(r.Mode, r.RTTMS), func() (*plot.Plot, error) { return CDFPlot(r) })
		}
	}
	for _, j := range jobs {
		p, err := j.plot()
		if err != nil {
			return err
		}
		if err := SaveSVG(filepath.Join(dir, j.file), p, chartWidth, chartHeight); err != nil {
			return fmt.Errorf("write chart %s: %w", j.file, err)
		}
	}
	return nil
}
