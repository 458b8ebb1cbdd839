package ledger_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// mountinfo is a container's /proc/self/mountinfo: the overlay root, a
// tmpfs, a named volume at /data, a bind mount with a space in its path.
const mountinfo = `1001 980 0:145 / / rw,relatime master:512 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/A:/var/lib/docker/overlay2/l/B,upperdir=/var/lib/docker/overlay2/x/diff,workdir=/var/lib/docker/overlay2/x/work
1002 1001 0:147 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
1003 1001 0:148 / /dev rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755
1010 1001 0:150 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw
1011 1001 254:0 /var/lib/docker/volumes/notifier-ledger/_data /data rw,relatime - ext4 /dev/vda rw
1012 1001 254:0 /srv/run\040one /state\040dir rw,relatime - ext4 /dev/vda rw
1013 1001 254:0 /var/lib/docker/containers/c/hosts /etc/hosts rw,relatime - ext4 /dev/vda rw
`

func TestCheckPlacement(t *testing.T) {
	in := ledger.Host{InContainer: true, MountInfo: mountinfo}
	for _, tt := range []struct {
		name, spec  string
		host        ledger.Host
		ephemeralOK bool
		wantErr     bool
	}{
		{"volume", "/data/ledger.db", in, false, false},
		{"deeper in the volume", "/data/sub/ledger.db", in, false, false},
		{"bind mount with a space", "/state dir/ledger.db", in, false, false},
		{"container root (writable layer)", "/ledger.db", in, false, true},
		{"relative path on the root", "/app/notifier-ledger.db", in, false, true},
		{"a sibling named like the volume", "/database/ledger.db", in, false, true},
		{"tmpfs", "/tmp/ledger.db", in, false, true},
		{"root, explicitly accepted", "/ledger.db", in, true, false},
		{"not in a container", "/ledger.db", ledger.Host{MountInfo: mountinfo}, false, false},
		{"postgres", "postgres://u:p@db:5432/ledger", in, false, false},
		{"no mountinfo in a container", "/data/ledger.db", ledger.Host{InContainer: true}, false, true},
		{"root on a whole disk (a virtual machine)", "/ledger.db", ledger.Host{InContainer: true,
			MountInfo: "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"}, false, false},
		{"root on a btrfs driver's subvolume", "/ledger.db", ledger.Host{InContainer: true,
			MountInfo: "27 1 0:40 /var/lib/docker/btrfs/subvolumes/abc / rw - btrfs /dev/sda2 rw\n"}, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := ledger.CheckPlacement(tt.spec, tt.host, tt.ephemeralOK)
			if tt.wantErr != errors.Is(err, ledger.ErrEphemeral) {
				t.Fatalf("CheckPlacement(%s) = %v; want ErrEphemeral: %v", tt.spec, err, tt.wantErr)
			}
			if tt.wantErr && !strings.Contains(err.Error(), "LEDGER_EPHEMERAL_OK=true") && !strings.Contains(err.Error(), "mountinfo") {
				t.Errorf("refusal does not say what to do: %v", err)
			}
		})
	}
}

func TestMountOf(t *testing.T) {
	for path, want := range map[string]ledger.Mount{
		"/data/x":           {Root: "/var/lib/docker/volumes/notifier-ledger/_data", Point: "/data", FSType: "ext4"},
		"/data":             {Root: "/var/lib/docker/volumes/notifier-ledger/_data", Point: "/data", FSType: "ext4"},
		"/datax":            {Root: "/", Point: "/", FSType: "overlay"},
		"/tmp/a/b":          {Root: "/", Point: "/tmp", FSType: "tmpfs"},
		"/state dir/ledger": {Root: "/srv/run one", Point: "/state dir", FSType: "ext4"},
	} {
		got, err := ledger.MountOf(path, mountinfo)
		if err != nil || got != want {
			t.Errorf("MountOf(%s) = %+v, %v; want %+v", path, got, err, want)
		}
	}
}

func TestCgroupHintsContainer(t *testing.T) {
	for text, want := range map[string]bool{
		"12:memory:/docker/0123abcd\n":           true,
		"0::/kubepods/besteffort/pod1/abc\n":     true,
		"0::/init.scope\n":                       false,
		"0::/user.slice/user-1000.slice/x.scope": false,
	} {
		if got := ledger.CgroupHintsContainer(text); got != want {
			t.Errorf("CgroupHintsContainer(%q) = %v; want %v", text, got, want)
		}
	}
}

// TestPruneEvery: the loop prunes at once, logs how many, and stops with
// its context.
func TestPruneEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := ledgertest.NewMem()
	now := ledgertest.T0.Add(30 * 24 * time.Hour)
	for i, age := range []time.Duration{8 * 24 * time.Hour, 9 * 24 * time.Hour, time.Hour} {
		if err := s.Finish(ctx, string(rune('a'+i)), "", 0, outcome.Sent, "", now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&syncWriter{w: &buf}, nil))
	done := make(chan struct{})
	go func() {
		ledger.PruneEvery(ctx, s, 7*24*time.Hour, time.Hour, func() time.Time { return now }, log)
		close(done)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		es, _ := s.List(ctx, "", 0)
		if len(es) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("entries after prune: %v; want only the recent one", es)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if !strings.Contains(buf.String(), "ledger pruned") || !strings.Contains(buf.String(), "deleted=2") {
		t.Errorf("log %q; want a 'ledger pruned' line with deleted=2", buf.String())
	}
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
