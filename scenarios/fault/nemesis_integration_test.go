//go:build integration

package fault

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// nemesisScenario parses a scenario of this test (file name = its name).
func nemesisScenario(t *testing.T, name, steps, expect string) *Scenario {
	t.Helper()
	y := "name: " + name + "\ndescription: nemesis test\ntool: worker\nfault: a nemesis step\nsteps:\n" + steps + "expect:\n" + expect
	sc, err := Parse(name+".yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// assertRestored fails unless nginx and the worker-side services run
// unpaused, WireMock is on the run's network under its alias, and the
// vendor path answers through Toxiproxy.
func assertRestored(t *testing.T, r *Runner) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, name := range []string{vendormock.AliasNginx, vendormock.AliasWireMock} {
		id, err := r.Stack.ServiceContainerID(name)
		if err != nil {
			t.Fatal(err)
		}
		if paused, err := r.Stack.ContainerPaused(ctx, id); err != nil || paused {
			t.Errorf("%s paused %v (%v) after the scenario; want thawed", name, paused, err)
		}
		if al, err := r.Stack.NetworkAliases(ctx, id); err != nil || !slices.Contains(al, name) {
			t.Errorf("%s aliases %v (%v) after the scenario; want %s", name, al, err, name)
		}
	}
	if _, err := r.Stack.SelfCheck(ctx, 0); err != nil {
		t.Errorf("vendor path after the scenario: %v", err)
	}
	if _, err := r.Stack.Journal(ctx); err != nil {
		t.Errorf("WireMock's journal after the scenario: %v", err)
	}
}

// TestIntegrationNemesis runs the nemesis steps through the fault runner on
// one stack: a frozen worker sends nothing until thawed; WireMock cut off
// and healed serves again (its alias back, nginx reloaded); and what a
// scenario that fails mid-way (a wait that times out) or is cancelled
// leaves paused or partitioned is put back.
func TestIntegrationNemesis(t *testing.T) {
	r := startRunner(t)
	t.Run("steps", func(t *testing.T) {
		sc := nemesisScenario(t, "nemesis-steps", `  - send: {count: 1}
  - pause: worker
  - send: {count: 1, wait: false}
  - sleep: 2s
  - check_journal: 1
  - unpause: worker
  - wait: {records: 2, timeout: 30s}
  - partition: wiremock
  - sleep: 1s
  - heal: wiremock
  - send: {count: 1}
`, "  outcomes: {SENT: 3}\n  journal: 3\n  no_crash: true\n")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		v, err := r.RunScenario(ctx, sc)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if !v.Pass {
			t.Errorf("verdict failed: %v", v.Failures)
		}
		if len(v.Checks) != 2 || !v.Checks[0].OK || v.Checks[0].Got != 1 {
			t.Errorf("checks %+v; want the frozen worker's journal at 1 and no crash", v.Checks)
		}
		assertRestored(t, r)
	})
	t.Run("undone after a failed wait", func(t *testing.T) {
		sc := nemesisScenario(t, "nemesis-fails", `  - send: {count: 1}
  - pause: nginx
  - partition: wiremock
  - pause: worker
  - wait: {records: 5, timeout: 2s}
  - unpause: nginx
`, "  outcomes: {SENT: 1}\n")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		v, err := r.RunScenario(ctx, sc)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if v.Pass || len(v.Failures) == 0 || !strings.Contains(v.Failures[0], "wait timed out") {
			t.Errorf("verdict pass %v, failures %v; want the wait's timeout", v.Pass, v.Failures)
		}
		assertRestored(t, r)
	})
	t.Run("undone after cancel", func(t *testing.T) {
		sc := nemesisScenario(t, "nemesis-cancel", `  - send: {count: 1}
  - pause: nginx
  - partition: wiremock
  - sleep: 2m
`, "  outcomes: {SENT: 1}\n")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		nginx, err := r.Stack.ServiceContainerID(vendormock.AliasNginx)
		if err != nil {
			t.Fatal(err)
		}
		go func() { // cancel once the scenario froze nginx
			defer cancel()
			for ctx.Err() == nil {
				if p, _ := r.Stack.ContainerPaused(ctx, nginx); p {
					time.Sleep(2 * time.Second) // and cut WireMock off
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
		_, err = r.RunScenario(ctx, sc)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("run: %v; want context.Canceled", err)
		}
		assertRestored(t, r)
	})
}
