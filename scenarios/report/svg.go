package report

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// The lab's charts are set in Liberation Sans, which gonum/plot embeds and
// measures text with, and their SVG names a fallback list of metrically
// compatible sans-serif faces, so a viewer without Liberation Sans draws
// text of the width the layout reserved (issue 16: titles clipped where the
// old default, Liberation Serif, was missing).
func init() {
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

// fontFamily is what the SVG asks for; sansFallback replaces it.
const (
	fontFamily   = "font-family:Liberation Sans;"
	sansFallback = "font-family:Liberation Sans,Arimo,Arial,Helvetica,sans-serif;"
)

// WriteSVG renders p at w x h as SVG into out, naming the sans-serif
// fallback list. Errors are gonum/plot's rendering errors or out's.
func WriteSVG(out io.Writer, p *plot.Plot, w, h vg.Length) error {
	wt, err := p.WriterTo(w, h, "svg")
	if err != nil {
		return fmt.Errorf("render chart: %w", err)
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return fmt.Errorf("render chart: %w", err)
	}
	_, err = out.Write(bytes.ReplaceAll(b.Bytes(), []byte(fontFamily), []byte(sansFallback)))
	return err
}

// SaveSVG is WriteSVG into the file path (created or truncated).
func SaveSVG(path string, p *plot.Plot, w, h vg.Length) error {
	var b bytes.Buffer
	if err := WriteSVG(&b, p, w, h); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
