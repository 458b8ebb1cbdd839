package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// DefaultCatalog is the scenario catalog's folder, relative to the
// repository root.
const DefaultCatalog = "scenarios/catalog"

// ErrFailed is returned by Run when a scenario did not pass (its Verdict
// says why); the results are written all the same.
var ErrFailed = errors.New("scenario failed")

// Options configure Run.
type Options struct {
	Scenario         string // a scenario name or "all"
	Catalog          string // catalog folder; "" = DefaultCatalog (repo-relative)
	Out              string // results folder
	Profile          string // vendor profile folder
	KeepaliveTimeout time.Duration
	// Count overrides the idle race's sends per lane (0 = the file's).
	Count   int
	Images  vendormock.Images
	WorkDir string // "" = <repository>/.lab/faults/<time> (git-ignored)
	// Worker is the worker under test (WORKER, vendormock.WorkerImage;
	// "" = go). Scenarios that do not apply to it or to the profile
	// (Scenario.Applies) are left out and listed in NotApplicableFile.
	Worker string
	// Race, when set, is the idle race to run instead of the catalog's
	// (the audit's: AuditIdleRace).
	Race *Scenario
	// Provenance is the invocation's commit, command line, machine,
	// images and date (filled by the lab command); faults.json and every
	// idle race's file carry it. nil for none.
	Provenance *results.Provenance
	// Session labels the run's containers (vendormock.Options.Session).
	Session string
	// Lanes is how many stacks run scenarios side by side (1..MaxLanes;
	// 0 or 1 = one after the other). Each cluster size takes a lane; the
	// one-node scenarios share the rest (planLanes).
	Lanes int
	// Timings is an earlier run's faults.json whose duration_s plan the
	// lanes ("" = <repository>/results/faults.json, the committed run);
	// scenarios it lacks get an estimate (laneEstimates).
	Timings string
}

// ResolveCatalog finds the catalog folder: dir as given when it exists,
// else relative to the repository root (lab.FindRepoRoot).
func ResolveCatalog(dir string) (string, error) {
	if dir == "" {
		dir = DefaultCatalog
	}
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return filepath.Abs(dir)
	}
	if root, ok := lab.FindRepoRoot(); ok && !filepath.IsAbs(dir) {
		if cand := filepath.Join(root, dir); isDir(cand) {
			return cand, nil
		}
	}
	return "", fmt.Errorf("find catalog: %s is not a directory", dir)
}

// List writes one line per scenario of the catalog: name, kind/tool and
// description. Errors: any catalog file that does not load (each named with
// its field), after listing the ones that do.
func List(catalog string, w io.Writer) error {
	dir, err := ResolveCatalog(catalog)
	if err != nil {
		return err
	}
	c, err := ReadCatalog(dir)
	if err != nil {
		return err
	}
	scs := c.Scenarios
	width := 0
	for _, sc := range scs {
		width = max(width, len(sc.Name))
	}
	for _, sc := range scs {
		if _, err := fmt.Fprintf(w, "%-*s  %-9s  %-9s  %s\n", width, sc.Name, sc.Kind, sc.Tool, sc.Description); err != nil {
			return err
		}
	}
	if err := c.Err(); err != nil {
		return fmt.Errorf("list catalog: %d file(s) do not load: %w", len(c.Broken), err)
	}
	return nil
}

// CheckName reads the catalog and checks that name can run: "all" with
// every file valid, or a valid scenario's name (Catalog.Select). Errors
// name the known scenarios and the files that do not load.
func CheckName(catalog, name string) error {
	dir, err := ResolveCatalog(catalog)
	if err != nil {
		return err
	}
	c, err := ReadCatalog(dir)
	if err != nil {
		return err
	}
	_, err = c.Select(name)
	return err
}

// Run runs the selected scenarios on one stack: the fault scenarios in
// catalog order, then the idle race. It writes OUT/faults.json (+ .md) and
// OUT/<race>.json (+ .md, charts/<race>.svg; idle-race.json for idle-race), adds their sections to
// OUT/summary.md and prints the tables to w. Errors: ErrFailed when a
// scenario did not pass (after writing everything), stack or Docker errors.
func Run(ctx context.Context, o Options, w io.Writer) (err error) {
	dir, err := ResolveCatalog(o.Catalog)
	if err != nil {
		return err
	}
	c, err := ReadCatalog(dir)
	if err != nil {
		return err
	}
	sel, err := c.Select(o.Scenario)
	if err != nil {
		return err
	}
	worker, err := vendormock.WorkerImage(o.Worker, o.Images.Var)
	if err != nil {
		return fmt.Errorf("select worker: %w", err)
	}
	profileName := "" // unknown: every scenario's profiles apply
	pdir := o.Profile
	if pdir == "" {
		pdir = vendormock.DefaultProfileDir
	}
	if p, perr := vendormock.LoadProfile(pdir); perr == nil {
		profileName = p.Name
	}
	if o.Race != nil {
		sel = append(slices.DeleteFunc(sel, func(sc *Scenario) bool { return sc.Kind == KindIdleRace }), o.Race)
	}
	var na []NotApplicable
	sel = slices.DeleteFunc(sel, func(sc *Scenario) bool {
		ok, why := sc.Applies(worker.Name, profileName)
		if !ok {
			na = append(na, NotApplicable{Name: sc.Name, Reason: why})
			fmt.Fprintf(w, "[fault] %s: not applicable to worker %s, profile %s: %s\n", sc.Name, worker.Name, profileName, why)
		}
		return !ok
	})
	for _, b := range c.Broken {
		fmt.Fprintf(w, "[fault] WARNING: %s does not load (not asked for, skipped): %v\n", filepath.Base(b.File), b.Err)
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return fmt.Errorf("resolve OUT: %w", err)
	}
	if o.WorkDir == "" {
		o.WorkDir = filepath.Join(lab.RepoRoot(), ".lab", "faults", time.Now().UTC().Format("20060102T150405"))
	}
	if err := outdir.Claim(out, "faults-"+filepath.Base(o.WorkDir)); err != nil {
		return err
	}
	if err := writeNotApplicable(out, na, o.Provenance); err != nil {
		return err
	}
	if len(sel) == 0 {
		return nil
	}
	fmt.Fprintf(w, "[fault] %d scenario(s): %s; worker %s; work dir %s\n", len(sel), names(sel), worker.Name, o.WorkDir)
	var (
		mu       sync.Mutex // verdicts, failed and the files under out
		verdicts []Verdict
		failed   []string
	)
	// One stack per lane: each cluster size has a lane (broker_nodes 3:
	// rabbitmq-1 .. rabbitmq-3), the one-node scenarios are spread over
	// the other lanes (Options.Lanes), fault scenarios before idle races.
	// The lanes run side by side; faults.json (+ .md) is rewritten, in
	// catalog order, as each lane's fault verdicts come in, and once more
	// at the end.
	writeFaults := func() error {
		if len(verdicts) == 0 {
			return nil
		}
		slices.SortStableFunc(verdicts, func(a, b Verdict) int {
			return slices.IndexFunc(sel, func(sc *Scenario) bool { return sc.Name == a.Name }) -
				slices.IndexFunc(sel, func(sc *Scenario) bool { return sc.Name == b.Name })
		})
		return WriteFaults(out, verdicts, o.Provenance, w)
	}
	lanes := planLanes(sel, o.Lanes, laneEstimates(pastDurations(o.Timings, w), o.Count))
	if len(lanes) > 1 {
		fmt.Fprintf(w, "[fault] %d lanes side by side, each on a stack of its own (scenarios, estimated s): %s\n", len(lanes), laneNames(lanes))
		w = &lockedWriter{W: w}
	}
	errs := make([]error, len(lanes))
	var wg sync.WaitGroup
	for i, l := range lanes {
		lo, lw := o, w
		if len(lanes) > 1 {
			lo.WorkDir = filepath.Join(o.WorkDir, l.name)
			lw = lab.PrefixWriter{W: w, Prefix: "[" + l.name + "] "}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			vs, fs, err := runGroup(ctx, lo, worker, l.nodes, l.scs, out, lw, &mu, func(vs []Verdict) error {
				verdicts = append(verdicts, vs...)
				return writeFaults()
			})
			mu.Lock()
			defer mu.Unlock()
			if l.nodes > 1 {
				verdicts = append(verdicts, vs...)
			}
			failed = append(failed, fs...)
			errs[i] = err
		}()
		if len(lanes) == 1 || o.Lanes <= 1 {
			wg.Wait() // one lane at a time, in order, as before lanes
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := writeFaults(); err != nil {
		return err
	}
	at := func(entry string) int { // catalog order; an entry may carry a note after its name
		name, _, _ := strings.Cut(entry, " (")
		return slices.IndexFunc(sel, func(sc *Scenario) bool { return sc.Name == name })
	}
	slices.SortStableFunc(failed, func(a, b string) int { return at(a) - at(b) })
	if len(failed) > 0 {
		return fmt.Errorf("%w: %s (see %s)", ErrFailed, strings.Join(failed, ", "), out)
	}
	return nil
}

// brokerGroups returns the stack sizes sel needs, in run order: each
// cluster size descending, then 1 (the scenarios without broker_nodes
// and every idle race).
func brokerGroups(sel []*Scenario) []int {
	var gs []int
	for _, sc := range sel {
		gs = append(gs, sc.stackNodes())
	}
	slices.Sort(gs)
	slices.Reverse(gs)
	return slices.Compact(gs)
}

// stackNodes is the broker nodes of the stack sc runs on (1 for one).
func (sc *Scenario) stackNodes() int {
	if sc.Kind == KindFault && sc.BrokerNodes > 1 {
		return sc.BrokerNodes
	}
	return 1
}

// runGroup starts a runner of nodes broker nodes, runs the fault
// scenarios of sel on that stack, then (one node) hands their verdicts to
// faultsDone and runs the idle races, and removes the stack. mu guards
// what lanes share: faultsDone runs under it, and so does the writing of
// each idle race's files under out. It returns
// the fault verdicts and the names of the scenarios that failed; errors:
// the stack's, a cancelled ctx, faultsDone's, an idle race that could not
// run, WriteIdleRace's.
func runGroup(ctx context.Context, o Options, worker vendormock.WorkerSelection, nodes int, sel []*Scenario, out string, w io.Writer,
	mu *sync.Mutex, faultsDone func([]Verdict) error) (verdicts []Verdict, failed []string, err error) {
	workDir := o.WorkDir
	if nodes > 1 {
		workDir = filepath.Join(o.WorkDir, fmt.Sprintf("cluster-%d", nodes))
		fmt.Fprintf(w, "[fault] a stack with a %d-node RabbitMQ cluster for the scenarios with broker_nodes %d\n", nodes, nodes)
	}
	r, err := NewRunner(ctx, RunnerOptions{Profile: o.Profile, Images: o.Images, Session: o.Session, KeepaliveTimeout: o.KeepaliveTimeout,
		WorkDir: workDir, Log: w, Worker: worker, BrokerNodes: nodes, Out: o.Out})
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if cerr := r.Close(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close stack: %w", cerr))
		}
	}()
	for _, sc := range sel {
		if sc.Kind != KindFault || sc.stackNodes() != nodes {
			continue
		}
		v, err := r.RunScenario(ctx, sc)
		if err != nil {
			if ctx.Err() != nil {
				return verdicts, failed, ctx.Err()
			}
			// One broken scenario must not hide the others' results.
			v = Verdict{Name: sc.Name, Tool: sc.Tool, Fault: sc.Fault, Failures: []string{err.Error()},
				Observed: map[outcome.Outcome]int{}, Records: map[outcome.Outcome]int{}}
			fmt.Fprintf(w, "[fault] %s: ERROR: %v\n", sc.Name, err)
		}
		switch {
		case v.Void != "":
			failed = append(failed, sc.Name+" (void: the lab was late, run it again)")
		case !v.Pass:
			failed = append(failed, sc.Name)
		}
		verdicts = append(verdicts, v)
	}
	if nodes != 1 {
		return verdicts, failed, nil
	}
	mu.Lock()
	err = faultsDone(verdicts)
	mu.Unlock()
	if err != nil {
		return verdicts, failed, err
	}
	for _, sc := range sel {
		if sc.Kind != KindIdleRace {
			continue
		}
		res, err := r.RunIdleRace(ctx, sc, o.Count)
		if err != nil {
			return verdicts, failed, fmt.Errorf("idle race %s: %w", sc.Name, err)
		}
		res.Provenance = o.Provenance
		mu.Lock()
		err = WriteIdleRace(out, res, w)
		mu.Unlock()
		if err != nil {
			return verdicts, failed, err
		}
		if !res.Pass {
			failed = append(failed, sc.Name)
		}
	}
	return verdicts, failed, nil
}

func laneNames(lanes []stackLane) string {
	var ns []string
	for _, l := range lanes {
		ns = append(ns, fmt.Sprintf("%s (%d, ~%.0f s)", l.name, len(l.scs), l.est.Seconds()))
	}
	return strings.Join(ns, ", ")
}

// pastDurations reads the durations that plan the lanes (Options.Timings);
// a file it cannot read is reported on w and the plan uses estimates.
func pastDurations(path string, w io.Writer) map[string]time.Duration {
	if path == "" {
		root, ok := lab.FindRepoRoot()
		if !ok {
			return nil
		}
		path = filepath.Join(root, "results", "faults.json")
	}
	ds, err := ReadDurations(path)
	if err != nil {
		fmt.Fprintf(w, "[fault] lanes planned without earlier durations: %v\n", err)
	}
	return ds
}

func names(scs []*Scenario) string {
	var ns []string
	for _, sc := range scs {
		ns = append(ns, sc.Name)
	}
	return strings.Join(ns, ", ")
}

// isDir reports whether p is a directory.
func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
