package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/gotest"
)

// teeth checks the simulator's teeth (./run.sh simulate TEETH=1): for each
// patch of Patches (issue 27's defects, testdata/sim-defects), a temporary
// git worktree of Repo's HEAD with the patch applied, and in it
// `SIM_DEFECT=<patch> go test -count=1 -run '^TestTeethDefectPutBack$'
// ./worker/sim`, which passes when the simulator catches the defect put
// back; then the controls in a worktree of HEAD without a patch: the
// planted defects (TestTeethPlantedDefects) and the defect seeds passing
// with every defect fixed (TestTeethDefectPutBack without SIM_DEFECT).
type teeth struct {
	Repo    string // a git checkout (the lab's root)
	Patches string // folder of the *.patch files
	Go      string // the go command ("" = go)
	TempDir string // where the worktrees go ("" = the system's temporary folder)
	Log     io.Writer
}

// The teeth's statuses.
const (
	toothCaught    = "caught"
	toothMissed    = "NOT caught"
	toothNoApply   = "patch does not apply"
	toothPassed    = "pass"
	toothFailed    = "FAIL"
	defectTest     = "TestTeethDefectPutBack"
	plantedTest    = "TestTeethPlantedDefects"
	simPackage     = "./worker/sim"
	gitCallTimeout = 2 * time.Minute
)

// teethReport is what TEETH found: one row per patch and per control.
type teethReport struct {
	// Commit is the HEAD every worktree was made of.
	Commit   string        `json:"commit"`
	Defects  []toothResult `json:"defects"`
	Controls []toothResult `json:"controls"`
	// Pass: every defect caught and every control as it should be.
	Pass bool `json:"pass"`
}

// toothResult is one patch's or one control's outcome.
type toothResult struct {
	Name   string `json:"name"`
	Defect string `json:"defect,omitempty"` // the README's description
	Status string `json:"status"`
	OK     bool   `json:"ok"`
	// Invariant, Broke and Of: "with <patch> put back, Broke of the Of
	// fixed seeds broke Invariant" (the test's last log line).
	Invariant string      `json:"invariant,omitempty"`
	Broke     int         `json:"seeds_broke,omitempty"`
	Of        int         `json:"of_seeds,omitempty"`
	Seeds     []toothSeed `json:"seeds,omitempty"`
	Log       []string    `json:"log"`
	ElapsedS  float64     `json:"elapsed_s"`
	Error     string      `json:"error,omitempty"`
}

// toothSeed is one named seed of a patch: it broke the invariant, shrank
// to Shrunk of Events events, and two runs gave trace Hash.
type toothSeed struct {
	Seed           uint64 `json:"seed"`
	Shrunk, Events int    `json:"-"`
	ShrunkTo       string `json:"shrunk_to"`
	Hash           string `json:"trace_hash"`
}

var (
	putBackRE  = regexp.MustCompile(`with (\S+) put back, (\d+) of the (\d+) fixed seeds broke (\S+)`)
	toothSeeds = regexp.MustCompile(`^seed (\d+), .*, shrunk to (\d+) of (\d+) events, trace (\S+) twice$`)
)

// run checks every patch, then the controls. Its error is ctx's, or one
// that stopped it from checking (no patch, no git, no HEAD); a patch that
// does not apply or a defect not caught is a row, not an error.
func (t teeth) run(ctx context.Context) (*teethReport, error) {
	patches, err := filepath.Glob(filepath.Join(t.Patches, "*.patch"))
	if err != nil || len(patches) == 0 {
		return nil, fmt.Errorf("teeth: no *.patch in %s", t.Patches)
	}
	slices.Sort(patches)
	head, err := t.git(ctx, t.Repo, "rev-parse", "HEAD")
	if err != nil {
		return nil, fmt.Errorf("teeth: read HEAD of %s: %w", t.Repo, err)
	}
	rep := &teethReport{Commit: strings.TrimSpace(head), Pass: true}
	about := t.descriptions()
	for i, p := range patches {
		name := strings.TrimSuffix(filepath.Base(p), ".patch")
		fmt.Fprintf(t.Log, "[simulate] teeth %d/%d: %s put back (a worktree of HEAD %.7s)\n", i+1, len(patches), name, rep.Commit)
		r := t.defect(ctx, p, name)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.Defect = about[name]
		fmt.Fprintf(t.Log, "[simulate] teeth %d/%d: %s: %s%s (%.0f s)\n", i+1, len(patches), name, r.Status, r.found(), r.ElapsedS)
		rep.Defects = append(rep.Defects, r)
		rep.Pass = rep.Pass && r.OK
	}
	fmt.Fprintf(t.Log, "[simulate] teeth: the controls (the same HEAD, no patch)\n")
	controls, err := t.controls(ctx)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		controls = append(controls, toothResult{Name: "controls", Status: toothFailed, Error: err.Error()})
	}
	for _, c := range controls {
		fmt.Fprintf(t.Log, "[simulate] teeth control %s: %s\n", c.Name, c.Status)
		rep.Pass = rep.Pass && c.OK
	}
	rep.Controls = controls
	return rep, nil
}

// found is ", N of M seeds broke INV" when the test said so.
func (r toothResult) found() string {
	if r.Of == 0 {
		return ""
	}
	return fmt.Sprintf(": %d of %d fixed seeds broke %s", r.Broke, r.Of, r.Invariant)
}

// defect puts patch back in a worktree of HEAD and runs its test there.
func (t teeth) defect(ctx context.Context, patch, name string) toothResult {
	start := time.Now()
	r := toothResult{Name: name, Status: toothMissed}
	err := t.inWorktree(ctx, func(dir string) error {
		if out, err := t.command(ctx, dir, "git", "apply", patch).CombinedOutput(); err != nil {
			r.Status = toothNoApply
			shown := patch
			if rel, err := filepath.Rel(t.Repo, patch); err == nil && !strings.HasPrefix(rel, "..") {
				shown = rel
			}
			return fmt.Errorf("%s does not apply to HEAD (git apply: %s): re-make it against HEAD with git diff, the defect and nothing else (%s says how)",
				shown, oneLine(out, err), filepath.Join(filepath.Dir(shown), "README.md"))
		}
		events, err := t.goTest(ctx, dir, name, defectTest)
		r.Log = events.Logs(defectTest)
		for _, l := range r.Log {
			if m := putBackRE.FindStringSubmatch(l); m != nil && m[1] == name {
				r.Broke, _ = strconv.Atoi(m[2])
				r.Of, _ = strconv.Atoi(m[3])
				r.Invariant = m[4]
			}
			if m := toothSeeds.FindStringSubmatch(l); m != nil {
				s := toothSeed{Hash: m[4]}
				s.Seed, _ = strconv.ParseUint(m[1], 10, 64)
				s.Shrunk, _ = strconv.Atoi(m[2])
				s.Events, _ = strconv.Atoi(m[3])
				s.ShrunkTo = m[2] + " of " + m[3] + " events"
				r.Seeds = append(r.Seeds, s)
			}
		}
		if err != nil {
			return fmt.Errorf("go test with %s put back failed: %s", name, events.LastLines(err))
		}
		if r.Broke == 0 {
			return fmt.Errorf("go test passed but said no seed broke an invariant with %s put back", name)
		}
		r.Status, r.OK = toothCaught, true
		return nil
	})
	if err != nil {
		r.Error = err.Error()
	}
	r.ElapsedS = time.Since(start).Seconds()
	return r
}

// controls runs the planted defects and the defect seeds without a patch.
func (t teeth) controls(ctx context.Context) ([]toothResult, error) {
	var out []toothResult
	err := t.inWorktree(ctx, func(dir string) error {
		start := time.Now()
		events, err := t.goTest(ctx, dir, "", plantedTest+"|"+defectTest)
		el := time.Since(start).Seconds()
		for _, name := range events.Subtests(plantedTest) {
			r := toothResult{Name: strings.ReplaceAll(strings.TrimPrefix(name, plantedTest+"/"), "_", " ") + " (planted)",
				Status: toothMissed, Log: events.Logs(name), ElapsedS: el}
			if events.Passed(name) {
				r.Status, r.OK = toothCaught, true
			}
			out = append(out, r)
		}
		named, passed := events.Subtests(defectTest), 0
		for _, n := range named {
			if events.Passed(n) {
				passed++
			}
		}
		r := toothResult{Name: "the defect seeds pass with every defect fixed", Status: toothFailed,
			Log: append([]string{fmt.Sprintf("%d of the %d named seeds passed without their patch", passed, len(named))}, events.Logs(defectTest)...), ElapsedS: el}
		if events.Passed(defectTest) && len(named) > 0 {
			r.Status, r.OK = toothPassed, true
		}
		out = append(out, r)
		if len(events.Subtests(plantedTest)) == 0 {
			return fmt.Errorf("go test ran no %s: %s", plantedTest, events.LastLines(err))
		}
		if err != nil {
			return fmt.Errorf("go test of the controls failed: %s", events.LastLines(err))
		}
		return nil
	})
	return out, err
}

// inWorktree makes a git worktree of HEAD in a new temporary folder,
// calls fn with it, and removes the worktree and the folder whatever
// happens (with a context of its own: also after ctx ended).
func (t teeth) inWorktree(ctx context.Context, fn func(dir string) error) (err error) {
	parent, err := os.MkdirTemp(t.TempDir, "notifier-lab-teeth-")
	if err != nil {
		return fmt.Errorf("create worktree folder: %w", err)
	}
	dir := filepath.Join(parent, "tree")
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gitCallTimeout)
		defer cancel()
		if _, statErr := os.Stat(dir); statErr == nil {
			if _, rerr := t.git(rctx, t.Repo, "worktree", "remove", "--force", "--force", dir); rerr != nil {
				err = errors.Join(err, fmt.Errorf("remove worktree %s: %w (git worktree prune cleans up after it)", dir, rerr))
			}
		}
		if rerr := os.RemoveAll(parent); rerr != nil {
			err = errors.Join(err, fmt.Errorf("remove %s: %w", parent, rerr))
		}
	}()
	if _, err := t.git(ctx, t.Repo, "worktree", "add", "--detach", dir, "HEAD"); err != nil {
		return fmt.Errorf("make a worktree of HEAD: %w", err)
	}
	return fn(dir)
}

// git runs git in dir and returns its standard output.
func (t teeth) git(ctx context.Context, dir string, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := t.command(ctx, dir, "git", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), oneLine(stderr.Bytes(), err))
	}
	return string(out), nil
}

// command is name args in dir, in a process group of its own that ctx's
// end kills whole.
func (t teeth) command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// goTest runs the tests run matches (a regexp alternation) of
// ./worker/sim in dir (gotest.Run) with SIM_DEFECT=defect (unset when "")
// and -trimpath added to GOFLAGS (the worktrees share the build cache).
func (t teeth) goTest(ctx context.Context, dir, defect, run string) (gotest.Events, error) {
	env := []string{}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "SIM_DEFECT" && k != "SIM_SEED" && k != "SIM_LEDGER" && k != "GOFLAGS" {
			env = append(env, kv)
		}
	}
	env = append(env, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"))
	if defect != "" {
		env = append(env, "SIM_DEFECT="+defect)
	}
	return gotest.Run(ctx, gotest.Options{Dir: dir, Go: t.Go, Env: env, Run: "^(" + run + ")$", Package: simPackage})
}

// descriptions reads each patch's defect from the README's table
// (| `name` | defect | invariant |); missing rows are "".
func (t teeth) descriptions() map[string]string {
	out := map[string]string{}
	raw, err := os.ReadFile(filepath.Join(t.Patches, "README.md"))
	if err != nil {
		return out
	}
	for _, l := range strings.Split(string(raw), "\n") {
		cells := strings.Split(l, "|")
		if len(cells) >= 4 && strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			out[strings.Trim(strings.TrimSpace(cells[1]), "`")] = strings.TrimSpace(cells[2])
		}
	}
	return out
}

// oneLine is a command's output on one line, or its error without output.
func oneLine(out []byte, err error) string {
	s := strings.Join(strings.Fields(string(out)), " ")
	if s == "" && err != nil {
		return err.Error()
	}
	return s
}
