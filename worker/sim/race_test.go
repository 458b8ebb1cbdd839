//go:build race

package sim

// raceEnabled: the race detector is on (go test -race).
const raceEnabled = true

// raceSeeds is TestSimulate's seed count under the race detector;
// raceDeterminismSeeds TestSameSeedSameTrace's.
const (
	raceSeeds            = 2_000
	raceDeterminismSeeds = 500
)
