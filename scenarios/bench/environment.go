package bench

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// DescribeEnvironment collects the Environment of a run (Date is set per
// result): the host's facts, the images im and the operator's hostNote
// (LAB_HOST_NOTE, read by the command; "" for none).
func DescribeEnvironment(im vendormock.Images, hostNote string) results.Environment {
	kernel := strings.TrimSpace(readFile("/proc/sys/kernel/osrelease"))
	var note []string
	if v := osRelease(); v != "" {
		note = append(note, v)
	}
	if v := cpuModel(); v != "" {
		note = append(note, v)
	}
	if v := memTotal(); v != "" {
		note = append(note, v)
	}
	if hostNote != "" {
		note = append(note, hostNote)
	}
	return results.Environment{
		GoVersion: runtime.Version(),
		CPUs:      runtime.NumCPU(),
		Images:    results.ImagesInfoOf(im),
		Kernel:    kernel,
		HostNote:  strings.Join(note, ", "),
	}
}

// DescribeMachine returns the host's facts for results.Provenance: the
// cores the Go runtime sees, GOOS/GOARCH, /proc/cpuinfo's first "model
// name" and /proc/sys/kernel/osrelease ("" where unreadable, e.g. off
// Linux), and /proc/loadavg's one-minute figure now (0 where unreadable).
func DescribeMachine() results.Machine {
	return results.Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPUModel: cpuModel(), Kernel: strings.TrimSpace(readFile("/proc/sys/kernel/osrelease")),
		LoadAvg1: loadAvg1()}
}

func loadAvg1() float64 {
	f := strings.Fields(readFile("/proc/loadavg"))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func readFile(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return string(b)
}

func osRelease() string {
	for _, l := range strings.Split(readFile("/etc/os-release"), "\n") {
		if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

func cpuModel() string {
	for _, l := range strings.Split(readFile("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func memTotal() string {
	for _, l := range strings.Split(readFile("/proc/meminfo"), "\n") {
		if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err == nil {
				return fmt.Sprintf("%.0f GiB RAM", kb/(1<<20))
			}
		}
	}
	return ""
}
