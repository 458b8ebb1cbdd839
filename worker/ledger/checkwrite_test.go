package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// CheckWrite commits one synced transaction, and a writer lock held by a
// long transaction (a Prune, a stuck Begin) fails it within its context:
// Ping, a read, passes in both cases.
func TestBoltCheckWrite(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	before, _ := l.WriteTxID()
	if err := l.CheckWrite(ctx); err != nil {
		t.Fatalf("CheckWrite = %v; want nil", err)
	}
	if after, _ := l.WriteTxID(); after != before+1 {
		t.Errorf("write transaction id %d -> %d; want one commit", before, after)
	}

	held, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = l.db.Update(func(*bolt.Tx) error { close(held); <-release; return nil })
	}()
	<-held
	defer close(release)
	if err := l.Ping(ctx); err != nil {
		t.Fatalf("Ping with the writer lock held = %v; want nil (a read)", err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := l.CheckWrite(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CheckWrite with the writer lock held = %v; want the deadline", err)
	}
}

func TestBoltCheckWriteClosed(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	if err := l.CheckWrite(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("CheckWrite after Close = %v; want ErrClosed", err)
	}
}
