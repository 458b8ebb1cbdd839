//go:build !race

package sim

const (
	raceEnabled = false
	raceSeeds   = simSeeds

	raceDeterminismSeeds = determinismSeeds
)
