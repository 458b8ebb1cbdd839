package fault

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

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
