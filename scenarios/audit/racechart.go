package audit

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/notifier-lab/notifier-lab/scenarios/fault"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// raceHasIdle reports whether a row of the race carries the idle timeout
// the lab set (the Go worker's lanes); a contract worker's lanes run with
// the worker's own setting, unknown to the race (idle_conn_timeout_ms 0).
func raceHasIdle(race fault.IdleRaceResult) bool {
	for _, r := range race.Rows {
		if r.IdleConnTimeoutMS > 0 {
			return true
		}
	}
	return false
}

// ownIdle says in words the idle timeout a worker's docs state
// (statedIdle), marked as stated: the measure is the idle probe's.
func ownIdle(worker string) string {
	s := statedIdle(worker, results.Result{})
	switch {
	case !s.Known:
		return "its idle timeout: nothing stated"
	case !s.Reuse:
		return "stated: keeps no idle connection"
	case math.IsInf(s.S, 1):
		return "stated: no idle timeout"
	}
	return fmt.Sprintf("stated idle timeout %g s", s.S)
}

// raceChartByRTT draws the audit's idle race of a worker whose lanes carry
// no idle timeout: failures (UNKNOWN + NOT_SENT) per 1,000 sends, one bar
// per RTT, each labelled "<failures> of <sends> failed". The idle race's
// own chart (fault.WriteIdleRaceChart) plots failures against the client's
// idle timeout on a log scale and skips such lanes, which left the
// contract workers' charts empty. Returns the SVG file's bytes.
func raceChartByRTT(worker string, race fault.IdleRaceResult) ([]byte, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Idle race at nginx keep-alive %g s: %s (%s)", race.KeepaliveTimeoutMS/1000, worker, ownIdle(worker))
	p.Title.Padding = vg.Points(8)
	p.Y.Label.Text = "failures per 1,000 sends"
	p.X.Label.Text = "pauses around the keep-alive timeout, by RTT"
	var vals plotter.Values
	var names []string
	var marks plotter.XYLabels
	ymax := 0.0
	for i, r := range race.Rows {
		vals = append(vals, r.FailuresPer1000)
		names = append(names, fmt.Sprintf("RTT %d ms", r.RTTMS))
		marks.XYs = append(marks.XYs, plotter.XY{X: float64(i), Y: r.FailuresPer1000})
		marks.Labels = append(marks.Labels, fmt.Sprintf("%d of %d failed", r.Failures, r.Sends))
		ymax = math.Max(ymax, r.FailuresPer1000)
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("idle race chart: no lane")
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(40))
	if err != nil {
		return nil, fmt.Errorf("idle race chart: %w", err)
	}
	bars.Color = color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff}
	bars.LineStyle.Width = vg.Points(0.5)
	labels, err := plotter.NewLabels(marks)
	if err != nil {
		return nil, fmt.Errorf("idle race chart: %w", err)
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].XAlign = -0.5 // centred on the bar
	}
	labels.Offset = vg.Point{Y: vg.Points(4)}
	p.Add(bars, labels)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.7, float64(len(vals))-0.3
	// Room for the labels above the highest bar, in whole steps of 10
	// per 1,000 (50 when every lane is clean).
	p.Y.Min, p.Y.Max = 0, math.Ceil(math.Max(ymax, 38)*1.3/10)*10
	var ticks []plot.Tick
	step := math.Max(10, math.Ceil(p.Y.Max/50)*10)
	for v := 0.0; v <= p.Y.Max; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	var b bytes.Buffer
	if err := report.WriteSVG(&b, p, 18*vg.Centimeter, 11*vg.Centimeter); err != nil {
		return nil, fmt.Errorf("idle race chart: %w", err)
	}
	return b.Bytes(), nil
}
