package ledger_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// crashEnv names the ledger file the child process of TestCrashBetweenBeginAndFinish
// works on; TestHelperCrash does nothing without it.
const crashEnv = "NOTIFIER_LEDGER_CRASH_CHILD"

// TestHelperCrash is the child of TestCrashBetweenBeginAndFinish, not a test
// of its own: it opens the ledger, commits a Begin and a Finish for
// done-1 and a Begin for crash-1, and after each commit prints how many of
// the file's pages the kernel still holds dirty (not yet on the disk). Then
// it prints "begun" and blocks until it is killed.
func TestHelperCrash(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		return // run as a child only
	}
	ctx := context.Background()
	l, err := ledger.Open(path)
	if err != nil {
		fmt.Println("open failed:", err)
		os.Exit(3)
	}
	h := ledgertest.HashA
	step := func(name string, err error) {
		if err != nil {
			fmt.Println(name, "failed:", err)
			os.Exit(3)
		}
		dirty, writeback, err := pageCacheState(path)
		if err != nil {
			fmt.Println(name, "cachestat failed:", err)
			os.Exit(3)
		}
		fmt.Printf("%s dirty=%d writeback=%d\n", name, dirty, writeback)
	}
	_, e, err := l.Begin(ctx, "done-1", h, ledgertest.T0)
	step("begin done-1", err)
	step("finish done-1", l.Finish(ctx, "done-1", h, e.Attempts, outcome.Sent, "code=1000", ledgertest.T0))
	_, _, err = l.Begin(ctx, "crash-1", h, ledgertest.T0)
	step("begin crash-1", err)
	fmt.Println("begun")
	select {} // the parent SIGKILLs this process here, between Begin and Finish
}

// pageCacheState returns how many pages of the file at path the page cache
// holds dirty or under writeback, with cachestat(2) (Linux 6.5+). After an
// fsynced commit both are 0; after a commit with bbolt's NoSync the pages
// just written are still dirty (the kernel writes them back after
// vm.dirty_expire_centisecs, 30 s by default).
func pageCacheState(path string) (dirty, writeback uint64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	var cs unix.Cachestat_t
	if err := unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{}, &cs, 0); err != nil {
		return 0, 0, fmt.Errorf("cachestat %s: %w", path, err)
	}
	return cs.Dirty, cs.Writeback, nil
}

// TestCrashBetweenBeginAndFinish kills a child process (SIGKILL, no
// cleanup) between Begin and Finish and reopens its ledger: the entry must
// be Attempting and Begin must say Unresolved, so the redelivery is never a
// second send.
//
// SIGKILL alone cannot expose a missing fsync on Linux: the kernel keeps a
// killed process's writes in the page cache and the reopened file reads
// them back. Only a power cut loses them. So the child also reports, after
// each commit, whether any page of the file is still dirty in the page
// cache (cachestat(2)); the test fails when one is: that is a commit that
// returned before its data reached the disk.
func TestCrashBetweenBeginAndFinish(t *testing.T) {
	path := filepath.Join(diskDir(t), "ledger.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var steps []string
	timeout := time.After(30 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("child exited before Begin; said %q", steps)
			}
			if l == "begun" {
				break wait
			}
			steps = append(steps, l)
		case <-timeout:
			t.Fatalf("child did not reach Begin in 30 s; said %q", steps)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill child: %v", err)
	}
	_ = cmd.Wait()
	killed = true
	for range lines { // drain
	}

	t.Logf("child: %q", steps)
	if len(steps) != 3 {
		t.Fatalf("child steps %q; want 3", steps)
	}
	for _, s := range steps {
		if !strings.HasSuffix(s, " dirty=0 writeback=0") {
			t.Errorf("commit returned before its pages were on disk (not synced): %s", s)
		}
	}

	l, err := ledger.Open(path)
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer l.Close()
	ctx := context.Background()
	e, ok, err := l.Get(ctx, "crash-1")
	if err != nil || !ok || e.State != ledger.Attempting {
		t.Fatalf("crash-1 after SIGKILL = %+v, found %v, %v; want ATTEMPTING", e, ok, err)
	}
	if d, _, err := l.Begin(ctx, "crash-1", ledgertest.HashA, ledgertest.T0.Add(time.Hour)); err != nil || d != ledger.Unresolved {
		t.Fatalf("Begin(crash-1) after SIGKILL = %v, %v; want unresolved", d, err)
	}
	if d, _, err := l.Begin(ctx, "done-1", ledgertest.HashA, ledgertest.T0.Add(time.Hour)); err != nil || d != ledger.Duplicate {
		t.Fatalf("Begin(done-1) after SIGKILL = %v, %v; want duplicate", d, err)
	}
}

// diskDir returns a temporary folder on a disk-backed file system: on tmpfs
// every page stays "dirty" whatever fsync does, so the test would fail for
// the wrong reason. It falls back to a folder beside the test when the
// default temporary folder is tmpfs.
func diskDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatalf("statfs %s: %v", dir, err)
	}
	if st.Type != unix.TMPFS_MAGIC {
		return dir
	}
	dir, err := os.MkdirTemp(".", "crash-test-")
	if err != nil {
		t.Fatalf("temporary folder on disk: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
