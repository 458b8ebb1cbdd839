package reconcile

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
)

// TestReadLedgerCloseFails: entries read from the copy are not returned
// when closing the copy fails; the error says so. The control is
// TestReadLedger (the real Close, entries and no error).
func TestReadLedgerCloseFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	writeLedger(t, path)
	errClose := errors.New("close: input/output error")
	closed := false
	got, err := readLedger(path, func(l *ledger.Ledger) error {
		closed = true
		return errors.Join(l.Close(), errClose)
	})
	if !closed {
		t.Fatal("readLedger never closed the copy")
	}
	if !errors.Is(err, errClose) || got != nil {
		t.Errorf("entries %+v, err %v; want none and an error wrapping %q", got, err, errClose)
	}
}
