package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// RTTModelChart is the file of ModelPartsPlot under OUT/charts.
const RTTModelChart = "rtt-model.svg"

// chartModeName is a new-connection client's short name under its bar:
// full (per-request), resumed (per-request-resume), or the mode's own.
func chartModeName(mode string) string {
	switch mode {
	case vendorapi.PerRequestName:
		return "full"
	case vendorapi.PerRequestResumeName:
		return "resumed"
	}
	return mode
}

// ModelPartsPlot draws ModelRows of rs: per RTT and new-connection client,
// one stacked bar of the model's round trips and each measured part
// (forwarding, TCP connect, worker CPU, nginx CPU, the vendor's answer; a
// part not measured counts 0) beside one bar of the measured penalty (p50 - pooled p50).
// Errors: no rows.
func ModelPartsPlot(rs []results.Result) (*plot.Plot, error) {
	rows := ModelRows(rs)
	if len(rows) == 0 {
		return nil, fmt.Errorf("plot %s: no per-request and pooled runs at one RTT", RTTModelChart)
	}
	p := plot.New()
	p.Title.Text = "Per-send penalty of a new connection: model + measured parts vs measured"
	p.Title.Padding = vg.Points(8)
	p.Y.Label.Text = "ms (p50 - pooled p50)"
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(12)
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = fmt.Sprintf("%d ms %s", r.RTTMS, chartModeName(r.Mode))
	}
	zero := func(v float64) float64 {
		if math.IsNaN(v) || v < 0 {
			return 0
		}
		return v
	}
	layers := []struct {
		label string
		c     color.Color
		v     func(ModelRow) float64
	}{
		{"model: round trips x RTT", color.RGBA{R: 0x2c, G: 0x6f, B: 0xbb, A: 0xff}, func(r ModelRow) float64 { return r.Parts.ModelMS() }},
		{"forwarding beyond the RTT", color.RGBA{R: 0x8e, G: 0x44, B: 0xad, A: 0xff}, func(r ModelRow) float64 { return zero(r.Parts.ForwardTotalMS()) }},
		{"TCP connect", color.RGBA{R: 0x7f, G: 0x8c, B: 0x8d, A: 0xff}, func(r ModelRow) float64 { return zero(r.Parts.ConnectMS) }},
		{"worker CPU", color.RGBA{R: 0xe6, G: 0x7e, B: 0x22, A: 0xff}, func(r ModelRow) float64 { return zero(r.Parts.WorkerCPUMS) }},
		{"nginx CPU", color.RGBA{R: 0x27, G: 0x8e, B: 0x4a, A: 0xff}, func(r ModelRow) float64 { return zero(r.Parts.NginxCPUMS) }},
		{"vendor answer (nginx upstream time)", color.RGBA{R: 0xf1, G: 0xc4, B: 0x0f, A: 0xff}, func(r ModelRow) float64 { return zero(r.Parts.UpstreamMS) }},
	}
	ymax := 0.0
	var below *plotter.BarChart
	for _, l := range layers {
		vals := make(plotter.Values, len(rows))
		for i, r := range rows {
			vals[i] = l.v(r)
		}
		bars, err := plotter.NewBarChart(vals, barWidth)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", RTTModelChart, err)
		}
		bars.Color = l.c
		bars.LineStyle.Width = 0
		bars.Offset = -barWidth / 2
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		p.Legend.Add(l.label, bars)
	}
	measured := make(plotter.Values, len(rows))
	var xys plotter.XYs
	var labels []string
	for i, r := range rows {
		measured[i] = zero(r.MeasuredMS)
		ymax = max(ymax, measured[i], zero(r.Parts.SumMS()))
		xys = append(xys, plotter.XY{X: float64(i), Y: measured[i]})
		labels = append(labels, fmt.Sprintf("%.1f (%+.1f)", r.MeasuredMS, r.ResidualMS))
	}
	mb, err := plotter.NewBarChart(measured, barWidth)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", RTTModelChart, err)
	}
	mb.Color = color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff}
	mb.LineStyle.Width = 0
	mb.Offset = barWidth / 2
	p.Add(mb)
	p.Legend.Add("measured (label: ms, residual)", mb)
	if lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels}); err == nil {
		lb.Offset = vg.Point{X: barWidth / 2, Y: vg.Points(2)}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Font.Size = vg.Points(7)
		}
		p.Add(lb)
	}
	p.Y.Max = max(ymax*1.6, 1)
	p.X.Min, p.X.Max = -0.5, float64(len(rows))-0.5
	p.NominalX(names...)
	return p, nil
}
