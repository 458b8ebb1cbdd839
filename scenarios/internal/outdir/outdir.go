// Package outdir decides whether the lab may write into, or clear, a
// results folder (OUT). The rule (docs/running.md, "Output folders"): the lab
// writes only into a folder it created or one that carries its marker file;
// it clears only a marked folder; anything else (the checkout, a home
// folder, a user's own files) is refused with an error that says what to
// do, and nothing is touched.
//
// It imports only the standard library, so the command line (lab check)
// can apply the rule before anything starts.
package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Marker is the file a folder made by the lab carries. Its content names
// the run that last claimed the folder (run id and UTC time, one line).
const Marker = ".notifier-lab-out"

// ErrNotOurs is wrapped by every refusal: the folder exists, holds files,
// and carries no Marker, so the lab did not make it.
var ErrNotOurs = errors.New("not a folder the lab made")

// notOurs is a refusal that matches ErrNotOurs without saying "not a
// folder the lab made" (the folder may be the lab's, its files not all).
type notOurs string

func (e notOurs) Error() string        { return string(e) }
func (e notOurs) Is(target error) bool { return target == ErrNotOurs }

// Check returns nil when dir may be used as a run's output folder: it does
// not exist yet, it is an empty folder, or it carries Marker. Otherwise an
// error wrapping ErrNotOurs (or the file system's error) that names dir and
// what to do. Check reads only; it never creates or deletes anything.
func Check(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("resolve OUT %q: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("OUT %s: %w", abs, err)
	case !fi.IsDir():
		return fmt.Errorf("OUT %s is a file, not a folder: %w; name a new folder", abs, ErrNotOurs)
	}
	if _, err := os.Stat(filepath.Join(abs, Marker)); err == nil {
		return nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return fmt.Errorf("OUT %s: %w", abs, err)
	}
	if len(entries) == 0 {
		return nil
	}
	return fmt.Errorf("OUT %s holds %d file(s) (%s) and no %s marker: %w; "+
		"the lab writes only into a new or empty folder, or one an earlier run made: name a new folder",
		abs, len(entries), sample(entries), Marker, ErrNotOurs)
}

// Claim makes dir the output folder of run runID without clearing it:
// it creates dir (and its parents) when missing, and writes Marker. Errors:
// Check's refusal (nothing is written then), or the file system's.
func Claim(dir, runID string) error {
	if err := Check(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create OUT: %w", err)
	}
	return writeMarker(dir, runID)
}

// Owned names the files a command writes into its output folder, the
// only ones Fresh deletes: Files are glob patterns (path.Match) of the
// folder's own files, Dirs the sub-folders it writes, each with the glob
// patterns of the files in it. Marker is always owned.
type Owned struct {
	Files []string
	Dirs  map[string][]string
}

// foreign returns up to limit entries of dir (relative paths) that own does
// not name: a user's file, another command's result, a sub-folder's file
// of another kind.
func (own Owned) foreign(dir string, limit int) ([]string, error) {
	var out []string
	match := func(patterns []string, name string) bool {
		for _, p := range patterns {
			if ok, _ := filepath.Match(p, name); ok {
				return true
			}
		}
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read OUT: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == Marker && !e.IsDir():
		case e.IsDir() && own.Dirs[name] != nil:
			sub, err := os.ReadDir(filepath.Join(dir, name))
			if err != nil {
				return nil, fmt.Errorf("read OUT: %w", err)
			}
			for _, f := range sub {
				if f.IsDir() || !match(own.Dirs[name], f.Name()) {
					out = append(out, name+"/"+f.Name())
				}
			}
		case !e.IsDir() && match(own.Files, name):
		default:
			out = append(out, name)
		}
		if len(out) >= limit {
			return out[:limit], nil
		}
	}
	return out, nil
}

// Fresh makes dir an empty output folder for run runID: it creates dir, or
// empties it when it carries Marker (an earlier run's files would otherwise
// be judged as this run's), then writes Marker. It deletes only what own
// names: a marked folder that holds anything else (a user's own file,
// another command's results) is refused and nothing is deleted. An
// unmarked folder with files is refused by Check. A folder that holds a
// .git or go.mod, or another run's marked folder (results/ holds the
// reference runs), is never emptied, marker or not.
func Fresh(dir, runID string, own Owned) error {
	if err := CheckFresh(dir, own); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read OUT: %w", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("clear OUT: %w", err)
		}
	}
	return Claim(dir, runID)
}

// CheckFresh returns nil when Fresh would empty and use dir: Check's rule,
// dir holds neither .git nor go.mod nor another run's marked folder, and
// every file in it is one own names. It reads only.
func CheckFresh(dir string, own Owned) error {
	if err := Check(dir); err != nil {
		return err
	}
	for _, guard := range []string{".git", "go.mod"} {
		if _, err := os.Lstat(filepath.Join(dir, guard)); err == nil {
			return fmt.Errorf("OUT %s holds %s: %w; the lab never empties a repository: name a new folder", dir, guard, ErrNotOurs)
		}
	}
	if nested, err := nestedRun(dir); err != nil {
		return err
	} else if nested != "" {
		return fmt.Errorf("OUT %s holds another run's folder %s, so it is not one run's folder (%w): name a new folder, or that run's own folder", dir, nested, ErrNotOurs)
	}
	foreign, err := own.foreign(dir, 4)
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		names := strings.Join(foreign[:min(len(foreign), 3)], ", ")
		if len(foreign) > 3 {
			names += ", ..."
		}
		return notOurs(fmt.Sprintf("OUT %s holds files this command does not write (%s); it empties its folder "+
			"and deletes only its own files: name a new folder, or move those files out", dir, names))
	}
	return nil
}

func writeMarker(dir, runID string) error {
	line := fmt.Sprintf("notifier-lab output folder; run %s at %s\n", runID, time.Now().UTC().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(dir, Marker), []byte(line), 0o644); err != nil {
		return fmt.Errorf("mark OUT: %w", err)
	}
	return nil
}

// nestedRun returns the first folder below dir (not dir itself) that
// carries Marker, or "" when there is none.
func nestedRun(dir string) (string, error) {
	var found string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		if !d.IsDir() && d.Name() == Marker && filepath.Dir(p) != filepath.Clean(dir) {
			found = filepath.Dir(p)
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("read OUT: %w", err)
	}
	return found, nil
}

// sample names up to three entries of a folder, for an error message.
func sample(entries []fs.DirEntry) string {
	var names []string
	for i, e := range entries {
		if i == 3 {
			names = append(names, "...")
			break
		}
		names = append(names, e.Name())
	}
	return strings.Join(names, ", ")
}

// RunsDir is where a measuring run without OUT writes: a new folder
// RunsDir/<run id>/ per run, and RunsDir/Latest naming the newest
// (docs/running.md, "Output folders"). Relative to the working directory
// (run.sh runs from the checkout's root).
const RunsDir = "results/runs"

// Latest is the symbolic link in RunsDir to the newest run's folder.
const Latest = "latest"

// NewRunDir returns RunsDir/<runID>, or RunsDir/<runID>-2, -3... when a
// folder of that name exists already (two runs started in one second at
// one commit), with the id it chose. It reads only.
func NewRunDir(runID string) (dir, id string) {
	id = runID
	for n := 2; ; n++ {
		dir = filepath.Join(RunsDir, id)
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			return dir, id
		}
		id = fmt.Sprintf("%s-%d", runID, n)
	}
}

// PointLatest makes RunsDir/Latest a relative symbolic link to the
// folder runID of RunsDir. It replaces an earlier link, never a file or
// folder of that name (an error wrapping ErrNotOurs then). A symbolic
// link is used, not a text file: `cd results/runs/latest` and
// `./run.sh report results/runs/latest` then work as on any folder.
func PointLatest(runID string) error {
	link := filepath.Join(RunsDir, Latest)
	if fi, err := os.Lstat(link); err == nil {
		if fi.Mode()&fs.ModeSymlink == 0 {
			return fmt.Errorf("update %s: it is not a symbolic link: %w", link, ErrNotOurs)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("update %s: %w", link, err)
	}
	// Make the new link beside it, then rename over the old one, so a
	// reader never finds no link.
	tmp := link + ".new-" + runID
	if err := os.Symlink(runID, tmp); err != nil {
		return fmt.Errorf("update %s: %w", link, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("update %s: %w", link, err)
	}
	return nil
}

// OnlyMarker reports whether dir holds no file but Marker (folders without
// files do not count): a run's folder that received no result.
func OnlyMarker(dir string) (bool, error) {
	only := true
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !(d.Name() == Marker && filepath.Dir(p) == filepath.Clean(dir)) {
			only = false
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("read OUT: %w", err)
	}
	return only, nil
}
