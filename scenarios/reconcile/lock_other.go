//go:build !unix

package reconcile

import "os"

// lockShared is a no-op where flock does not exist: the caller must make
// sure the worker is stopped.
func lockShared(*os.File) error { return nil }

func unlock(*os.File) error { return nil }
