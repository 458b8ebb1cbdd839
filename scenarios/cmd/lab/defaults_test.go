package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/defaults"
)

// TestParseDefaultsArgs: client-defaults' keys, their defaults, the
// environment under the words, and every refusal a *UsageError naming the
// key and what is allowed.
func TestParseDefaultsArgs(t *testing.T) {
	cfg, err := parseDefaultsArgs(nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RTTMS != 50 || cfg.Calls != 200 || cfg.WaveCalls != 10*5 || cfg.WaveInFlight != 10 || cfg.Clients != nil || cfg.Out != defaults.DefaultOut {
		t.Errorf("defaults %+v", cfg)
	}
	env := map[string]string{"CALLS": "20", "RTT": "150"}
	cfg, err = parseDefaultsArgs([]string{"RTT=10", "CLIENTS=curl-loop, curl-multi"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RTTMS != 10 || cfg.Calls != 20 || !slices.Equal(cfg.Clients, []string{"curl-loop", "curl-multi"}) {
		t.Errorf("a word wins, the environment fills the rest: %+v", cfg)
	}
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine")
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args      []string
		key, want string
	}{
		{[]string{"CALLS=abc"}, "CALLS", "not a whole number; allowed: a whole number 1..2000"},
		{[]string{"CALLS=0"}, "CALLS", "allowed: a whole number 1..2000"},
		{[]string{"RTT=-1"}, "RTT", "allowed: a whole number 1..1000"},
		{[]string{"CLIENTS=node-fetch,lynx"}, "CLIENTS", `unknown client "lynx"; allowed: one or more of node-fetch,`},
		{[]string{"CLIENTS=,"}, "CLIENTS", "empty list"},
		{[]string{"CALL=3"}, "CALL", "did you mean CALLS?"},
		{[]string{"COUNT=3"}, "COUNT", "unknown key; known keys: RTT, CALLS, CLIENTS, OUT"},
		{[]string{"fetch"}, "", "want KEY=VALUE"},
		{[]string{"OUT=" + dir}, "OUT", "not a folder the lab made"},
	} {
		_, err := parseDefaultsArgs(tc.args, nil)
		var ue *UsageError
		if !errors.As(err, &ue) || ue.Key != tc.key || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v; want a usage error on %q containing %q", tc.args, err, tc.key, tc.want)
		}
	}
	if _, err := parseDefaultsArgs([]string{"OUT=" + mine}, nil); err != nil {
		t.Errorf("a new folder is a valid OUT: %v", err)
	}
}

// TestDefaultsExitCode: a bad argument exits 2 through the command's
// dispatch, before anything starts.
func TestDefaultsExitCode(t *testing.T) {
	for _, sub := range []string{"client-defaults", "client-defaults-check"} {
		err := run(t.Context(), []string{sub, "CALLS=many"}, func(string) string { return "" }, &strings.Builder{})
		if code := exitCode(err, &strings.Builder{}); code != 2 {
			t.Errorf("%s CALLS=many: exit %d (%v), want 2", sub, code, err)
		}
	}
}

// TestDefaultsFolderRefused: client-defaults refuses a folder holding
// another command's results, and the matrix refuses one holding
// client-defaults' (each would write a summary.md over the other's).
func TestDefaultsFolderRefused(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{".notifier-lab-out", "cell-direct-http-pooled-c1.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := parseDefaultsArgs([]string{"OUT=" + dir}, nil); err == nil || !strings.Contains(err.Error(), "another command's results") {
		t.Errorf("client-defaults into a matrix folder: %v, want a refusal", err)
	}
	mine := t.TempDir()
	for _, f := range []string{".notifier-lab-out", defaults.ResultFile} {
		if err := os.WriteFile(filepath.Join(mine, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkOutKind(mine, foreignKinds[cmdMatrix]); err == nil {
		t.Error("the matrix into a client-defaults folder: accepted, want a refusal")
	}
}
