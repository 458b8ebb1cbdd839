package reconcile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
)

// ReadLedger returns every entry of the worker's ledger at path, sorted
// by refkey, without touching the file: it takes a shared lock on the file
// (which fails at once while a worker holds the ledger open), copies it to
// a temporary directory under that lock, and opens the copy with
// ledger.Open (which would otherwise create a missing file and take the
// write lock). Errors: the file does not exist (fs.ErrNotExist), it is in
// use by a running worker (ledger.ErrLocked), or the ledger's, a failed
// Close of the copy included.
func ReadLedger(path string) ([]ledger.Entry, error) {
	return readLedger(path, (*ledger.Ledger).Close)
}

// readLedger is ReadLedger with the copy's Close given: tests pass one that
// fails (an I/O fault a test cannot cause in a real file).
func readLedger(path string, closeCopy func(*ledger.Ledger) error) ([]ledger.Entry, error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	defer src.Close()
	if err := lockShared(src); err != nil {
		return nil, fmt.Errorf("read ledger %s: %w (stop the worker first): %w", path, ledger.ErrLocked, err)
	}
	dir, err := os.MkdirTemp("", "reconcile-ledger-")
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	defer os.RemoveAll(dir)
	cp := filepath.Join(dir, filepath.Base(path))
	if err := copyFile(cp, src); err != nil {
		return nil, fmt.Errorf("read ledger: copy: %w", err)
	}
	_ = unlock(src)

	l, err := ledger.Open(cp)
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	entries, err := l.All()
	if cerr := closeCopy(l); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	if entries == nil {
		entries = []ledger.Entry{}
	}
	return entries, nil
}

func copyFile(dst string, src *os.File) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, src)
	return errors.Join(err, out.Close())
}
