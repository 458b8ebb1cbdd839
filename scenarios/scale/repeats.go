package scale

import (
	"fmt"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// turn is a point's repeat, 1 for a run of one.
func turn(p Point) int { return max(p.Repeat, 1) }

// seriesLabel is a point's series in the tables: "grid", or "grid r2"
// for its second repeat.
func seriesLabel(p Point) string {
	if turn(p) > 1 {
		return fmt.Sprintf("%s r%d", p.Series, turn(p))
	}
	return p.Series
}

// findTurn is find for the points of p's repeat.
func findTurn(ps []Point, p Point, driver string, workers int) (Point, bool) {
	i := slices.IndexFunc(ps, func(q Point) bool {
		return q.Series == p.Series && q.Driver == driver && q.Workers == workers && q.Concurrency == p.Concurrency &&
			q.ServerDelayMS == p.ServerDelayMS && turn(q) == turn(p)
	})
	if i < 0 {
		return Point{}, false
	}
	return ps[i], true
}

// median of xs (sorted copy; the mean of the middle two when even), 0
// for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// repeatsSection gives, for a run with REPEATS above 1, each series,
// worker count and concurrency: the bare client's and the workers'
// sends/s over their repeats (median, lowest and highest), the ratio of
// the medians, and the lowest and highest ratio of one turn's pair.
// Empty for a run of one.
func repeatsSection(ps []Point) string {
	if !slices.ContainsFunc(ps, func(p Point) bool { return turn(p) > 1 }) {
		return ""
	}
	type key struct {
		series               string
		delay, workers, conc int
	}
	var keys []key
	direct := map[key][]float64{}
	worker := map[key][]float64{}
	pairs := map[key][]float64{}
	for _, p := range ps {
		if p.Series == SeriesSoak {
			continue
		}
		k := key{p.Series, p.ServerDelayMS, p.Workers, p.Concurrency}
		if p.Driver == results.DriverDirect {
			direct[k] = append(direct[k], p.SendsPerS)
			continue
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		worker[k] = append(worker[k], p.SendsPerS)
		if d, ok := findTurn(ps, p, results.DriverDirect, 1); ok && d.SendsPerS > 0 {
			pairs[k] = append(pairs[k], p.SendsPerS/d.SendsPerS)
		}
	}
	spread := func(xs []float64, f string) string {
		if len(xs) == 0 {
			return "-"
		}
		return fmt.Sprintf(f+" ("+f+"-"+f+", n=%d)", median(xs), slices.Min(xs), slices.Max(xs), len(xs))
	}
	var b strings.Builder
	b.WriteString("\n## Repeats: medians and spread\n\n")
	b.WriteString("Each point ran REPEATS times, in turns at each concurrency (the bare client, then the workers, then the bare client again...). Sends/s: median (lowest-highest, runs); worker / direct: the ratio of the two medians, and the lowest and highest ratio of one turn's pair.\n\n")
	b.WriteString("| series | think ms | workers | concurrency | direct sends/s | worker sends/s | worker / direct (medians) | one turn's ratio |\n|---|---|---|---|---|---|---|---|\n")
	for _, k := range keys {
		d := k
		d.workers = 1
		ratio := "-"
		if md := median(direct[d]); md > 0 {
			ratio = fmt.Sprintf("%.2fx", median(worker[k])/md)
		}
		turns := "-"
		if len(pairs[k]) > 0 {
			turns = fmt.Sprintf("%.2fx-%.2fx", slices.Min(pairs[k]), slices.Max(pairs[k]))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %s | %s | %s |\n", k.series, k.delay, k.workers, k.conc,
			spread(direct[d], "%.1f"), spread(worker[k], "%.1f"), ratio, turns)
	}
	return b.String()
}
