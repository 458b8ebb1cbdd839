package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/sim"
)

// simulateHelp follows usage in `lab help`.
const simulateHelp = `
The simulation (./run.sh simulate [SEEDS=N] [SEED=s] [TEETH=1] [OUT=dir]): the
worker's real code against modelled broker, vendor, ledger, clock and crashes
(worker/sim), SEEDS generated fault schedules checked step by step; writes
OUT/summary.md and summary.json (OUT default results/simulate). SEED alone
replays one seed; TEETH=1 also puts each defect of testdata/sim-defects back
and checks that it is caught. No Docker (./run.sh simulate help lists its keys).
`

// runSimulate is `lab simulate`: with SEED alone it replays that seed
// (replaySeed); otherwise it runs SEEDS schedules from SEED (sim.Run, all
// cores) with a progress line on stderr, then with TEETH=1 checks the
// teeth (teeth.run), and writes OUT/summary.md and OUT/summary.json with
// the run's provenance. It returns a *UsageError for a bad argument
// (nothing started), ctx's error when interrupted (nothing written), and
// an error naming the lowest failing seeds and their replay commands, or
// the defects not caught, after the files are written.
func runSimulate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseSimArgs(args, getenv)
	if err != nil {
		return err
	}
	if cfg.Replay {
		return replaySeed(stdout, cfg.Seed, sim.Options{})
	}
	prov := newProvenance(time.Now(), "simulate", args, simKeyNames(), getenv, vendormock.Images{})
	var th *teeth
	if cfg.Teeth {
		root, ok := vendormock.FindRepoRoot()
		if !ok {
			return errors.New("simulate: TEETH=1 needs the lab's checkout (no go.mod above the working directory)")
		}
		th = &teeth{Repo: root, Patches: filepath.Join(root, "testdata", "sim-defects"), Log: stderr}
	}
	if err := outdir.Claim(cfg.Out, prov.RunID); err != nil {
		return err
	}
	workers := runtime.GOMAXPROCS(0)
	last := cfg.Seed + uint64(cfg.Seeds-1)
	fmt.Fprintf(stdout, "simulate %s: %d schedules (seeds %d to %d) on %d workers; summary into %s/\n", prov.RunID, cfg.Seeds, cfg.Seed, last, workers, cfg.Out)
	prog := newSimProgress(stderr, cfg.Seeds)
	start := time.Now()
	sum, err := sim.Run(ctx, sim.Options{Seeds: cfg.Seeds, FirstSeed: cfg.Seed, Workers: workers, Progress: prog.update})
	elapsed := time.Since(start)
	prog.finish(sum.Schedules, len(sum.Failures))
	if err != nil {
		fmt.Fprintf(stderr, "simulate: stopped after %d of %d schedules; nothing written\n", sum.Schedules, cfg.Seeds)
		return fmt.Errorf("simulate: %w", err)
	}
	rep := newSimReport(prov, cfg, sum, elapsed, workers)
	fmt.Fprintf(stdout, "simulate: %s\n", rep.line())
	if th != nil {
		if rep.Teeth, err = th.run(ctx); err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(stderr, "simulate: stopped during TEETH; nothing written\n")
				return fmt.Errorf("simulate: %w", ctx.Err())
			}
			rep.TeethError = err.Error()
		}
	}
	rep.judge()
	if err := rep.write(cfg.Out, sum); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "verdict: %s\nresults of this run: %s/ (summary.md, summary.json)\n", rep.Verdict, cfg.Out)
	return rep.failure(cfg.Out)
}

// replaySeed runs seed's schedule twice with opt (sim.Run's defaults, as
// the run that found the seed, unless a test plants a defect) and prints
// it: the schedule, the first run's trace, its verdict, the shrunk
// schedule and its trace when it broke an invariant, and both runs' trace
// hashes. Its error names the broken invariant, or says the two runs
// differed.
func replaySeed(w io.Writer, seed uint64, opt sim.Options) error {
	s := sim.Generate(seed)
	a, b := sim.RunSchedule(s, opt), sim.RunSchedule(s, opt)
	var out strings.Builder
	fmt.Fprintf(&out, "seed %d: schedule of %d events, %s:\n", seed, len(s.Events), s.Config)
	for i, e := range s.Events {
		fmt.Fprintf(&out, "  %2d %s\n", i, e)
	}
	fmt.Fprintf(&out, "\ntrace:\n%s\n\n", a.Trace.String())
	switch {
	case a.Err != nil:
		fmt.Fprintf(&out, "seed %d: the simulator failed: %v\n", seed, a.Err)
	case a.Violation == nil:
		fmt.Fprintf(&out, "seed %d: no invariant broken (%d steps, %d invariant checks)\n", seed, a.Steps, a.Checks)
	default:
		sh, tr := sim.Shrink(s, opt, a.Violation.Invariant)
		fmt.Fprintf(&out, "%s\n", sim.Failure{Seed: seed, Violation: *a.Violation, Events: len(s.Events), Shrunk: sh, Trace: tr})
	}
	same := "the same trace twice"
	if a.Hash() != b.Hash() {
		same = "TWO DIFFERENT TRACES: the simulator is not deterministic"
	}
	fmt.Fprintf(&out, "trace hash: %s (first run), %s (second run): %s\n", a.Hash(), b.Hash(), same)
	if _, err := io.WriteString(w, out.String()); err != nil {
		return fmt.Errorf("write replay: %w", err)
	}
	switch {
	case a.Err != nil:
		return fmt.Errorf("simulate: seed %d: the simulator failed: %w", seed, a.Err)
	case a.Hash() != b.Hash():
		return fmt.Errorf("simulate: seed %d gave two different traces in two runs", seed)
	case a.Violation != nil:
		return fmt.Errorf("simulate: seed %d broke %s (its shrunk schedule and trace above)", seed, a.Violation.Invariant)
	}
	return nil
}

// simProgress is simulate's progress line on stderr: schedules done,
// failing seeds, rate and ETA; rewritten in place about five times a
// second on a terminal, else a line at every tenth and at least every
// 30 s (CI logs stay short).
type simProgress struct {
	w           io.Writer
	term        bool
	total       int
	start, last time.Time
	tenth       int
}

func newSimProgress(w io.Writer, total int) *simProgress {
	f, ok := w.(*os.File)
	now := time.Now()
	return &simProgress{w: w, term: ok && term.IsTerminal(int(f.Fd())), total: total, start: now, last: now}
}

// update is sim.Options.Progress (called one at a time).
func (p *simProgress) update(done, failed int) {
	now := time.Now()
	tenth := done * 10 / max(p.total, 1)
	switch {
	case p.term && now.Sub(p.last) >= 200*time.Millisecond:
		fmt.Fprintf(p.w, "\r%s\x1b[K", p.line(done, failed, now))
	case !p.term && (tenth > p.tenth || now.Sub(p.last) >= 30*time.Second):
		fmt.Fprintln(p.w, p.line(done, failed, now))
	default:
		return
	}
	p.last, p.tenth = now, tenth
}

// finish prints the last line.
func (p *simProgress) finish(done, failed int) {
	if p.term {
		fmt.Fprintf(p.w, "\r%s\x1b[K\n", p.line(done, failed, time.Now()))
	} else if done*10/max(p.total, 1) > p.tenth || done == 0 {
		fmt.Fprintln(p.w, p.line(done, failed, time.Now()))
	}
}

func (p *simProgress) line(done, failed int, now time.Time) string {
	el := now.Sub(p.start)
	rate := float64(done) / max(el.Seconds(), 1e-3)
	eta := "-"
	if done > 0 && done < p.total {
		eta = time.Duration(float64(p.total-done) / rate * float64(time.Second)).Round(time.Second).String()
	} else if done >= p.total {
		return fmt.Sprintf("[simulate] %d/%d schedules (100%%), %d failing, %.0f/s, done in %s",
			done, p.total, failed, rate, el.Round(time.Second))
	}
	return fmt.Sprintf("[simulate] %d/%d schedules (%d%%), %d failing, %.0f/s, ETA %s",
		done, p.total, done*100/max(p.total, 1), failed, rate, eta)
}
