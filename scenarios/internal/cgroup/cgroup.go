package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoCgroup is returned (wrapped) when none of the cgroup layouts the
// lab knows has a folder for a container.
var ErrNoCgroup = errors.New("no cgroup folder for the container")

// FS reads a container's CPU time and its processes' RSS from the
// host's cgroup files (Root, /sys/fs/cgroup) and /proc (Proc): the same
// counters docker stats reads, without a round trip through the engine.
// Docker's cgroupfs and systemd drivers on cgroup v1 and v2 are known.
type FS struct {
	Root string // /sys/fs/cgroup
	Proc string // /proc
}

// Host reads the running host's.
var Host = FS{Root: "/sys/fs/cgroup", Proc: "/proc"}

// cpuCandidates are a container's CPU accounting files, v1 (cpuacct.usage,
// ns) before v2 (cpu.stat's usage_usec), cgroupfs driver before systemd.
func (c FS) cpuCandidates(id string) []string {
	return []string{
		filepath.Join(c.Root, "cpuacct", "docker", id, "cpuacct.usage"),
		filepath.Join(c.Root, "cpu,cpuacct", "docker", id, "cpuacct.usage"),
		filepath.Join(c.Root, "cpuacct", "system.slice", "docker-"+id+".scope", "cpuacct.usage"),
		filepath.Join(c.Root, "cpu,cpuacct", "system.slice", "docker-"+id+".scope", "cpuacct.usage"),
		filepath.Join(c.Root, "docker", id, "cpu.stat"),
		filepath.Join(c.Root, "system.slice", "docker-"+id+".scope", "cpu.stat"),
	}
}

// CPUNanos returns the container's CPU time (user+sys of every process it
// ran), ns. Errors: ErrNoCgroup, an unreadable or malformed file.
func (c FS) CPUNanos(id string) (int64, error) {
	for _, p := range c.cpuCandidates(id) {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if filepath.Base(p) == "cpuacct.usage" {
			n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("read %s: %w", p, err)
			}
			return n, nil
		}
		usec, err := statField(b, "usage_usec")
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", p, err)
		}
		return usec * 1000, nil
	}
	return 0, fmt.Errorf("container %s: %w under %s", shortID(id), ErrNoCgroup, c.Root)
}

// RSSBytes returns the summed VmRSS of the container's processes (the
// cgroup.procs next to its CPU file), bytes: the processes' resident
// memory, without the page cache its files leave in the cgroup. A process
// that exited between the two reads counts 0. Errors: ErrNoCgroup, an
// unreadable cgroup.procs.
func (c FS) RSSBytes(id string) (int64, error) {
	for _, p := range c.cpuCandidates(id) {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(p), "cgroup.procs"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		var sum int64
		for _, pid := range strings.Fields(string(b)) {
			st, err := os.ReadFile(filepath.Join(c.Proc, pid, "status"))
			if err != nil {
				continue // exited meanwhile
			}
			kb, err := statField(st, "VmRSS:")
			if err == nil {
				sum += kb * 1024
			}
		}
		return sum, nil
	}
	return 0, fmt.Errorf("container %s: %w under %s", shortID(id), ErrNoCgroup, c.Root)
}

// HostTicks returns the host's busy and total CPU time since boot from
// Proc/stat's first line, in clock ticks (idle and iowait are not busy).
func (c FS) HostTicks() (busy, total int64, err error) {
	b, err := os.ReadFile(filepath.Join(c.Proc, "stat"))
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("read %s: no cpu line", filepath.Join(c.Proc, "stat"))
	}
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("read %s: %w", filepath.Join(c.Proc, "stat"), err)
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, nil
}

// statField returns the whole number after name at the start of a line
// of a "name value [unit]" file (cpu.stat, /proc/PID/status).
func statField(b []byte, name string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == name {
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s field", name)
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
