package report

import (
	"fmt"
	"image/color"
	"io"
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

// Chart describes one grouped bar chart of the results: one group per RTT,
// one bar per mode for the lab and, where the case measured that RTT, one
// lighter bar per mode with the case's published figure (CaseFigures).
// Each bar carries its value as a label, so a bar too short to see (one
// TCP connection beside 1,050) still reads.
type Chart struct {
	File   string // file name under OUT/charts, e.g. "latency-p50.svg"
	Title  string
	YLabel string
	Format string // fmt verb for the bar labels, e.g. "%.1f"
	Value  func(results.Result) float64
	Case   func(CaseFigure) float64
}

// Charts returns the lab's charts: p50 and p99 latency, sends/s, CPU per
// send and TCP connections, per mode and RTT.
func Charts() []Chart {
	return []Chart{
		{"latency-p50.svg", "p50 send latency", "ms", "%.1f",
			func(r results.Result) float64 { return r.LatencyMS.P50 }, func(c CaseFigure) float64 { return c.P50MS }},
		{"latency-p99.svg", "p99 send latency", "ms", "%.1f",
			func(r results.Result) float64 { return r.LatencyMS.P99 }, func(c CaseFigure) float64 { return c.P99MS }},
		{"sends-per-s.svg", "Throughput (concurrency 1)", "sends/s", "%.1f",
			func(r results.Result) float64 { return r.SendsPerS }, func(c CaseFigure) float64 { return c.SendsPerS }},
		{"cpu-per-send.svg", "Worker CPU per send (user+sys)", "ms CPU / send", "%.2f",
			func(r results.Result) float64 { return r.CPUMSPerSend }, func(c CaseFigure) float64 { return c.CPUMSPerSend }},
		{"tcp-connections.svg", "TCP connections carrying sends (warm-up included)", "connections", "%.0f",
			func(r results.Result) float64 { return float64(r.TCPConnections) }, func(c CaseFigure) float64 { return float64(c.TCPConnections) }},
	}
}

// Chart size.
const (
	chartWidth  = 16 * vg.Centimeter
	chartHeight = 10 * vg.Centimeter
)

// barWidth is the width of one bar.
var barWidth = vg.Points(22)

// seriesColor gives each mode a hue; the case's bars are a lighter shade.
func seriesColor(mode string, isCase bool) color.Color {
	switch {
	case !slices.Contains(results.KnownModes, mode): // a contract worker's runs (WORKER)
		return color.RGBA{R: 0x27, G: 0x8e, B: 0x4a, A: 0xff}
	case mode == vendorapi.SharedClosingName:
		return color.RGBA{R: 0xe6, G: 0x7e, B: 0x22, A: 0xff}
	case mode == vendorapi.PerRequestName && !isCase:
		return color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff}
	case mode == vendorapi.PerRequestName:
		return color.RGBA{R: 0xe8, G: 0xa8, B: 0xa0, A: 0xff}
	case mode == vendorapi.PerRequestResumeName: // not shared-closing's orange: a run may hold both
		return color.RGBA{R: 0x8e, G: 0x44, B: 0xad, A: 0xff}
	case !isCase:
		return color.RGBA{R: 0x2c, G: 0x6f, B: 0xbb, A: 0xff}
	default:
		return color.RGBA{R: 0xa4, G: 0xc4, B: 0xe8, A: 0xff}
	}
}

// series is one set of bars: a label and one value per RTT group (NaN when
// there is no value for that group).
type series struct {
	label  string
	mode   string
	isCase bool
	values []float64
}

// chartSeries returns the lab's series per mode, then the case's per mode
// when the case measured at least one of the RTTs.
func (c Chart) series(rs []results.Result) (groups []int, out []series) {
	groups = rtts(rs)
	for _, m := range modes(rs) {
		s := series{label: m, mode: m, values: make([]float64, len(groups))}
		for i, rtt := range groups {
			s.values[i] = math.NaN()
			if r, ok := find(rs, rtt, m); ok {
				s.values[i] = c.Value(r)
			}
		}
		out = append(out, s)
	}
	for _, m := range modes(rs) {
		s := series{label: m + " (case)", mode: m, isCase: true, values: make([]float64, len(groups))}
		any := false
		for i, rtt := range groups {
			s.values[i] = math.NaN()
			if f, ok := CaseFigureFor(rtt, m); ok {
				s.values[i] = c.Case(f)
				any = true
			}
		}
		if any {
			out = append(out, s)
		}
	}
	return groups, out
}

// Plot builds the chart of rs.
func (c Chart) Plot(rs []results.Result) (*plot.Plot, error) {
	groups, ss := c.series(rs)
	if len(groups) == 0 {
		return nil, fmt.Errorf("plot %s: no results", c.File)
	}
	p := plot.New()
	p.Title.Text = c.Title
	p.Title.Padding = vg.Points(8)
	p.Y.Label.Text = c.YLabel
	p.X.Label.Text = "RTT"
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(12) // clear of the y axis and its ticks
	p.Legend.YOffs = -vg.Points(4)
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = strconv.Itoa(g) + " ms"
	}
	ymax := 0.0
	for k, s := range ss {
		vals := make(plotter.Values, len(s.values))
		var xys plotter.XYs
		var labels []string
		for i, v := range s.values {
			if math.IsNaN(v) || v < 0 {
				continue // no value (or unknown CPU): a zero-height bar with no label
			}
			vals[i] = v
			ymax = max(ymax, v)
			xys = append(xys, plotter.XY{X: float64(i), Y: v})
			labels = append(labels, fmt.Sprintf(c.Format, v))
		}
		bars, err := plotter.NewBarChart(vals, barWidth)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", c.File, err)
		}
		bars.Color = seriesColor(s.mode, s.isCase)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(k)-float64(len(ss)-1)/2) * barWidth
		p.Add(bars)
		p.Legend.Add(s.label, bars)
		if len(xys) > 0 {
			l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
			if err != nil {
				return nil, fmt.Errorf("plot %s: %w", c.File, err)
			}
			l.Offset = vg.Point{X: bars.Offset, Y: vg.Points(2)}
			for i := range l.TextStyle {
				l.TextStyle[i].XAlign = draw.XCenter
				l.TextStyle[i].Font.Size = vg.Points(7)
			}
			p.Add(l)
		}
	}
	// Room above the tallest bar for its label and the legend, and half a
	// group of room left and right of the outer groups.
	p.Y.Max = ymax * 1.5
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	if ymax == 0 {
		p.Y.Max = 1
	}
	p.NominalX(names...)
	return p, nil
}

// Reporter returns a Reporter that writes the chart of rs as SVG.
func (c Chart) Reporter(rs []results.Result) Reporter {
	return func(w io.Writer) error {
		p, err := c.Plot(rs)
		if err != nil {
			return err
		}
		if err := WriteSVG(w, p, chartWidth, chartHeight); err != nil {
			return fmt.Errorf("%s: %w", c.File, err)
		}
		return nil
	}
}

// WriteCharts writes every chart of Charts for rs as SVG into dir
// (created), e.g. OUT/charts/latency-p50.svg.
func WriteCharts(dir string, rs []results.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create charts dir: %w", err)
	}
	for _, c := range Charts() {
		f, err := os.Create(filepath.Join(dir, c.File))
		if err != nil {
			return fmt.Errorf("create chart: %w", err)
		}
		err = c.Reporter(rs)(f)
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write chart: %w", cerr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
