package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// ledgerFile writes a bbolt ledger with one UNKNOWN, one SENT and one
// ATTEMPTING entry and returns its path.
func ledgerFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)
	for i, st := range []outcome.Outcome{outcome.Unknown, outcome.Sent, ledger.Attempting} {
		key := "order-" + string(rune('1'+i))
		_, e, err := l.Begin(ctx, key, "h", t0.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if st != ledger.Attempting {
			if err := l.Finish(ctx, key, "h", e.Attempts, st, "code=-1", t0.Add(time.Duration(i)*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func runLedger(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = ledgerMain(context.Background(), args, envOf(env), &out, &errb)
	return code, out.String(), errb.String()
}

func TestLedgerList(t *testing.T) {
	path := ledgerFile(t)
	for _, tt := range []struct {
		name string
		args []string
		want []string // refkeys in order
	}{
		{"all, oldest first", []string{"list", "-ledger", path}, []string{"order-1", "order-2", "order-3"}},
		{"by state", []string{"list", "-ledger", path, "-state", "UNKNOWN"}, []string{"order-1"}},
		{"state in lower case", []string{"list", "-ledger", path, "-state", "attempting"}, []string{"order-3"}},
		{"limit", []string{"list", "-ledger", path, "-limit", "2"}, []string{"order-1", "order-2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runLedger(t, nil, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if !strings.HasPrefix(lines[0], "REFKEY") {
				t.Fatalf("no header: %q", out)
			}
			var got []string
			for _, l := range lines[1:] {
				got = append(got, strings.Fields(l)[0])
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("listed %v; want %v\n%s", got, tt.want, out)
			}
		})
	}
}

func TestLedgerShowAndResolve(t *testing.T) {
	path := ledgerFile(t)
	env := map[string]string{"LEDGER": path} // the spec from the environment
	code, out, errs := runLedger(t, env, "resolve", "order-1", "-as", "not-sent", "-by", "ops-kim", "-why", "vendor support: not received")
	if code != 0 || !strings.Contains(out, "resolved order-1 as NOT_SENT by ops-kim") {
		t.Fatalf("resolve: exit %d out %q err %q", code, out, errs)
	}
	code, out, errs = runLedger(t, env, "show", "order-1")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errs)
	}
	var e ledger.Entry
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("show output is not an entry: %v\n%s", err, out)
	}
	if e.State != outcome.NotSent || e.Resolution == nil || e.Resolution.By != "ops-kim" ||
		e.Resolution.Why != "vendor support: not received" || e.Resolution.As != outcome.NotSent || e.Resolution.At.IsZero() {
		t.Errorf("entry after resolve: %+v (resolution %+v)", e, e.Resolution)
	}
	// A SENT entry cannot be resolved: exit 1 with the reason.
	code, _, errs = runLedger(t, env, "resolve", "-as", "sent", "-by", "ops-kim", "-why", "x", "order-2")
	if code != 1 || !strings.Contains(errs, "only UNKNOWN or ATTEMPTING entries are resolved") {
		t.Errorf("resolve SENT: exit %d err %q; want 1 naming the resolvable states", code, errs)
	}
	code, _, errs = runLedger(t, env, "show", "order-9")
	if code != 1 || !strings.Contains(errs, "no ledger entry") {
		t.Errorf("show missing: exit %d err %q", code, errs)
	}
}

func TestLedgerUsageErrors(t *testing.T) {
	path := ledgerFile(t)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", nil, "want a subcommand"},
		{"unknown subcommand", []string{"drop"}, `unknown subcommand "drop"`},
		{"bad -as", []string{"resolve", "order-1", "-ledger", path, "-as", "maybe", "-by", "a", "-why", "b"}, `-as "maybe": want not-sent or sent`},
		{"resolve without who", []string{"resolve", "order-1", "-ledger", path, "-as", "sent", "-why", "b"}, "needs -by WHO and -why TEXT"},
		{"show without refkey", []string{"show", "-ledger", path}, "show takes 1 argument"},
		{"bad state", []string{"list", "-ledger", path, "-state", "DELIVERED"}, `-state "DELIVERED": want one of ATTEMPTING, SENT`},
		{"bad spec", []string{"list", "-ledger", "mysql://x/y"}, `scheme "mysql"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runLedger(t, nil, tt.args...)
			if code != 2 || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d stderr %q; want 2 containing %q", code, errs, tt.want)
			}
		})
	}
}

func TestLedgerEnvChecked(t *testing.T) {
	for env, want := range map[string]string{
		"LEDGER_RETENTION":    `LEDGER_RETENTION "a week": want a duration`,
		"LEDGER_EPHEMERAL_OK": `LEDGER_EPHEMERAL_OK "yes": want true or false`,
	} {
		val := map[string]string{"LEDGER_RETENTION": "a week", "LEDGER_EPHEMERAL_OK": "yes"}[env]
		_, err := parseFlags(nil, envOf(map[string]string{env: val}), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%q: error %v; want %q", env, val, err, want)
		}
	}
}

func TestLedgerEnvUsed(t *testing.T) {
	env := map[string]string{"LEDGER": "postgres://notifier:pw@db:5432/ledger", "LEDGER_RETENTION": "48h", "LEDGER_EPHEMERAL_OK": "true"}
	for k, v := range baseEnv {
		env[k] = v
	}
	c, err := parseFlags(nil, envOf(env), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.LedgerPath != env["LEDGER"] || c.LedgerRetention != 48*time.Hour || !c.LedgerEphemeralOK {
		t.Errorf("ledger %q retention %v ephemeral ok %v; want the environment's", c.LedgerPath, c.LedgerRetention, c.LedgerEphemeralOK)
	}
	if strings.Contains(c.String(), ":pw@") {
		t.Errorf("config string carries the ledger password: %s", c)
	}
	c, err = parseFlags(nil, envOf(baseEnv), &bytes.Buffer{})
	if err != nil || c.LedgerRetention != 7*24*time.Hour || c.LedgerEphemeralOK {
		t.Errorf("defaults: retention %v ephemeral ok %v err %v; want 168h, false", c.LedgerRetention, c.LedgerEphemeralOK, err)
	}
}

// TestLedgerMissingFile: an operator's command on a mistyped path fails
// and creates nothing (it would otherwise read as an empty ledger).
func TestLedgerMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typo.db")
	code, out, errs := runLedger(t, nil, "list", "-ledger", path)
	if code == 0 || !strings.Contains(errs, "no ledger at "+path) {
		t.Errorf("exit %d stdout %q stderr %q; want a failure naming the missing ledger", code, out, errs)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command created %s (stat: %v)", path, err)
	}
}

// TestLedgerResolveRefusesYoungAttempt: an ATTEMPTING entry younger than
// the worker's worst-case send time (worker.ShutdownGrace: 55 s at
// CONCURRENCY 1, 95 s at 3) may still be sending and is refused with the
// rule named; an older one, or -min-age 0, is resolved.
func TestLedgerResolveRefusesYoungAttempt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for key, age := range map[string]time.Duration{"fresh": 0, "old": 70 * time.Second, "mid": 70 * time.Second} {
		if _, _, err := l.Begin(context.Background(), key, "h", now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	resolve := func(env map[string]string, key string, extra ...string) (int, string) {
		t.Helper()
		args := append([]string{"resolve", key, "-ledger", path, "-as", "not-sent", "-by", "ops-kim", "-why", "vendor: not received"}, extra...)
		code, _, errs := runLedger(t, env, args...)
		return code, errs
	}
	code, errs := resolve(nil, "fresh")
	if code != 1 || !strings.Contains(errs, "younger than the worst-case send time (55s)") || !strings.Contains(errs, "-min-age 55s") {
		t.Errorf("fresh attempt: exit %d err %q; want 1 naming the worst-case send time 55s and -min-age", code, errs)
	}
	if code, errs := resolve(map[string]string{"CONCURRENCY": "3"}, "mid"); code != 1 || !strings.Contains(errs, "(1m35s)") {
		t.Errorf("70s-old attempt at CONCURRENCY 3: exit %d err %q; want refused under 95s", code, errs)
	}
	if code, errs := resolve(nil, "old"); code != 0 {
		t.Errorf("70s-old attempt: exit %d err %q; want resolved", code, errs)
	}
	if code, errs := resolve(nil, "fresh", "-min-age", "0s"); code != 0 {
		t.Errorf("fresh attempt with -min-age 0s: exit %d err %q; want resolved", code, errs)
	}
	if code, errs := resolve(nil, "mid", "-min-age", "-1s"); code != 2 || !strings.Contains(errs, "-min-age -1s") {
		t.Errorf("negative -min-age: exit %d err %q; want a usage error", code, errs)
	}
}
