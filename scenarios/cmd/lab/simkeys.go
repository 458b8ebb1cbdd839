package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
)

// simDefaultOut is where ./run.sh simulate writes without OUT: the
// committed summary of issue 27 (results/simulate/summary.md).
const simDefaultOut = "results/simulate"

// simDefaultSeeds is SEEDS's default: as many schedules as the fixed
// seed set ./run.sh test runs (worker/sim's TestSimulate).
const simDefaultSeeds = 10_000

// simMaxSeeds bounds SEEDS (about four days at this machine's rate).
const simMaxSeeds = 100_000_000

// simConfig is what ./run.sh simulate's keys ask for.
type simConfig struct {
	// Seeds schedules, seeds Seed to Seed+Seeds-1; Replay (SEED without
	// SEEDS) replays seed Seed alone.
	Seeds  int
	Seed   uint64
	Replay bool
	// Teeth puts each of testdata/sim-defects's defects back and checks
	// that the simulator catches it.
	Teeth bool
	Out   string
}

// simKey is one key of ./run.sh simulate, on simulate's own config
// (ownKey: simulate starts no stack and shares only OUT with the other
// commands).
type simKey = ownKey[simConfig]

// simKeys are simulate's keys, in usage order.
var simKeys = []simKey{
	{name: "SEEDS", help: "schedules to run, seeds SEED to SEED+SEEDS-1 (the default is the fixed set ./run.sh test runs)",
		allowed: fmt.Sprintf("a whole number 1..%d", simMaxSeeds), show: strconv.Itoa(simDefaultSeeds),
		set: func(c *simConfig, v string) (err error) { c.Seeds, err = parseInt(v, 1, simMaxSeeds); return }},
	{name: "SEED", help: "the first seed of the run; without SEEDS, replay this one seed instead: its schedule and trace, the shrunk schedule and its trace when it fails, and the trace hash of two runs (nothing written)",
		allowed: "a whole number 0..18446744073709551615", show: "0",
		set: func(c *simConfig, v string) (err error) {
			if c.Seed, err = strconv.ParseUint(v, 10, 64); err != nil {
				return fmt.Errorf("not a whole number in range")
			}
			return nil
		}},
	{name: "TEETH", help: "1: also put each defect of testdata/sim-defects back (a temporary git worktree of HEAD per patch, go test -run TestTeethDefectPutBack with SIM_DEFECT) and check that the simulator catches it, and run the planted controls (TestTeethPlantedDefects); about 70 s on 2 cores",
		allowed: "0 or 1", show: "0",
		set: func(c *simConfig, v string) error {
			n, err := parseInt(v, 0, 1)
			c.Teeth = n == 1
			return err
		}},
	{name: "OUT", help: "folder of summary.md and summary.json (" + simDefaultOut + " is the committed one)",
		allowed: "a new or empty folder, or one an earlier run made (it carries " + outdir.Marker + "), holding no other command's results",
		show:    simDefaultOut,
		set: func(c *simConfig, v string) error {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("empty path")
			}
			c.Out = v
			return nil
		}},
}

// simKeyNames are simulate's keys, for messages and the provenance.
func simKeyNames() []string { return ownKeyNames(simKeys) }

// isSimKey reports whether name is one of simulate's own keys (OUT aside,
// which every command takes).
func isSimKey(name string) bool {
	for _, k := range simKeys {
		if k.name == name && name != "OUT" {
			return true
		}
	}
	return false
}

// parseSimArgs builds simulate's config from KEY=VALUE words, then the
// environment for keys no word set (a word wins; an empty variable is
// unset), as parseWords does for the other commands. Errors are
// *UsageError (exit 2, nothing started): a word without '=', an unknown
// key (naming simulate's keys and a likely misspelling), another
// command's key, an invalid value (naming what is allowed), OUT or TEETH
// beside a replay (which writes nothing), a seed range past the last
// seed, or an OUT the lab did not make or that holds another command's
// results.
func parseSimArgs(args []string, getenv func(string) string) (simConfig, error) {
	cfg := simConfig{Seeds: simDefaultSeeds, Out: simDefaultOut}
	sources, err := parseOwnWords("./run.sh simulate", simKeys, &cfg, args, getenv)
	if err != nil {
		return cfg, err
	}
	_, seeds := sources["SEEDS"]
	_, seed := sources["SEED"]
	cfg.Replay = seed && !seeds
	switch {
	case cfg.Replay && sources["OUT"] != "":
		return cfg, &UsageError{Key: "OUT", Value: cfg.Out, Source: sources["OUT"],
			Msg: "SEED without SEEDS replays one seed and writes nothing; allowed: OUT with a run of SEEDS (SEEDS=N, from SEED on)"}
	case cfg.Replay && cfg.Teeth:
		return cfg, &UsageError{Key: "TEETH", Value: "1", Source: sources["TEETH"],
			Msg: "SEED without SEEDS replays one seed; allowed: TEETH=1 with a run (without SEED, or with SEEDS)"}
	case !cfg.Replay && cfg.Seed > math.MaxUint64-uint64(cfg.Seeds-1):
		return cfg, &UsageError{Key: "SEED", Value: strconv.FormatUint(cfg.Seed, 10), Source: sources["SEED"],
			Msg: fmt.Sprintf("SEED+SEEDS-1 is past the last seed; allowed: SEED at most %d with SEEDS=%d", uint64(math.MaxUint64)-uint64(cfg.Seeds-1), cfg.Seeds)}
	}
	if cfg.Replay {
		return cfg, nil
	}
	src := outSource(sources["OUT"])
	if err := outdir.Check(cfg.Out); err != nil {
		return cfg, &UsageError{Key: "OUT", Value: cfg.Out, Source: src, Msg: err.Error()}
	}
	if err := checkOutKind(cfg.Out, simForeignKinds); err != nil {
		return cfg, &UsageError{Key: "OUT", Value: cfg.Out, Source: src, Msg: err.Error()}
	}
	return cfg, nil
}

// outSource names where OUT came from: the default when no word or
// variable set it.
func outSource(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

// simulateUsage is `./run.sh simulate help`: what it does, its keys and
// exit codes.
func simulateUsage(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`./run.sh simulate [SEEDS=N] [SEED=s] [TEETH=1] [OUT=dir]: the deterministic
simulator (worker/sim, docs/testing.md#deterministic-simulation): the worker's
real code against modelled broker, vendor, ledger, clock and crashes, one
generated fault schedule per seed, every invariant checked after every step.
Runs SEEDS schedules (seeds SEED to SEED+SEEDS-1) with a progress line on
stderr and writes OUT/summary.md and OUT/summary.json; a failing seed is
shrunk and printed with its replay command. SEED alone replays one seed.
No Docker. Exit 0 clean, 1 a failing seed (or a defect TEETH did not catch),
2 a bad argument (nothing started), 130 interrupted.

Every key can also be set in the environment; a word wins.

Keys, each shown with its default:
`)
	writeOwnKeys(&b, simKeys)
	b.WriteString(`
Examples: ./run.sh simulate SEEDS=100000 TEETH=1
          ./run.sh simulate SEED=291
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// simKeysMarkdown writes simulate's keys as the second table of the
// generated block in docs/running.md.
func simKeysMarkdown(b *strings.Builder) {
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	b.WriteString("\n`./run.sh simulate` takes only its own keys ([Deterministic simulation](#deterministic-simulation)):\n\n")
	b.WriteString("| Key | `simulate` default | Allowed | Meaning |\n|---|---|---|---|\n")
	for _, k := range simKeys {
		fmt.Fprintf(b, "| `%s` | `%s` | %s | %s |\n", k.name, k.show, cell(k.allowed), cell(k.help))
	}
}
