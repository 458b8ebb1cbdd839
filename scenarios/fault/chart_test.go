package fault

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
)

// box is a rectangle of the rendered SVG, in its y-up coordinates.
type box struct {
	what           string
	x0, y0, x1, y1 float64
}

func (a box) overlaps(b box) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

var (
	svgText   = regexp.MustCompile(`<text x="([-\d.]+)" y="([-\d.]+)" transform="scale\(1, -1\)"\s*style="[^"]*font-size:(\d+)px[^"]*">([^<]*)</text>`)
	svgCircle = regexp.MustCompile(`<path d="M([-\d.]+),([-\d.]+)A2\.5`)
)

// chartBoxes reads the value labels (7 px text), the legend entries (12 px
// text after the axis labels, widened over their line samples) and the
// data markers (the first nMarkers circles: gonum draws the data before
// the legend) of a chart written by WriteIdleRaceChart.
func chartBoxes(t *testing.T, svg string, nMarkers int) (labels, legend, markers []box) {
	t.Helper()
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("svg number %q: %v", s, err)
		}
		return f
	}
	for _, m := range svgText.FindAllStringSubmatch(svg, -1) {
		x, y, size, text := num(m[1]), -num(m[2]), num(m[3]), m[4]
		w := float64(len(text)) * size * 0.5
		switch {
		case size == 7:
			labels = append(labels, box{text, x, y - 1, x + w, y + size})
		case size == 12 && (text == "nginx keepalive_timeout" || len(text) > 4 && text[:4] == "RTT "):
			legend = append(legend, box{text, x, y - 3, x + w + 30, y + size})
		}
	}
	for i, m := range svgCircle.FindAllStringSubmatch(svg, -1) {
		if i == nMarkers {
			break
		}
		x, y := num(m[1])-2.5, num(m[2])
		markers = append(markers, box{"marker", x - 2.5, y - 2.5, x + 2.5, y + 2.5})
	}
	if len(labels) == 0 || len(legend) == 0 || len(markers) != nMarkers {
		t.Fatalf("chart: %d labels, %d legend entries, %d markers; want some of each and %d markers", len(labels), len(legend), len(markers), nMarkers)
	}
	return labels, legend, markers
}

// TestIdleRaceChartLayout: no two value labels print over each other (two
// lanes at 0.0 just below T did) and the legend covers no marker or label
// (it sat over the line markers). The rows are those of the 2 s race the
// repository's results hold, and of the one-lane window variant.
func TestIdleRaceChartLayout(t *testing.T) {
	row := func(rtt int, setting string, idleMS int, per1000 float64) IdleRaceRow {
		r := raceRow(rtt, setting, time.Duration(idleMS)*time.Millisecond, 1000, nil, 1000, reconcile.Report{OK: true})
		r.FailuresPer1000 = per1000
		return r
	}
	tests := []struct {
		name string
		rows []IdleRaceRow
	}{
		{"two lanes", []IdleRaceRow{
			row(10, "default", 90000, 3), row(10, "t_plus_1s", 3000, 1), row(10, "t_minus_half_rtt", 1995, 1), row(10, "t_minus_rtt_margin", 1740, 0),
			row(150, "default", 90000, 11), row(150, "t_plus_1s", 3000, 14), row(150, "t_minus_half_rtt", 1925, 4), row(150, "t_minus_rtt_margin", 1600, 0),
		}},
		{"one lane, all high", []IdleRaceRow{row(300, "default", 90000, 500), row(300, "t_plus_1s", 3000, 480), row(300, "t_minus_rtt_margin", 1400, 0)}},
		{"four lanes, highest at the default", []IdleRaceRow{
			row(3, "default", 90000, 40), row(10, "default", 90000, 38), row(50, "default", 90000, 36), row(150, "default", 90000, 39),
			row(3, "t_minus_rtt_margin", 1990, 0), row(10, "t_minus_rtt_margin", 1980, 0), row(50, "t_minus_rtt_margin", 1900, 0), row(150, "t_minus_rtt_margin", 1700, 0),
		}},
		{"all zero", []IdleRaceRow{row(10, "default", 90000, 0), row(150, "default", 90000, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var svg bytes.Buffer
			if err := WriteIdleRaceChart(&svg, IdleRaceResult{KeepaliveTimeoutMS: 2000, Rows: tt.rows}); err != nil {
				t.Fatal(err)
			}
			labels, legend, markers := chartBoxes(t, svg.String(), len(tt.rows))
			for i := range labels {
				for j := i + 1; j < len(labels); j++ {
					if labels[i].overlaps(labels[j]) {
						t.Errorf("labels %q %+v and %q %+v overlap", labels[i].what, labels[i], labels[j].what, labels[j])
					}
				}
			}
			for _, l := range legend {
				for _, b := range append(append([]box{}, labels...), markers...) {
					if l.overlaps(b) {
						t.Errorf("legend entry %q %+v covers %s %q %+v", l.what, l, "a", b.what, b)
					}
				}
			}
		})
	}
}
