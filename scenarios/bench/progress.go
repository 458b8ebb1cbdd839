package bench

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress shows how many of a run's messages the worker has handled.
type Progress interface {
	Set(done int) // done so far, 0..total
	Finish()      // the run is over (done or not)
}

// NewProgress returns a progress bar (schollz/progressbar) when w is a
// terminal, and otherwise plain lines at every 10% ("pooled 10 ms: 525/1050
// handled (50%)"), so CI logs stay readable.
func NewProgress(w io.Writer, label string, total int) Progress {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &barProgress{bar: progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		)}
	}
	return &lineProgress{w: w, label: label, total: total, start: time.Now()}
}

type barProgress struct{ bar *progressbar.ProgressBar }

func (p *barProgress) Set(done int) { _ = p.bar.Set(done) }
func (p *barProgress) Finish()      { _ = p.bar.Finish() }

// lineProgress prints a line each time done crosses another tenth of total.
type lineProgress struct {
	w            io.Writer
	label        string
	total, tenth int // tenth: last tenth printed
	start        time.Time
}

func (p *lineProgress) Set(done int) {
	if p.total <= 0 {
		return
	}
	t := min(done*10/p.total, 10)
	if t <= p.tenth {
		return
	}
	p.tenth = t
	fmt.Fprintf(p.w, "%s: %d/%d handled (%d%%) in %.1f s\n", p.label, done, p.total, t*10, time.Since(p.start).Seconds())
}

func (p *lineProgress) Finish() {}
