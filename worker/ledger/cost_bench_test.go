package ledger

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// BenchmarkBeginFinish is the ledger's share of one sent message: Begin
// (Proceed) then Finish SENT of a new refkey, each one synced bbolt write
// transaction. The file lives in TMPDIR (TMPDIR=/dev/shm matches the lab's
// tmpfs worker state, where an fsync costs little).
func BenchmarkBeginFinish(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx, now := context.Background(), time.Now()
	hash := BodyHash([]byte("body"))
	b.ReportAllocs()
	cpu0 := processCPU()
	for i := 0; b.Loop(); i++ {
		refkey := fmt.Sprintf("bench-%08d", i)
		d, e, err := l.Begin(ctx, refkey, hash, now)
		if err != nil || d != Proceed {
			b.Fatalf("begin %s: %v %v", refkey, d, err)
		}
		if err := l.Finish(ctx, refkey, hash, e.Attempts, outcome.Sent, "mk", now); err != nil {
			b.Fatalf("finish %s: %v", refkey, err)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
}

// processCPU is this process's user+sys CPU time (getrusage).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
