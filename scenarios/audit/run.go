package audit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/fault"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Defaults of an audit's battery: small enough for a 2-core machine
// (about 5 minutes against a 75 s keep-alive, most of it the idle race's
// pauses).
const (
	DefaultCount     = 200 // measured sends per bench run
	DefaultWarmup    = 10
	DefaultRaceCount = 15 // idle race sends per lane: 3 bursts, 2 pauses around the keep-alive
	DefaultRaceBurst = 5
	// DefaultDir is the audits' parent folder; each audit writes
	// DefaultDir/<worker>-<profile>/.
	DefaultDir = "results/audit"
)

// Outputs names every file an audit writes into its folder: the only
// files a later audit into the same OUT deletes (outdir.Fresh). A folder
// that holds anything else (a user's own file, a scale or matrix run) is
// refused and kept as it is.
var Outputs = outdir.Owned{
	Files: []string{
		"audit.md", "audit.json", "audit.html", "*idle-race*.md", "*idle-race*.json",
		"faults.md", "faults.json", "faults-not-applicable.json",
		"summary.md", "verdict.json", "bench-*.json", ProbesFile,
	},
	Dirs: map[string][]string{"charts": {"*.svg"}, "nginx": {"*.log"}, "pprof": {"*.pprof"}},
}

// ErrFailed is returned by Run when a rule failed; the report is written
// all the same.
var ErrFailed = errors.New("audit failed")

// Options configure Run. Config carries the lab's keys (WORKER, PROFILE,
// COUNT, RTTS, KEEPALIVE_TIMEOUT, SERVER_DELAY_MS...); Out "" writes to
// Dir/<worker>-<profile>.
type Options struct {
	Config bench.Config
	// Dir is the parent folder of an audit without OUT ("" = DefaultDir):
	// audit-clients gives its run folder.
	Dir    string
	Images vendormock.Images
	// RaceCount and RaceBurst size the idle race (0 = the defaults).
	RaceCount, RaceBurst int
	// Catalog is the scenario catalog ("" = fault.DefaultCatalog).
	Catalog string
}

// Folder returns an audit's folder name: "<worker mode>-<profile name>",
// e.g. "node-fetch-alimtalk" or "go-sms".
func Folder(worker, profile string) string {
	if worker == "" {
		worker = vendormock.WorkerGo
	}
	return bench.WorkerMode(worker) + "-" + profile
}

// LoadProfile loads the vendor profile a PROFILE value names (a name such
// as "sms" or a directory, bench.ResolveProfile) and returns it with its
// directory. Errors: no such profile, or the profile's own.
func LoadProfile(name string) (*vendormock.Profile, string, error) {
	pdir, err := bench.ResolveProfile(name)
	if err != nil {
		return nil, "", err
	}
	profile, err := vendormock.LoadProfile(pdir)
	return profile, pdir, err
}

// Run runs the battery and writes the report: the bench at the RTTs of
// Config (two by default), the audit's idle race at the profile's
// keep-alive timeout, and the applicable fault scenarios; then audit.md,
// audit.html and audit.json. Progress lines with an ETA go to w. Errors:
// a bad profile or worker, a folder that cannot be written, ErrFailed
// when a rule failed (after writing the report), ctx's.
func Run(ctx context.Context, o Options, w io.Writer) error {
	cfg := o.Config
	cfg.Images = o.Images // the bench runs on the audit's images
	profile, pdir, err := LoadProfile(cfg.Profile)
	if err != nil {
		return err
	}
	sel, err := vendormock.WorkerImage(cfg.Worker, cfg.Images.Var)
	if err != nil {
		return fmt.Errorf("select worker: %w", err)
	}
	if cfg.Out == "" || cfg.Out == bench.DefaultOut {
		cfg.Out = filepath.Join(cmp.Or(o.Dir, DefaultDir), Folder(sel.Name, profile.Name))
	}
	out, err := filepath.Abs(cfg.Out)
	if err != nil {
		return fmt.Errorf("resolve OUT: %w", err)
	}
	// A fresh folder: an old run's files would be judged as this one's.
	// Only a folder the lab made is emptied (outdir.Fresh); anything else
	// is refused before the stack starts, and nothing is deleted.
	if err := outdir.Fresh(out, "audit-"+time.Now().UTC().Format("20060102T150405"), Outputs); err != nil {
		return fmt.Errorf("audit folder: %w", err)
	}
	cfg.Out = out
	if sel.Contract {
		cfg.Modes, cfg.Baseline = nil, true
	} else {
		cfg.Modes = []string{"pooled"} // the Go worker as deployed (docs/case.md#production-worker)
	}
	keepalive := cfg.KeepaliveTimeout
	if keepalive <= 0 {
		keepalive = profile.Nginx.KeepaliveTimeout
	}
	raceCount, raceBurst := cmp.Or(max(o.RaceCount, 0), DefaultRaceCount), cmp.Or(max(o.RaceBurst, 0), DefaultRaceBurst)
	setting := fault.IdleSettingWorker
	if !sel.Contract {
		setting = "t_minus_rtt_margin"
	}
	race := fault.AuditIdleRace(keepalive, cfg.RTTs, raceCount, raceBurst, setting)
	race.Name = RaceName

	p := newProgress(w, cfg, keepalive, raceCount, raceBurst)
	var runErrs []string
	p.step("bench", fmt.Sprintf("%s at RTT %v ms, %d sends each", strings.Join(cfg.RunModes(), " and "), cfg.RTTs, cfg.Count))
	if err := bench.Run(ctx, cfg, w); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		runErrs = append(runErrs, "bench: "+err.Error())
		fmt.Fprintf(w, "[audit] ERROR: bench: %v (the audit goes on; the report says so)\n", err)
	}
	p.step("faults and idle race", fmt.Sprintf("the catalog's applicable fault scenarios, then the idle race at keep-alive %s (%d sends per RTT)", keepalive, raceCount))
	err = fault.Run(ctx, fault.Options{
		Scenario: "all", Catalog: o.Catalog, Out: out, Profile: pdir, KeepaliveTimeout: cfg.KeepaliveTimeout,
		Images: o.Images, Session: cfg.Session, Worker: sel.Name, Race: race, Provenance: cfg.Provenance,
		WorkDir: filepath.Join(workRoot(), ".lab", "audit", filepath.Base(out)+"-"+time.Now().UTC().Format("20060102T150405")),
	}, w)
	if err != nil && !errors.Is(err, fault.ErrFailed) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		runErrs = append(runErrs, "faults: "+err.Error())
		fmt.Fprintf(w, "[audit] ERROR: faults: %v (the audit goes on; the report says so)\n", err)
	}
	p.step("probes", "the client's idle timeout, POST replay and response timeout, measured from nginx's log and WireMock's journal on a stack of their own")
	if err := runProbes(ctx, o, cfg, sel, pdir, keepalive, out, w); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		runErrs = append(runErrs, "probes: "+err.Error())
		fmt.Fprintf(w, "[audit] ERROR: probes: %v (the audit goes on; the report says so)\n", err)
	}
	p.step("report", "audit.md, audit.html")
	in, err := Load(out, sel.Name, profile.Name, keepalive.Seconds())
	if err != nil {
		return err
	}
	in.Errors = append(in.Errors, runErrs...)
	rep, err := NewReport(out, in, time.Now().UTC().Format(time.RFC3339))
	if err != nil {
		return err
	}
	rep.Provenance = cfg.Provenance
	if err := Write(out, rep); err != nil {
		return err
	}
	p.done()
	fmt.Fprintf(w, "\n%s\n", verdictLine(rep))
	for _, r := range rep.Rules {
		fmt.Fprintf(w, "  %-4s %s: %s\n", r.Verdict, r.Name, r.Evidence)
	}
	fmt.Fprintf(w, "report: %s, %s\n", filepath.Join(out, MarkdownFile), filepath.Join(out, HTMLFile))
	if !rep.Pass {
		return fmt.Errorf("%w: worker %s on profile %s (see %s)", ErrFailed, sel.Name, profile.Name, filepath.Join(out, MarkdownFile))
	}
	return nil
}

// Rebuild rewrites the report of an audit folder from its result files
// (no stack), for the worker and the profile it was run with.
func Rebuild(dir, worker, profile string, keepalive time.Duration) (Report, error) {
	in, err := Load(dir, worker, profile, keepalive.Seconds())
	if err != nil {
		return Report{}, err
	}
	rep, err := NewReport(dir, in, time.Now().UTC().Format(time.RFC3339))
	if err != nil {
		return Report{}, err
	}
	return rep, Write(dir, rep)
}

// workRoot is where the fault runner's work files go: the repository root
// (lab.FindRepoRoot, as the bench's .lab/runs), else the system's
// temporary folder.
func workRoot() string {
	if root, ok := lab.FindRepoRoot(); ok {
		return root
	}
	return os.TempDir()
}
