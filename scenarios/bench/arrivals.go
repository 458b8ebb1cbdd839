package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"
)

// Arrival processes of ARRIVALS.
const (
	ArrivalsBackToBack = "back-to-back" // every message published before the worker starts (the default)
	ArrivalsPoisson    = "poisson"      // exponential gaps of a mean: poisson:<mean gap>
	ArrivalsFixed      = "fixed"        // one gap between every two messages: fixed:<gap>
	ArrivalsFile       = "file"         // gaps read from a file, one a line: file:<path>
)

// Limits of an ARRIVALS gap, in the case's time (before TIME_SCALE).
const (
	MaxArrivalGap = 24 * time.Hour
	// MaxTimeScale bounds TIME_SCALE.
	MaxTimeScale = 1000
	// ArrivalSeed seeds a poisson process: the same COUNT and mean give
	// the same gaps in every run (the bench file records the arrivals).
	ArrivalSeed = 28
)

// Arrivals is a parsed ARRIVALS value: how the measured messages arrive.
// The zero value is back-to-back.
type Arrivals struct {
	Kind string        // one of the Arrivals* kinds; "" = ArrivalsBackToBack
	Gap  time.Duration // poisson: the mean gap; fixed: the gap (case time)
	File []time.Duration
	Spec string // the value as given, for the result file
}

// Paced reports whether messages arrive with gaps (anything but
// back-to-back).
func (a Arrivals) Paced() bool { return a.Kind != "" && a.Kind != ArrivalsBackToBack }

// ParseArrivals parses an ARRIVALS value: back-to-back, poisson:<mean
// gap>, fixed:<gap> or file:<path>. A gap is a Go duration ("45s",
// "1m30s", "750ms") or whole seconds, more than 0 and at most
// MaxArrivalGap. A file holds one gap a line (blank lines and lines
// starting with # skipped) and at least one. Errors name what is wrong.
func ParseArrivals(v string) (Arrivals, error) {
	v = strings.TrimSpace(v)
	kind, arg, hasArg := strings.Cut(v, ":")
	a := Arrivals{Kind: kind, Spec: v}
	switch kind {
	case ArrivalsBackToBack:
		if hasArg {
			return Arrivals{}, fmt.Errorf("back-to-back takes no argument")
		}
	case ArrivalsPoisson, ArrivalsFixed:
		if !hasArg || arg == "" {
			return Arrivals{}, fmt.Errorf("%s needs a gap, e.g. %s:45s", kind, kind)
		}
		g, err := parseGap(arg)
		if err != nil {
			return Arrivals{}, err
		}
		a.Gap = g
	case ArrivalsFile:
		if !hasArg || arg == "" {
			return Arrivals{}, fmt.Errorf("file needs a path, e.g. file:gaps.txt")
		}
		gaps, err := readGapFile(arg)
		if err != nil {
			return Arrivals{}, err
		}
		a.File = gaps
	default:
		return Arrivals{}, fmt.Errorf("unknown arrival process %q", kind)
	}
	return a, nil
}

// parseGap reads one gap: a Go duration or whole seconds.
func parseGap(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		n, nerr := strconv.Atoi(s)
		if nerr != nil {
			return 0, fmt.Errorf("gap %q is not a duration (45s, 750ms) nor whole seconds", s)
		}
		d = time.Duration(n) * time.Second
	}
	if d <= 0 || d > MaxArrivalGap {
		return 0, fmt.Errorf("gap %s is outside (0, %s]", d, MaxArrivalGap)
	}
	return d, nil
}

// readGapFile reads a file of gaps, one a line.
func readGapFile(path string) ([]time.Duration, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read gap file: %w", err)
	}
	var gaps []time.Duration
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		g, err := parseGap(line)
		if err != nil {
			return nil, fmt.Errorf("gap file %s line %d: %w", path, n, err)
		}
		gaps = append(gaps, g)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read gap file: %w", err)
	}
	if len(gaps) == 0 {
		return nil, fmt.Errorf("gap file %s holds no gap", path)
	}
	return gaps, nil
}

// Gaps returns the n gaps before each of n measured messages, divided by
// scale (>= 1): for poisson, exponential draws of mean Gap from a PCG
// seeded with seed (the same seed, n and mean give the same gaps); for a
// file, its gaps in order, repeated from the top when n is larger; nil
// for back-to-back.
func (a Arrivals) Gaps(n, scale int, seed uint64) []time.Duration {
	if !a.Paced() || n <= 0 {
		return nil
	}
	scale = max(scale, 1)
	out := make([]time.Duration, n)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range out {
		var g time.Duration
		switch a.Kind {
		case ArrivalsPoisson:
			g = time.Duration(rng.ExpFloat64() * float64(a.Gap))
		case ArrivalsFixed:
			g = a.Gap
		case ArrivalsFile:
			g = a.File[i%len(a.File)]
		}
		out[i] = g / time.Duration(scale)
	}
	return out
}

// sumGaps is the total of gaps.
func sumGaps(gaps []time.Duration) (total time.Duration) {
	for _, g := range gaps {
		total += g
	}
	return total
}
