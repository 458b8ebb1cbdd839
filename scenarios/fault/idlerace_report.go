package fault

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/notifier-lab/notifier-lab/scenarios/report"
)

// WriteIdleRace writes OUT/<scenario>.json, OUT/charts/<scenario>.svg and
// OUT/<scenario>.md (idle-race.json for the catalog's idle-race), adds a
// section named after the scenario to OUT/summary.md, and prints the
// table to w.
func WriteIdleRace(out string, res IdleRaceResult, w io.Writer) error {
	name := cmp.Or(res.Scenario, "idle-race")
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
	if err := os.WriteFile(filepath.Join(out, name+".md"), []byte(idleRacePage(name, res)), 0o644); err != nil {
		return fmt.Errorf("write %s.md: %w", name, err)
	}
	sec := fmt.Sprintf("## Idle race: %s\n\n%s. Table: [%[3]s.md](%[3]s.md), data: [%[3]s.json](%[3]s.json), chart: [charts/%[3]s.svg](charts/%[3]s.svg).\n",
		name, idleSummary(res), name)
	if err := appendSection(filepath.Join(out, "summary.md"), name, sec, res.Provenance); err != nil {
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
	s := "Failures per 1,000 sends: " + strings.Join(parts, "; ")
	if reportsOnRows(res.Rows) {
		parts = parts[:0]
		for _, r := range res.Rows {
			c := settleCells(r)
			parts = append(parts, fmt.Sprintf("%s at %d ms: UNKNOWN produced %d, settled: %s, left %s, time to settle p50/p99 %s ms", r.Setting, r.RTTMS, r.Unknown, c[0], c[1], c[2]))
		}
		s += ". With the vendor's reports: " + strings.Join(parts, "; ")
	}
	return s
}

// idleRacePage is NAME.md of an idle race: the provenance header, the
// race's settings, its table, the chart and the note.
func idleRacePage(name string, res IdleRaceResult) string {
	var md strings.Builder
	fmt.Fprintf(&md, "# Idle race (stale keep-alive): %s\n\n%snginx keepalive_timeout %.0f ms, bursts of %d, pauses uniform in [%.0f, %.0f] ms (seed %d), %d sends per lane, server delay %d ms. Per 1,000 sends.\n\n",
		name, res.Provenance.Header(), res.KeepaliveTimeoutMS, res.Burst, res.PauseMinMS, res.PauseMaxMS, res.Seed, res.SendsPerLane, res.ServerDelayMS)
	if res.KeepaliveHint {
		fmt.Fprintf(&md, "nginx sent the hint `Keep-Alive: timeout=%.0f` (keepalive_timeout's second parameter): a client that reads it can stop reusing a connection before nginx closes it.\n\n", res.KeepaliveTimeoutMS/1000)
	}
	if res.Reports != "" {
		fmt.Fprintf(&md, "Vendor delivery reports on: %s. UNKNOWN counts the sends that ended UNKNOWN (worker records); settled by counts the ledger's settlements by source, UNKNOWN left those left for an operator (docs/outcomes.md#delivery-reports).\n\n", res.Reports)
	}
	WriteIdleRaceTable(&md, res, true)
	fmt.Fprintf(&md, "\n![failures per 1,000](charts/%s.svg)\n\n%s\n", name, res.Note)
	return md.String()
}

// WriteIdleRaceTable writes one row per lane (Markdown when md); with
// the vendor's reports on (a row with UnknownLeft) it adds the settlement
// columns (settleHead), otherwise the table is as before they existed.
func WriteIdleRaceTable(w io.Writer, res IdleRaceResult, md bool) {
	head := []string{"RTT ms", "setting", "idle timeout", "sends", "UNKNOWN", "NOT_SENT", "failures/1000", "absorbed/1000", "new conns", "reached vendor", "dup", "lost"}
	var rows [][]string
	for _, r := range res.Rows {
		rows = append(rows, []string{strconv.Itoa(r.RTTMS), r.Setting, idleCell(r),
			strconv.Itoa(r.Sends), strconv.Itoa(r.Unknown), strconv.Itoa(r.NotSent), fmt.Sprintf("%.1f", r.FailuresPer1000),
			fmt.Sprintf("%.1f", r.AbsorbedPer1000), strconv.Itoa(r.NewConnections), strconv.Itoa(r.ReachedVendor),
			strconv.Itoa(r.Duplicates), strconv.Itoa(r.Lost)})
	}
	if reportsOnRows(res.Rows) {
		head = append(head, settleHead...)
		for i, r := range res.Rows {
			rows[i] = append(rows[i], settleCells(r)...)
		}
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

// idleCell is a lane's idle timeout for the table: the one the lane
// set, or, for a lane that runs with the worker's own (IdleSettingWorker:
// the race does not know it), "the worker's own", never "0s" (issue 30).
func idleCell(r IdleRaceRow) string {
	if r.IdleConnTimeoutMS <= 0 && r.Setting == IdleSettingWorker {
		return "the worker's own (not known to the race)"
	}
	return (time.Duration(r.IdleConnTimeoutMS) * time.Millisecond).String()
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
	// The legend sits in a band at the top of the plot that the data never
	// reaches (see chartHeadroom), clear of the right edge: the text is
	// right-aligned to the thumbnails, which would otherwise sit on the
	// canvas border.
	p.Legend.Top = true
	p.Legend.XOffs = -vg.Points(12)
	p.Legend.YOffs = -vg.Points(4)
	p.Legend.Padding = vg.Points(6) // between a label and its line sample
	p.Title.Padding = vg.Points(8)
	byRTT := map[int]plotter.XYs{}
	var rtts []int
	ymax := 1.0
	for _, r := range res.Rows {
		if r.IdleConnTimeoutMS <= 0 {
			continue // a contract worker's own idle timeout, unknown to the lab: no point on a log scale
		}
		if _, ok := byRTT[r.RTTMS]; !ok {
			rtts = append(rtts, r.RTTMS)
		}
		byRTT[r.RTTMS] = append(byRTT[r.RTTMS], plotter.XY{X: r.IdleConnTimeoutMS / 1000, Y: r.FailuresPer1000})
		ymax = math.Max(ymax, r.FailuresPer1000)
	}
	colors := []color.Color{color.RGBA{R: 0x2c, G: 0x6f, B: 0xbb, A: 0xff}, color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff},
		color.RGBA{R: 0x27, G: 0x8e, B: 0x4a, A: 0xff}, color.RGBA{R: 0x8e, G: 0x44, B: 0xad, A: 0xff}}
	var marks []valueLabel
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
		for _, xy := range xys {
			marks = append(marks, valueLabel{x: xy.X, y: xy.Y, text: fmt.Sprintf("%.1f", xy.Y), color: c})
		}
	}
	t := res.KeepaliveTimeoutMS / 1000
	ka, err := plotter.NewLine(plotter.XYs{{X: t, Y: 0}, {X: t, Y: ymax * keepaliveLineTop}})
	if err == nil {
		ka.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		ka.Color = color.Gray{Y: 0x80}
		p.Add(ka)
		p.Legend.Add("nginx keepalive_timeout", ka)
	}
	p.Y.Min, p.Y.Max = 0, ymax*chartHeadroom(len(rtts)+1, len(rtts))
	xmin, xmax := t, t
	for _, r := range res.Rows {
		if r.IdleConnTimeoutMS > 0 {
			xmin, xmax = math.Min(xmin, r.IdleConnTimeoutMS/1000), math.Max(xmax, r.IdleConnTimeoutMS/1000)
		}
	}
	p.X.Min, p.X.Max = xmin*0.8, xmax*1.6 // room for the value labels
	if err := addValueLabels(p, marks); err != nil {
		return fmt.Errorf("plot idle race: %w", err)
	}
	if err := report.WriteSVG(w, p, 18*vg.Centimeter, 11*vg.Centimeter); err != nil {
		return fmt.Errorf("idle race chart: %w", err)
	}
	return nil
}

// Layout of the idle-race chart (18 x 11 cm; the data area is about
// plotHeight tall). The keepalive_timeout line stops at keepaliveLineTop
// times the highest point.
const (
	plotHeight       = 250.0        // points
	plotWidth        = 465.0        // points
	legendRow        = 16.5         // points per legend entry (12 pt text)
	labelStep        = vg.Length(8) // points between two lanes' labels (7 pt text)
	keepaliveLineTop = 1.15
)

// chartHeadroom returns the Y axis maximum as a multiple of the highest
// point: enough that the highest point, its lane's label (stacked by
// lane) and the keepalive_timeout line stay below the legend's band of
// entries rows at the top.
func chartHeadroom(entries, lanes int) float64 {
	band := (float64(entries)*legendRow + 12) / plotHeight
	labels := (4 + float64(lanes)*float64(labelStep) + 8) / plotHeight
	return 1 / (1 - band - labels)
}

// valueLabel is the failures-per-1,000 figure printed beside one marker.
type valueLabel struct {
	x, y  float64 // data coordinates
	text  string
	color color.Color
}

// addValueLabels prints each label 4 pt right of and above its marker,
// lifted by labelStep while it would overlap a label already placed (lanes
// often share a value at nearly the same idle timeout: 0.0 below T). It
// places them on an estimate of the data area (plotWidth x plotHeight,
// log X), so p's axes must be final.
func addValueLabels(p *plot.Plot, marks []valueLabel) error {
	type rect struct{ x0, y0, x1, y1 float64 }
	var placed []rect
	lx0, lx1 := math.Log(p.X.Min), math.Log(p.X.Max)
	for _, m := range marks {
		px := plotWidth * (math.Log(m.x) - lx0) / (lx1 - lx0)
		py := plotHeight * (m.y - p.Y.Min) / (p.Y.Max - p.Y.Min)
		w := float64(len(m.text))*4 + 4 // 7 pt digits, with a margin
		off := 4.0
		for {
			r := rect{px + 4, py + off - 1, px + 4 + w, py + off + 8}
			if !slices.ContainsFunc(placed, func(o rect) bool { return r.x0 < o.x1 && o.x0 < r.x1 && r.y0 < o.y1 && o.y0 < r.y1 }) {
				placed = append(placed, r)
				break
			}
			off += float64(labelStep)
		}
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: m.x, Y: m.y}}, Labels: []string{m.text}})
		if err != nil {
			return err
		}
		l.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(off)}
		l.TextStyle[0].Font.Size = vg.Points(7)
		l.TextStyle[0].Color = m.color
		p.Add(l)
	}
	return nil
}

func sortXY(xys plotter.XYs) {
	for i := 1; i < len(xys); i++ {
		for j := i; j > 0 && xys[j].X < xys[j-1].X; j-- {
			xys[j], xys[j-1] = xys[j-1], xys[j]
		}
	}
}
