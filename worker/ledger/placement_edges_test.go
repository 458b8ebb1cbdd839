package ledger_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
)

// TestMountOfOvermount: two mounts at one mount point, the later line
// wins (it is mounted over the earlier one): a tmpfs over the volume at
// /data makes the ledger there ephemeral, a volume over a tmpfs does not.
func TestMountOfOvermount(t *testing.T) {
	const volume = "1011 1001 254:0 /var/lib/docker/volumes/v/_data /data rw - ext4 /dev/vda rw\n"
	const tmpfs = "1020 1011 0:160 / /data rw - tmpfs tmpfs rw\n"
	for _, tt := range []struct {
		name, mountinfo string
		want            string
		ephemeral       bool
	}{
		{"tmpfs over the volume", volume + tmpfs, "tmpfs", true},
		{"volume over a tmpfs", tmpfs + volume, "ext4", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ledger.MountOf("/data/ledger.db", tt.mountinfo)
			if err != nil || m.FSType != tt.want || m.Ephemeral() != tt.ephemeral {
				t.Errorf("MountOf = %+v, %v; want %s (ephemeral %v)", m, err, tt.want, tt.ephemeral)
			}
		})
	}
}

// TestCheckPlacementFollowsSymlinkedFolder: a ledger file that does not
// exist yet, in a folder that is a symbolic link to a volume, is judged
// by the volume (resolveExisting walks up to the longest existing prefix),
// not by the container root the link itself sits on.
func TestCheckPlacementFollowsSymlinkedFolder(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	target, link := filepath.Join(tmp, "target"), filepath.Join(tmp, "link")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	h := ledger.Host{InContainer: true, MountInfo: "1 0 0:1 / / rw - overlay overlay rw\n" +
		"2 1 254:0 /volumes/v/_data " + target + " rw - ext4 /dev/vda rw\n"}
	if err := ledger.CheckPlacement(filepath.Join(link, "ledger.db"), h, false); err != nil {
		t.Errorf("ledger through a link to a volume: %v; want nil", err)
	}
	// Negative control: the same link to a folder on the overlay root.
	h.MountInfo = "1 0 0:1 / / rw - overlay overlay rw\n"
	if err := ledger.CheckPlacement(filepath.Join(link, "ledger.db"), h, false); !errors.Is(err, ledger.ErrEphemeral) {
		t.Errorf("ledger through a link to the overlay root: %v; want ErrEphemeral", err)
	}
}

// failingPrune is a Store whose Prune always fails.
type failingPrune struct{ ledger.Store }

func (failingPrune) Prune(context.Context, time.Time) (int, error) {
	return 0, errors.New("disk I/O error")
}

// TestPruneEveryLogsFailure: a failed prune is logged at warn level with
// its error (PruneEvery's docs), and no "ledger pruned" line claims it ran.
func TestPruneEveryLogsFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var buf bytes.Buffer
	sw := &syncWriter{w: &buf}
	log := slog.New(slog.NewTextHandler(sw, nil))
	done := make(chan struct{})
	go func() {
		ledger.PruneEvery(ctx, failingPrune{ledgertest.NewMem()}, time.Hour, time.Hour, time.Now, log)
		close(done)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		sw.mu.Lock()
		s := buf.String()
		sw.mu.Unlock()
		if strings.Contains(s, "ledger prune failed") {
			if !strings.Contains(s, "level=WARN") || !strings.Contains(s, "disk I/O error") || strings.Contains(s, "ledger pruned") {
				t.Errorf("log %q; want a WARN 'ledger prune failed' with the error, no 'ledger pruned'", s)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("no 'ledger prune failed' line within 5 s: %q", s)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
}
