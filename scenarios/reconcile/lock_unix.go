//go:build unix

package reconcile

import (
	"os"
	"syscall"
)

// lockShared takes a shared flock on f without waiting. bbolt holds an
// exclusive flock on the file while a worker has the ledger open, so this
// fails at once (EWOULDBLOCK) while the worker runs.
func lockShared(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
}

func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
