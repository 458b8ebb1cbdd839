package report

import (
	"bytes"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// Every chart names a sans-serif fallback list, never a serif face: a
// viewer without Liberation Sans must draw text of the width the layout
// reserved (Arimo, Arial and Helvetica share its metrics).
func TestChartsAskForSansSerifWithFallbacks(t *testing.T) {
	p := plot.New()
	p.Title.Text = "p50 latency per client and RTT"
	p.X.Label.Text = "RTT ms"
	var b bytes.Buffer
	if err := WriteSVG(&b, p, 10*vg.Centimeter, 6*vg.Centimeter); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if strings.Contains(svg, "Serif") {
		t.Errorf("chart still names a serif face:\n%s", firstFont(svg))
	}
	if !strings.Contains(svg, sansFallback) {
		t.Errorf("chart does not name the fallback list %q:\n%s", sansFallback, firstFont(svg))
	}
}

func firstFont(svg string) string {
	i := strings.Index(svg, "font-family")
	if i < 0 {
		return "(no font-family)"
	}
	return svg[i:min(len(svg), i+80)]
}
