package results

import (
	"math"

	"gonum.org/v1/gonum/stat"
)

// Percentile returns the q-quantile (0..1) of sorted ascending data by the
// empirical (nearest-rank) definition: gonum's stat.Quantile with
// stat.Empirical, the smallest sample x such that at least q of the samples
// are <= x. It returns NaN for empty data and panics on unsorted data (as
// gonum does).
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return stat.Quantile(q, stat.Empirical, sorted, nil)
}
