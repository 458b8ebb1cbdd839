//go:build integration

package ledger_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// waitQueued waits until n calls wait in s's held group (10 s at most).
func waitQueued(t *testing.T, s *ledger.Postgres, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); s.QueuedForTest() < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued after 10 s; want %d", s.QueuedForTest(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPostgresGroupCommitEachCallerItsOwnResult: 40 Begins and 4
// Finishes made while the group is held go to PostgreSQL as one group
// commit (one batch, 44 statements), and each caller gets its own
// statement's answer: the new refkeys proceed, a refkey already SENT is a
// duplicate, one known with another body a conflict, one ATTEMPTING
// unresolved, a stale Finish a StaleAttemptError; the others' outcomes are
// durable (read back through a second store).
func TestPostgresGroupCommitEachCallerItsOwnResult(t *testing.T) {
	ctx := context.Background()
	url := freshSchema(t)
	s := openPostgres(t, url)
	h := ledgertest.HashA
	// Set-up: sent-1 SENT, other-1 with body B, open-1 ATTEMPTING, and
	// fin-0..3 ATTEMPTING (to be finished in the group).
	for _, k := range []string{"sent-1", "open-1", "fin-0", "fin-1", "fin-2", "fin-3"} {
		if d, _, err := s.Begin(ctx, k, h, t0); err != nil || d != ledger.Proceed {
			t.Fatalf("set-up Begin %s: %v, %v", k, d, err)
		}
	}
	if err := s.Finish(ctx, "sent-1", h, 1, outcome.Sent, "", t0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Begin(ctx, "other-1", ledgertest.HashB, t0); err != nil {
		t.Fatal(err)
	}
	b0, st0 := s.GroupStatsForTest()

	release := s.HoldGroupForTest()
	type res struct {
		key string
		d   ledger.Decision
		err error
	}
	var wg sync.WaitGroup
	out := make(chan res, 64)
	keys := []string{"sent-1", "other-1", "open-1"}
	for i := range 37 {
		keys = append(keys, fmt.Sprintf("new-%d", i))
	}
	for _, k := range keys {
		wg.Go(func() {
			d, _, err := s.Begin(ctx, k, h, t0)
			out <- res{k, d, err}
		})
	}
	finErr := make([]error, 4)
	for i := range 4 {
		attempt := 1
		if i == 3 {
			attempt = 9 // stale: fin-3 is on attempt 1
		}
		wg.Go(func() { finErr[i] = s.Finish(ctx, fmt.Sprintf("fin-%d", i), h, attempt, outcome.Sent, "mk", t0) })
	}
	waitQueued(t, s, len(keys)+4)
	release()
	wg.Wait()
	close(out)
	b1, st1 := s.GroupStatsForTest()
	if b1-b0 != 1 || st1-st0 != int64(len(keys)+4) {
		t.Errorf("%d group commits carrying %d statements; want 1 carrying %d", b1-b0, st1-st0, len(keys)+4)
	}
	want := map[string]ledger.Decision{"sent-1": ledger.Duplicate, "other-1": ledger.Conflict, "open-1": ledger.Unresolved}
	for r := range out {
		w, ok := want[r.key]
		if !ok {
			w = ledger.Proceed
		}
		if r.err != nil || r.d != w {
			t.Errorf("Begin %s in the group = %v, %v; want %v", r.key, r.d, r.err, w)
		}
	}
	for i := range 3 {
		if finErr[i] != nil {
			t.Errorf("Finish fin-%d in the group: %v", i, finErr[i])
		}
	}
	if _, stale := errors.AsType[*ledger.StaleAttemptError](finErr[3]); !stale {
		t.Errorf("stale Finish fin-3 in the group = %v; want a StaleAttemptError", finErr[3])
	}
	other := openPostgres(t, url)
	for k, st := range map[string]outcome.Outcome{"new-0": ledger.Attempting, "new-36": ledger.Attempting, "fin-0": outcome.Sent, "fin-3": ledger.Attempting, "other-1": ledger.Attempting} {
		if e, found, err := other.Get(ctx, k); err != nil || !found || e.State != st {
			t.Errorf("%s read back = %+v (found %v, %v); want %s", k, e, found, err, st)
		}
	}
}

// TestPostgresGroupEndedContextWritesNothing: a Begin whose ctx ends
// while it waits for its group writes nothing and returns the ctx's
// error; the live Begin queued with it commits alone. The control: the
// same held group with both ctxs live writes both.
func TestPostgresGroupEndedContextWritesNothing(t *testing.T) {
	for _, end := range []bool{true, false} {
		t.Run(fmt.Sprintf("ended=%v", end), func(t *testing.T) {
			ctx := context.Background()
			s := openPostgres(t, freshSchema(t))
			release := s.HoldGroupForTest()
			ectx, cancel := context.WithCancel(ctx)
			defer cancel()
			var wg sync.WaitGroup
			var errEnd, errLive error
			wg.Go(func() { _, _, errEnd = s.Begin(ectx, "ended-1", ledgertest.HashA, t0) })
			wg.Go(func() { _, _, errLive = s.Begin(ctx, "live-1", ledgertest.HashA, t0) })
			waitQueued(t, s, 2)
			if end {
				cancel()
			}
			release()
			wg.Wait()
			// The caller returned at once on its ctx: wait for the group.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
				if b, _ := s.GroupStatsForTest(); b >= 1 || time.Now().After(deadline) {
					break
				}
			}
			if errLive != nil {
				t.Fatalf("live Begin: %v", errLive)
			}
			e, found, err := s.Get(ctx, "ended-1")
			if err != nil {
				t.Fatal(err)
			}
			if end {
				if !errors.Is(errEnd, context.Canceled) {
					t.Errorf("Begin whose ctx ended in the queue = %v; want context.Canceled", errEnd)
				}
				if found {
					t.Errorf("Begin whose ctx ended wrote %+v; want nothing", e)
				}
				if _, st := s.GroupStatsForTest(); st != 1 {
					t.Errorf("%d statements committed; want 1 (the live Begin)", st)
				}
				return
			}
			if errEnd != nil || !found || e.State != ledger.Attempting {
				t.Errorf("control: Begin = %v, entry %+v (found %v); want ATTEMPTING", errEnd, e, found)
			}
		})
	}
}

// TestPostgresGroupStatementErrorFailsAlone: a Begin PostgreSQL refuses
// (a refkey with a NUL byte, which a text column cannot hold) in one group
// with two good ones rolls the group back; the two are run again alone
// and proceed, the bad one alone fails. Without the retry alone all three
// would fail (the negative control is the first, grouped attempt: the
// group's statement count shows it did not commit).
func TestPostgresGroupStatementErrorFailsAlone(t *testing.T) {
	ctx := context.Background()
	s := openPostgres(t, freshSchema(t))
	release := s.HoldGroupForTest()
	errs := make([]error, 3)
	keys := []string{"good-1", "bad-\x00-1", "good-2"}
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() { _, _, errs[i] = s.Begin(ctx, k, ledgertest.HashA, t0) })
		waitQueued(t, s, i+1)
	}
	release()
	wg.Wait()
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("good Begins beside a refused one: %v, %v; want both to proceed", errs[0], errs[2])
	}
	if errs[1] == nil {
		t.Errorf("Begin of a refkey with a NUL byte succeeded; want PostgreSQL's error")
	}
	b, st := s.GroupStatsForTest()
	if b != 2 || st != 2 {
		t.Errorf("%d commits of %d statements; want 2 of 2 (the group rolled back, each good one alone)", b, st)
	}
	for _, k := range []string{"good-1", "good-2"} {
		if e, found, _ := s.Get(ctx, k); !found || e.State != ledger.Attempting {
			t.Errorf("%s = %+v (found %v); want ATTEMPTING", k, e, found)
		}
	}
}

// pgCrashEnv carries the URL the child of
// TestPostgresCrashBetweenGroupedBeginAndSend works on;
// TestHelperPostgresCrash does nothing without it.
const pgCrashEnv = "NOTIFIER_LEDGER_PG_CRASH_CHILD"

// TestHelperPostgresCrash is the child of
// TestPostgresCrashBetweenGroupedBeginAndSend, not a test of its own: it
// makes 8 Begins (crash-0..7) and one whose ctx ends while it waits
// (never-1) in one held group, prints the group's figures and "begun" once
// the 8 returned Proceed (committed: a worker would send now), and blocks
// until it is killed.
func TestHelperPostgresCrash(t *testing.T) {
	url := os.Getenv(pgCrashEnv)
	if url == "" {
		return // run as a child only
	}
	ctx := context.Background()
	s, err := ledger.OpenPostgres(ctx, url)
	if err != nil {
		fmt.Println("open failed:", err)
		os.Exit(3)
	}
	release := s.HoldGroupForTest()
	ectx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	ds := make([]ledger.Decision, 8)
	errs := make([]error, 8)
	for i := range 8 {
		wg.Go(func() { ds[i], _, errs[i] = s.Begin(ctx, fmt.Sprintf("crash-%d", i), ledgertest.HashA, t0) })
	}
	wg.Go(func() { _, _, _ = s.Begin(ectx, "never-1", ledgertest.HashA, t0) })
	for s.QueuedForTest() < 9 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	release()
	wg.Wait()
	for i := range 8 {
		if errs[i] != nil || ds[i] != ledger.Proceed {
			fmt.Printf("begin crash-%d: %v, %v\n", i, ds[i], errs[i])
			os.Exit(3)
		}
	}
	b, st := s.GroupStatsForTest()
	fmt.Printf("groups=%d statements=%d\n", b, st)
	fmt.Println("begun")
	select {} // the parent SIGKILLs this process here, between the commit and the sends
}

// TestPostgresCrashBetweenGroupedBeginAndSend kills a child process
// (SIGKILL) right after a group commit of 8 Begins returned Proceed, before
// any send: in another process (the replica that gets the redeliveries)
// each of the 8 refkeys is ATTEMPTING and Begin says Unresolved (the
// worker routes it to the unknown queue, never re-sends it). The control
// in the same run: never-1, whose ctx ended before its group was sent,
// left nothing, and its Begin proceeds.
func TestPostgresCrashBetweenGroupedBeginAndSend(t *testing.T) {
	url := freshSchema(t)
	openPostgres(t, url) // the table, before the child
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPostgresCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), pgCrashEnv+"="+url)
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
	var said []string
	timeout := time.After(60 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("child exited before its Begins committed; said %q", said)
			}
			if l == "begun" {
				break wait
			}
			said = append(said, l)
		case <-timeout:
			t.Fatalf("child did not commit its Begins in 60 s; said %q", said)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill child: %v", err)
	}
	_ = cmd.Wait()
	killed = true
	for range lines { // drain
	}
	t.Logf("child: %q", said)
	if len(said) != 1 || said[0] != "groups=1 statements=8" {
		t.Errorf("child said %q; want one group commit of the 8 Begins", said)
	}

	s := openPostgres(t, url)
	ctx := context.Background()
	later := t0.Add(time.Hour)
	for i := range 8 {
		k := fmt.Sprintf("crash-%d", i)
		if e, ok, err := s.Get(ctx, k); err != nil || !ok || e.State != ledger.Attempting || e.Attempts != 1 {
			t.Errorf("%s after SIGKILL = %+v, found %v, %v; want ATTEMPTING, 1 attempt", k, e, ok, err)
		}
		if d, _, err := s.Begin(ctx, k, ledgertest.HashA, later); err != nil || d != ledger.Unresolved {
			t.Errorf("redelivery's Begin(%s) after SIGKILL = %v, %v; want unresolved (never a second send)", k, d, err)
		}
	}
	if d, _, err := s.Begin(ctx, "never-1", ledgertest.HashA, later); err != nil || d != ledger.Proceed {
		t.Errorf("control: Begin(never-1), whose grouped Begin gave up before its group, = %v, %v; want proceed", d, err)
	}
}
