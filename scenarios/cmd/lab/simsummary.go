package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/sim"
)

// The files ./run.sh simulate writes into OUT.
const (
	simSummaryMD   = "summary.md"
	simSummaryJSON = "summary.json"
)

// simReport is OUT/summary.json: the run's provenance, what sim.Run
// counted, the failing seeds (the shrunk ones with their schedule and
// trace), the time, and with TEETH=1 the teeth.
type simReport struct {
	Provenance *results.Provenance `json:"provenance"`
	// Verdict is "pass" or "fail"; Pass the same as a bool.
	Verdict string `json:"verdict"`
	Pass    bool   `json:"pass"`
	// FirstSeed and Seeds: the seeds asked for, FirstSeed to
	// FirstSeed+Seeds-1.
	FirstSeed uint64         `json:"first_seed"`
	Seeds     int            `json:"seeds"`
	Schedules int            `json:"schedules"`
	Steps     int            `json:"steps"`
	Checks    int            `json:"invariant_checks"`
	Faults    map[string]int `json:"faults"`
	Outcomes  map[string]int `json:"outcomes"`
	// FailingSeeds counts the seeds that broke an invariant; Failures
	// lists them (Shrunk ones carry their schedule and trace).
	FailingSeeds int          `json:"failing_seeds"`
	Failures     []simFailure `json:"failures"`
	Errors       []string     `json:"simulator_errors,omitempty"`
	// ElapsedS is the wall time of the schedules (TEETH not included), on
	// Workers goroutines.
	ElapsedS      float64      `json:"elapsed_s"`
	SchedulesPerS float64      `json:"schedules_per_s"`
	Workers       int          `json:"workers"`
	Teeth         *teethReport `json:"teeth,omitempty"`
	// TeethError: TEETH could not check (no git, no patch).
	TeethError string `json:"teeth_error,omitempty"`
}

// simFailure is one failing seed.
type simFailure struct {
	Seed      uint64 `json:"seed"`
	Invariant string `json:"invariant"`
	Detail    string `json:"detail"`
	// Step is the step after which it broke (-1 at quiescence); Events
	// the schedule's length.
	Step   int `json:"step"`
	Events int `json:"events"`
	// Shrunk: ShrunkConfig and ShrunkEvents are the smallest schedule
	// found that still breaks Invariant, Trace its trace.
	Shrunk       bool     `json:"shrunk"`
	ShrunkConfig string   `json:"shrunk_config,omitempty"`
	ShrunkEvents []string `json:"shrunk_events,omitempty"`
	Trace        string   `json:"trace,omitempty"`
	Replay       string   `json:"replay"`
}

// replayCommand replays seed.
func replayCommand(seed uint64) string { return fmt.Sprintf("./run.sh simulate SEED=%d", seed) }

func newSimReport(p *results.Provenance, cfg simConfig, sum sim.Summary, elapsed time.Duration, workers int) *simReport {
	r := &simReport{Provenance: p, FirstSeed: cfg.Seed, Seeds: cfg.Seeds, Schedules: sum.Schedules, Steps: sum.Steps,
		Checks: sum.Checks, Faults: sum.Faults, Outcomes: sum.Outcomes, FailingSeeds: len(sum.Failures),
		Failures: []simFailure{}, ElapsedS: elapsed.Seconds(), Workers: workers}
	r.SchedulesPerS = float64(sum.Schedules) / max(elapsed.Seconds(), 1e-3)
	for _, f := range sum.Failures {
		sf := simFailure{Seed: f.Seed, Invariant: f.Violation.Invariant, Detail: f.Violation.Detail, Step: f.Violation.Step,
			Events: f.Events, Shrunk: f.Trace != "", Replay: replayCommand(f.Seed)}
		if sf.Shrunk {
			sf.ShrunkConfig, sf.Trace = f.Shrunk.Config.String(), f.Trace
			for _, e := range f.Shrunk.Events {
				sf.ShrunkEvents = append(sf.ShrunkEvents, e.String())
			}
		}
		r.Failures = append(r.Failures, sf)
	}
	for _, err := range sum.Errors {
		r.Errors = append(r.Errors, err.Error())
	}
	return r
}

// line is the run's figures in one line.
func (r *simReport) line() string {
	return fmt.Sprintf("%d schedules (seeds %d to %d), %d steps, %d invariant checks, %d failing seeds, %d simulator errors; %.1f s (%.0f schedules/s on %d workers)",
		r.Schedules, r.FirstSeed, r.FirstSeed+uint64(max(r.Schedules, 1))-1, r.Steps, r.Checks, r.FailingSeeds, len(r.Errors),
		r.ElapsedS, r.SchedulesPerS, r.Workers)
}

// judge sets the verdict: every schedule ran, none failed, and with TEETH
// every defect was caught and every control held.
func (r *simReport) judge() {
	r.Pass = r.Schedules == r.Seeds && r.FailingSeeds == 0 && len(r.Errors) == 0 && r.TeethError == "" && (r.Teeth == nil || r.Teeth.Pass)
	r.Verdict = map[bool]string{true: "pass", false: "fail"}[r.Pass]
}

// failure is the command's error for a failed verdict (nil on pass): the
// failing seeds (the lowest of each invariant with its replay command),
// the simulator's errors, the defects not caught.
func (r *simReport) failure(out string) error {
	if r.Pass {
		return nil
	}
	var msgs []string
	if r.FailingSeeds > 0 {
		var lines []string
		for _, f := range r.Failures {
			if f.Shrunk {
				lines = append(lines, fmt.Sprintf("  seed %d broke %s; replay: %s", f.Seed, f.Invariant, f.Replay))
			}
		}
		msgs = append(msgs, fmt.Sprintf("%d of %d schedules broke an invariant (the lowest of each, shrunk, in %s):\n%s",
			r.FailingSeeds, r.Schedules, filepath.Join(out, simSummaryMD), strings.Join(lines, "\n")))
	}
	if len(r.Errors) > 0 {
		msgs = append(msgs, fmt.Sprintf("the simulator could not run %d schedules (first: %s)", len(r.Errors), r.Errors[0]))
	}
	if r.TeethError != "" {
		msgs = append(msgs, "TEETH could not check: "+r.TeethError)
	}
	if r.Teeth != nil {
		for _, d := range append(append([]toothResult{}, r.Teeth.Defects...), r.Teeth.Controls...) {
			if !d.OK {
				msgs = append(msgs, fmt.Sprintf("TEETH: %s: %s: %s", d.Name, d.Status, cmp.Or(d.Error, "see the summary's teeth table")))
			}
		}
	}
	return errors.New("simulate: " + strings.Join(msgs, "\nsimulate: "))
}

// write writes OUT/summary.md and OUT/summary.json.
func (r *simReport) write(out string, sum sim.Summary) error {
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", simSummaryJSON, err)
	}
	var b strings.Builder
	b.WriteString("# Simulation summary\n\n")
	b.WriteString(r.Provenance.Header())
	fmt.Fprintf(&b, "Verdict: **%s**. %s.\n\n", r.Verdict, r.line())
	if err := sum.WriteMarkdownBody(&b, r.FirstSeed); err != nil {
		return err
	}
	if r.FailingSeeds > 0 {
		b.WriteString("\n## Replay\n\n")
		for _, f := range r.Failures {
			if f.Shrunk {
				fmt.Fprintf(&b, "- seed %d (%s): `%s`\n", f.Seed, f.Invariant, f.Replay)
			}
		}
		b.WriteString("\nEvery failing seed replays the same way; summary.json lists them all.\n")
	}
	r.writeTeeth(&b)
	if err := os.WriteFile(filepath.Join(out, simSummaryJSON), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", simSummaryJSON, err)
	}
	if err := os.WriteFile(filepath.Join(out, simSummaryMD), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", simSummaryMD, err)
	}
	return nil
}

// writeTeeth writes the teeth's tables (nothing without TEETH=1).
func (r *simReport) writeTeeth(b *strings.Builder) {
	if r.TeethError != "" {
		fmt.Fprintf(b, "\n## Teeth\n\nTEETH could not check: %s\n", r.TeethError)
	}
	t := r.Teeth
	if t == nil {
		return
	}
	cell := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }
	fmt.Fprintf(b, "\n## Teeth: issue 27's and 29's defects put back\n\n"+
		"For each patch of `testdata/sim-defects` (each puts one defect back), a temporary git worktree of HEAD (%.12s) "+
		"with the patch applied ran `SIM_DEFECT=<patch> go test -count=1 -run '^TestTeethDefectPutBack$' ./worker/sim`: "+
		"the patch's named seeds must break its invariant, shrink, and give the same trace in two runs, and the fixed "+
		"seed set `./run.sh test` runs must find the defect.\n\n", t.Commit)
	b.WriteString("| patch | defect | invariant | verdict | fixed seeds that broke it | named seeds: shrunk to, trace hash (the same in two runs) | time |\n|---|---|---|---|---|---|---|\n")
	for _, d := range t.Defects {
		broke := "-"
		if d.Of > 0 {
			broke = fmt.Sprintf("%d of %d", d.Broke, d.Of)
		}
		var seeds []string
		for _, s := range d.Seeds {
			seeds = append(seeds, fmt.Sprintf("%d: %s, %.12s", s.Seed, s.ShrunkTo, s.Hash))
		}
		verdict := d.Status
		if d.Error != "" {
			verdict += ": " + d.Error
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s | %.0f s |\n", d.Name, cell(d.Defect), cmp.Or(d.Invariant, "-"), cell(verdict), broke, strings.Join(seeds, "; "), d.ElapsedS)
	}
	b.WriteString("\nThe controls, in a worktree of the same HEAD without a patch (`go test -run '^(TestTeethPlantedDefects|TestTeethDefectPutBack)$' ./worker/sim`): " +
		"the planted defects must be caught, and every named seed above must pass with every defect fixed.\n\n" +
		"| control | verdict | what the test said |\n|---|---|---|\n")
	for _, c := range t.Controls {
		said := strings.Join(c.Log, " ")
		if c.Error != "" {
			said = strings.TrimSpace(said + " " + c.Error)
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", cell(c.Name), c.Status, cell(cmp.Or(said, "-")))
	}
}
