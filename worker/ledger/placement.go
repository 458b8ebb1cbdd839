package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrEphemeral: the worker runs in a container and the bbolt ledger is on
// the container's own writable layer (or a tmpfs), so it is lost when the
// container is recreated, and a redelivered in-flight message then meets an
// empty ledger: a second send (docs/deployment.md).
var ErrEphemeral = errors.New("ledger would be lost with the container")

// Host is what the placement check reads about the machine.
type Host struct {
	// InContainer: /.dockerenv or /run/.containerenv exists, or
	// /proc/1/cgroup names a container runtime.
	InContainer bool
	// MountInfo is the text of /proc/self/mountinfo ("" when unreadable).
	MountInfo string
}

// ReadHost reads the container hints and /proc/self/mountinfo. It never
// fails: what cannot be read is left empty.
func ReadHost() Host {
	var h Host
	for _, f := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(f); err == nil {
			h.InContainer = true
		}
	}
	if b, err := os.ReadFile("/proc/1/cgroup"); err == nil && CgroupHintsContainer(string(b)) {
		h.InContainer = true
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		h.MountInfo = string(b)
	}
	return h
}

// CgroupHintsContainer reports whether the text of /proc/1/cgroup names a
// container runtime (docker, kubepods, containerd, libpod, lxc).
func CgroupHintsContainer(cgroup string) bool {
	for _, hint := range []string{"docker", "kubepods", "containerd", "libpod", "lxc"} {
		if strings.Contains(cgroup, hint) {
			return true
		}
	}
	return false
}

// Mount is one line of /proc/self/mountinfo.
type Mount struct {
	Root   string // the folder of the source file system mounted, "/" for all of it
	Point  string // where it is mounted, for example /data
	FSType string // for example ext4, overlay, tmpfs
}

// Ephemeral reports whether files under m are lost with the container:
// a tmpfs or ramfs anywhere, or a root mount that is a union file system
// (overlay, aufs, fuse-overlayfs: the container's writable layer) or a
// sub-folder of another file system (a storage driver's layer, as btrfs
// and zfs drivers mount it). A root that is a whole block device, as in a
// virtual machine, is not ephemeral.
func (m Mount) Ephemeral() bool {
	switch m.FSType {
	case "tmpfs", "ramfs":
		return true
	}
	if m.Point != "/" {
		return false
	}
	switch m.FSType {
	case "overlay", "aufs", "fuse.fuse-overlayfs":
		return true
	}
	return m.Root != "/"
}

// MountOf returns the mount that holds the absolute path abs: the entry of
// mountinfo with the longest mount point that is abs or a parent of it.
// Errors: no entry covers abs (mountinfo empty or unparsable).
func MountOf(abs, mountinfo string) (Mount, error) {
	var best Mount
	found := false
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		fields, postFields := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(postFields) < 1 {
			continue
		}
		mp := unescapeMount(fields[4])
		if !(mp == "/" || abs == mp || strings.HasPrefix(abs, mp+"/")) {
			continue
		}
		if !found || len(mp) >= len(best.Point) { // later lines mount over earlier ones
			best, found = Mount{Root: unescapeMount(fields[3]), Point: mp, FSType: postFields[0]}, true
		}
	}
	if !found {
		return Mount{}, fmt.Errorf("no mount holds %s in mountinfo", abs)
	}
	return best, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 space, \011 tab,
// \012 newline, \134 backslash).
func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// CheckPlacement returns nil when spec is a PostgreSQL URL, when h is not a
// container, or when the bbolt file is on a mount that is not Ephemeral (a
// volume, a bind mount, a virtual machine's disk). Otherwise it returns an error
// wrapping ErrEphemeral that says what to do; ephemeralOK (LEDGER_EPHEMERAL_OK
// =true) turns that refusal into nil.
func CheckPlacement(spec string, h Host, ephemeralOK bool) error {
	if kind, err := SpecKind(spec); err != nil || kind != KindBolt || !h.InContainer || ephemeralOK {
		return err
	}
	abs, err := filepath.Abs(spec)
	if err != nil {
		return fmt.Errorf("check ledger placement %s: %w", spec, err)
	}
	abs = resolveExisting(abs)
	m, err := MountOf(abs, h.MountInfo)
	if err != nil {
		return fmt.Errorf("check ledger placement %s: %w: %w", spec, ErrEphemeral, err)
	}
	if !m.Ephemeral() {
		return nil
	}
	return fmt.Errorf("ledger %s is on the container's %s file system at %s: %w; "+
		"mount a volume at its folder (for example -v notifier-ledger:/data with LEDGER=/data/ledger.db), "+
		"use a postgres:// LEDGER, or set LEDGER_EPHEMERAL_OK=true to accept the loss",
		spec, m.FSType, m.Point, ErrEphemeral)
}

// resolveExisting resolves symbolic links in the longest existing prefix
// of abs and appends the rest unchanged.
func resolveExisting(abs string) string {
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}
