package results

import (
	"cmp"
	"fmt"
	"strings"
)

// Provenance says where a result file came from: the lab's commit, the
// command line, the machine, the images and when (docs/results.md,
// "Provenance"). The lab command fills it once per invocation and every
// file the run writes carries a copy under the key "provenance". Files
// written before it existed have none (nil).
type Provenance struct {
	// RunID names the invocation: "<UTC start, 20060102T150405Z>-<short
	// commit>" ("-unknown" without a commit); a run without OUT writes to
	// results/runs/<RunID>/.
	RunID string `json:"run_id"`
	// Commit is the lab's full git commit; "" when unknown (a build
	// without VCS information outside a git checkout).
	Commit string `json:"commit"`
	// Dirty is true when the tree had uncommitted changes at build time.
	Dirty bool `json:"dirty"`
	// CommitSource is where Commit came from: "buildinfo" (the binary's
	// vcs.* stamp), "git" (git at run time) or "" when unknown.
	CommitSource string `json:"commit_source,omitempty"`
	// Command is the command line as given: the subcommand ("run",
	// "matrix", "audit") and its KEY=VALUE words.
	Command []string `json:"command"`
	// EnvKeys are the lab's keys that came from the environment only,
	// "NAME=VALUE" (a word wins over the environment).
	EnvKeys []string `json:"env_keys,omitempty"`
	// Machine is the host the driver ran on.
	Machine Machine `json:"machine"`
	// Images are the container images of the run (vendormock's image set).
	Images ImagesInfo `json:"images"`
	// Date is when the invocation started, RFC 3339, UTC.
	Date string `json:"date"`
}

// Machine describes the host: CPU cores the Go runtime sees, GOOS/GOARCH,
// the CPU model of /proc/cpuinfo and the kernel release ("" when unknown).
type Machine struct {
	Cores    int    `json:"cores"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	CPUModel string `json:"cpu_model"`
	Kernel   string `json:"kernel"`
	// LoadAvg1 is /proc/loadavg's one-minute load average when the
	// invocation started (0 where unreadable): on a shared 2-core machine
	// it says how noisy the run's neighbours were.
	LoadAvg1 float64 `json:"load_avg_1m,omitempty"`
}

// ShortCommit is the first 12 characters of Commit, "unknown" when there
// is none; "+dirty" follows it for a dirty tree.
func (p Provenance) ShortCommit() string {
	c := cmp.Or(p.Commit, "unknown")
	if len(c) > 12 {
		c = c[:12]
	}
	if p.Dirty {
		c += "+dirty"
	}
	return c
}

// Header is the short provenance block a summary prints under its title:
// three Markdown lines (commit and date, command, machine and images),
// ending in a blank line. A nil p says the files predate provenance.
func (p *Provenance) Header() string {
	if p == nil {
		return "Provenance: not recorded (result files written before the lab recorded it).\n\n"
	}
	m := p.Machine
	env := ""
	if len(p.EnvKeys) > 0 {
		env = " (from the environment: `" + strings.Join(p.EnvKeys, " ") + "`)"
	}
	return fmt.Sprintf("Run %s at commit %s, %s.  \nCommand: `%s`%s  \nMachine: %d cores, %s/%s, %s, kernel %s, load %.2f at start; images: %s.\n\n",
		p.RunID, p.ShortCommit(), p.Date, p.CommandLine(), env,
		m.Cores, m.OS, m.Arch, cmp.Or(m.CPUModel, "unknown CPU"), cmp.Or(m.Kernel, "unknown"), m.LoadAvg1, p.Images.Summary())
}

// CommandLine is Command as a line to paste into a shell in the project's
// folder: "./run.sh", the subcommand unless it is run (./run.sh's default),
// then each word, its value in double quotes where the shell would split or
// expand it (`./run.sh COUNT=1000 RTTS="3 10"`).
func (p *Provenance) CommandLine() string {
	words := []string{"./run.sh"}
	for i, w := range p.Command {
		if i == 0 && w == "run" {
			continue
		}
		words = append(words, shellWord(w))
	}
	return strings.Join(words, " ")
}

// shellWord quotes w for a POSIX shell when it holds anything but letters,
// digits and _ - . , / : = @ % +: a KEY=VALUE word keeps KEY= outside the
// quotes; inside them \ " $ and ` are escaped.
func shellWord(w string) string {
	plain := func(s string) bool {
		for _, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.,/:=@%+", r)) {
				return false
			}
		}
		return s != ""
	}
	if plain(w) {
		return w
	}
	key, value, ok := strings.Cut(w, "=")
	if !ok || !plain(key) {
		key, value = "", w
	} else {
		key += "="
	}
	return key + `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(value) + `"`
}

// Summary names the images in one line: the kind, then the worker's and
// the RabbitMQ image; "none" for a command that started no container
// (the zero ImagesInfo: ./run.sh simulate, a stamped mutation run).
func (im ImagesInfo) Summary() string {
	if im == (ImagesInfo{}) {
		return "none"
	}
	return fmt.Sprintf("%s (worker %s, rabbitmq %s)", cmp.Or(im.Kind, "unknown"), cmp.Or(im.Worker, "-"), cmp.Or(im.RabbitMQ, "-"))
}
