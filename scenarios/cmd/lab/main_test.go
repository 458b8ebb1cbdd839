package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
)

func noEnv(string) string { return "" }

func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantCode   int
		wantStdout string // substring; "" = must be empty
		wantStderr string // substring; "" = must be empty
	}{
		{"check valid prints nothing", []string{"check", "COUNT=10", "RTTS=3,10"}, nil, 0, "", ""},
		{"check no args", []string{"check"}, nil, 0, "", ""},
		{"check bad count", []string{"check", "COUNT=abc"}, nil, 2, "", "COUNT"},
		{"check bad mode names allowed values", []string{"check", "MODES=foo"}, nil, 2, "", "per-request, per-request-resume, pooled"},
		{"check unknown key names known keys", []string{"check", "FOO=1"}, nil, 2, "", "known keys: COUNT"},
		{"a misspelled key gets a suggestion", []string{"check", "COUNTT=10"}, nil, 2, "", "did you mean COUNT?"},
		{"a key in lower case gets a suggestion", []string{"check", "rtts=3"}, nil, 2, "", "did you mean RTTS?"},
		{"a far-off key gets none", []string{"check", "FOO=1"}, nil, 2, "", "unknown key; known keys"},
		{"a misspelled command names the commands", []string{"check", "stats"}, nil, 2, "", "not a command of ./run.sh (audit, audit-clients, audit-probes, contract-check, matrix, scale"},
		{"a misspelled command gets its nearest", []string{"check", "reprot"}, nil, 2, "", "did you mean report? commands: audit, audit-clients, audit-probes"},
		{"a command after a key says the command goes first", []string{"check", "COUNT=5", "audit"}, nil, 2, "", "the command goes first: ./run.sh audit KEY=VALUE"},
		{"check bad env", []string{"check"}, map[string]string{"RTTS": "-3"}, 2, "", "environment"},
		{"run with a bad argument starts nothing", []string{"run", "RTTS=-3"}, nil, 2, "", "nothing was started"},
		{"no subcommand", nil, nil, 2, "", "subcommand"},
		{"unknown subcommand", []string{"bench"}, nil, 2, "", "unknown subcommand"},
		{"report without dir", []string{"report"}, nil, 2, "", "results directory"},
		{"report of an empty dir", []string{"report", "EMPTY"}, nil, 2, "", "no audit.json, blackbox.json, cell-*.json, point-*.json, bench-*.json, client-defaults.json, */audit.json, */bench-*.json or faults.json"},
		{"report of a missing folder says so", []string{"report", "no-such-folder"}, nil, 2, "", "no-such-folder does not exist"},
		{"help", []string{"help"}, nil, 0, "KEEPALIVE_TIMEOUT", ""},
		{"help names audit-clients", []string{"help"}, nil, 0, "./run.sh audit-clients [PROFILE=", ""},
		{"audit-clients refuses WORKER", []string{"audit-clients-check", "WORKER=go"}, nil, 2, "", "allowed: no WORKER"},
		{"audit-clients refuses an OUT the lab did not make", []string{"audit-clients", "OUT=."}, nil, 2, "", "name a new folder"},
		{"audit-clients takes a new OUT", []string{"audit-clients-check", "OUT=no-such-folder/x"}, nil, 0, "", ""},
		{"audit-clients refreshes the committed audits", []string{"audit-clients-check", "OUT=../../../results/audit"}, nil, 0, "", ""},
		{"audit-clients checks the audit's keys", []string{"audit-clients-check", "PROFILE=alimtalk", "COUNT=20"}, nil, 0, "", ""},
		{"audit-clients takes FIXED", []string{"audit-clients-check", "PROFILE=alimtalk", "FIXED=1"}, nil, 0, "", ""},
		{"FIXED is 0 or 1", []string{"audit-clients-check", "FIXED=2"}, nil, 2, "", "FIXED"},
		{"audit refuses FIXED", []string{"audit", "WORKER=java-okhttp", "FIXED=1"}, nil, 2, "", "WORKER=<client>-fixed"},
		{"audit's early check refuses FIXED, naming its value", []string{"audit-check", "FIXED=1"}, nil, 2, "", `FIXED="1"`},
		{"a run refuses FIXED", []string{"check", "FIXED=1"}, nil, 2, "", "audit-clients' key"},
		{"a run refuses FIXED from the environment", []string{"run"}, map[string]string{"FIXED": "1"}, 2, "", "bad environment FIXED"},
		{"check a known scenario", []string{"check", "SCENARIO=nginx-502"}, nil, 0, "", ""},
		{"check all scenarios", []string{"check", "SCENARIO=all"}, nil, 0, "", ""},
		{"check an unknown scenario lists the known ones", []string{"check", "SCENARIO=nope"}, nil, 2, "", "known: all, broker-cut"},
		{"run an unknown scenario starts nothing", []string{"run", "SCENARIO=nope"}, nil, 2, "", "nothing was started"},
		{"bad scenario syntax", []string{"check", "SCENARIO=Bad Name"}, nil, 2, "", "SCENARIO"},
		{"a threshold beside a scenario is refused", []string{"check", "SCENARIO=nginx-502", "THRESHOLD_P99_MS=30"}, nil, 2, "", "SCENARIO without THRESHOLD_*"},
		{"a threshold on the bench is checked", []string{"check", "THRESHOLD_P99_MS=30", "THRESHOLD_CONNECTIONS=2"}, nil, 0, "", ""},
		{"help names simulate", []string{"help"}, nil, 0, "./run.sh simulate [SEEDS=N] [SEED=s] [TEETH=1] [OUT=dir]", ""},
		{"lab help explains simulate", []string{"help"}, nil, 0, "The simulation (./run.sh simulate", ""},
		{"simulate help lists its keys", []string{"simulate", "help"}, nil, 0, "  SEEDS=10000\n", ""},
		{"simulate-check takes its keys", []string{"simulate-check", "SEEDS=20", "SEED=4", "TEETH=1", "OUT=no-such-folder/x"}, nil, 0, "", ""},
		{"a run refuses simulate's key, naming simulate", []string{"check", "SEEDS=5"}, nil, 2, "", "a key of ./run.sh simulate, not of lab run"},
		{"simulate refuses a run's key", []string{"simulate-check", "RTTS=3"}, nil, 2, "", "a key of lab run, not of ./run.sh simulate"},
		{"a misspelled simulate gets its nearest", []string{"check", "simulat"}, nil, 2, "", "did you mean simulate?"},
		{"list", []string{"list"}, nil, 0, "idle-race ", ""},
		{"list takes no arguments", []string{"list", "x"}, nil, 2, "", "no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string(nil), tt.args...)
			for i, a := range args {
				if a == "EMPTY" {
					args[i] = t.TempDir()
				}
			}
			var stdout, stderr bytes.Buffer
			getenv := func(k string) string { return tt.env[k] }
			code := exitCode(run(context.Background(), args, getenv, &stdout), &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code %d; want %d (stderr %q)", code, tt.wantCode, stderr.String())
			}
			check := func(name, got, want string) {
				t.Helper()
				if want == "" && got != "" {
					t.Errorf("%s = %q; want empty", name, got)
				}
				if !strings.Contains(got, want) {
					t.Errorf("%s = %q; want it to contain %q", name, got, want)
				}
			}
			check("stdout", stdout.String(), tt.wantStdout)
			check("stderr", stderr.String(), tt.wantStderr)
		})
	}
}

func TestExitCodeInterrupted(t *testing.T) {
	var stderr bytes.Buffer
	if code := exitCode(fmt.Errorf("run: %w", context.Canceled), &stderr); code != 130 {
		t.Errorf("exit code on cancel = %d; want 130", code)
	}
	if code := exitCode(errors.New("boom"), &stderr); code != 1 {
		t.Errorf("exit code on error = %d; want 1", code)
	}
}

func TestReportFromFixtures(t *testing.T) {
	out := t.TempDir()
	if err := outdir.Claim(out, "fixture"); err != nil { // report writes only into a folder the lab made
		t.Fatal(err)
	}
	fixtures, err := filepath.Glob("../../../testdata/scenarios/results/bench-*.json")
	if err != nil || len(fixtures) != 4 {
		t.Fatalf("fixtures: %v %v", fixtures, err)
	}
	for _, f := range fixtures {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"report", out}, noEnv, &stdout); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "pooled (case)") {
		t.Errorf("report printed %q", stdout.String())
	}
	for _, f := range []string{"summary.md", "charts/latency-p50.svg", "charts/tcp-connections.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestRunShCommandsMatchUsage: the commands a misspelled first word is
// told about are the ones --help lists (and run.sh dispatches).
func TestRunShCommandsMatchUsage(t *testing.T) {
	var b strings.Builder
	if err := usage(&b); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^(?:Usage:)?\s+\./run\.sh ([a-z-]+)\b`).FindAllStringSubmatch(b.String(), -1) {
		listed = append(listed, m[1])
	}
	want := strings.Split(runShCommands, ", ")
	for _, c := range listed {
		if !slices.Contains(want, c) {
			t.Errorf("--help lists ./run.sh %s, runShCommands does not", c)
		}
	}
	for _, c := range want {
		if !slices.Contains(listed, c) {
			t.Errorf("runShCommands names %s, --help does not list it", c)
		}
	}
	sh, err := os.ReadFile("../../../run.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range want {
		if !strings.HasPrefix(c, "--") && !regexp.MustCompile(`(?m)^\s+([\w-]+\s*\|\s*)*`+regexp.QuoteMeta(c)+`(\s*\|\s*[\w-]+)*\)`).Match(sh) {
			t.Errorf("run.sh has no case for %s", c)
		}
	}
}

// TestNearestKey: a likely misspelling names one key; a word close to
// two keys, or far from all, names none.
func TestNearestKey(t *testing.T) {
	names := []string{"COUNT", "WARMUP", "RTTS", "MODES", "WORKER", "WORKERS", "SCHEME"}
	for in, want := range map[string]string{
		"COUNTT": "COUNT", "count": "COUNT", "CUONT": "COUNT", "RTT": "RTTS", "warmpu": "WARMUP",
		"WORKRS": "WORKERS", "MODE": "MODES", "FOO": "", "WORKE": "WORKER", "WORKERSS": "WORKERS", "SCHEMA": "SCHEME", "RT": "",
	} {
		if got := nearestKey(in, names); got != want {
			t.Errorf("nearestKey(%q) = %q, want %q", in, got, want)
		}
	}
}
