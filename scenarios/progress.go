package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
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

// lineCounter counts the complete lines of a file that another process
// appends to (the worker's records.jsonl), reading only what is new.
type lineCounter struct {
	path  string
	off   int64
	lines int
}

// Poll reads what was appended since the last call and returns the number
// of complete lines so far; a file that does not exist yet has 0.
func (c *lineCounter) Poll() (int, error) {
	f, err := os.Open(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return c.lines, fmt.Errorf("open records: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(c.off, io.SeekStart); err != nil {
		return c.lines, fmt.Errorf("seek records: %w", err)
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			// Count only complete lines; a partial last line is read again.
			chunk := buf[:n]
			last := bytes.LastIndexByte(chunk, '\n')
			if last < 0 {
				if n == len(buf) {
					c.off += int64(n) // one huge line in progress: skip ahead
				}
				return c.lines, nil
			}
			c.lines += bytes.Count(chunk[:last+1], []byte{'\n'})
			c.off += int64(last + 1)
			if last+1 < n {
				if _, err := f.Seek(c.off, io.SeekStart); err != nil {
					return c.lines, fmt.Errorf("seek records: %w", err)
				}
			}
		}
		if err == io.EOF {
			return c.lines, nil
		}
		if err != nil {
			return c.lines, fmt.Errorf("read records: %w", err)
		}
	}
}
