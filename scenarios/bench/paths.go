package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
)

// ResolveProfile finds the profile directory: as given when it exists,
// else relative to the module root (lab.RepoRoot), so tests running in
// scenarios/ find the default profile too, else a bare name ("sms") as
// vendormock/profiles/<name>. Errors: none is a directory.
func ResolveProfile(p string) (string, error) {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Abs(p)
	}
	if !filepath.IsAbs(p) {
		cands := []string{filepath.Join(lab.RepoRoot(), p)}
		if !strings.ContainsRune(p, filepath.Separator) {
			cands = append(cands, filepath.Join(lab.RepoRoot(), filepath.Dir(DefaultProfile), p))
		}
		for _, cand := range cands {
			if st, err := os.Stat(cand); err == nil && st.IsDir() {
				return cand, nil
			}
		}
	}
	return "", fmt.Errorf("find profile: %s is not a directory (relative to the repository root; the profiles here: %s)", p, strings.Join(profileNames(), ", "))
}

// profileNames lists the profiles in vendormock/profiles ("?" when none
// can be read).
func profileNames() []string {
	entries, err := os.ReadDir(filepath.Join(lab.RepoRoot(), filepath.Dir(DefaultProfile)))
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if err != nil || len(names) == 0 {
		return []string{"?"}
	}
	return names
}

// WORKER_STATE values.
const (
	StateTmpfs = "tmpfs"
	StateDisk  = "disk"
)

// PrepareStateDir is PointOptions.StateDir for cfg.WorkerState: with
// "tmpfs", a new folder for runID under /dev/shm and the func that
// removes it (call it once the points are done: each point copies its
// files out); with "disk", "" and a no-op. Errors: /dev/shm is missing or
// not a tmpfs (the message says WORKER_STATE=disk).
func PrepareStateDir(cfg Config, runID string) (dir string, cleanup func(), err error) {
	if cfg.WorkerState != StateTmpfs {
		return "", func() {}, nil
	}
	if dir, err = tmpfsDir(runID); err != nil {
		return "", nil, err
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

// tmpfsDir creates the tmpfs folder for the worker's state of one lab run
// under /dev/shm. Errors: /dev/shm is missing or not a tmpfs (say
// WORKER_STATE=disk then).
func tmpfsDir(runID string) (string, error) {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994
	if err := syscall.Statfs("/dev/shm", &st); err != nil || st.Type != tmpfsMagic {
		return "", fmt.Errorf("WORKER_STATE=tmpfs needs a tmpfs at /dev/shm (not found here): use WORKER_STATE=disk")
	}
	dir := filepath.Join("/dev/shm", "notifier-lab", runID)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", fmt.Errorf("create tmpfs state dir: %w", err)
	}
	return dir, nil
}

// moveDir copies the regular files of src into dst (created) and removes
// src: the worker's state, from tmpfs to the run's folder on disk.
func moveDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return os.RemoveAll(src)
}

// copyFile copies src to dst, creating dst's folder.
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}
