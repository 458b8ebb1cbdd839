package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPageloadArgs: a bad argument exits 2, says what is wrong and what is
// allowed, and starts and writes nothing.
func TestPageloadArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"N zero", []string{"N=0"}, nil, `N="0": "0": 0 is out of range; allowed: distinct whole numbers, each 1..200`},
		{"N too many", []string{"N=10 500"}, nil, "500 is out of range"},
		{"N twice", []string{"N=10 50 10"}, nil, "10 given twice"},
		{"N not a number", []string{"N=ten"}, nil, "not a whole number"},
		{"RUNS below five", []string{"RUNS=4"}, nil, `RUNS="4": 4 is out of range; allowed: a whole number 5..100`},
		{"RTT negative", []string{"RTT=-1"}, nil, "allowed: a whole number 0..500"},
		{"API_DELAY_MS too long", []string{"API_DELAY_MS=60000"}, nil, "allowed: a whole number 0..30000"},
		{"a misspelled key", []string{"RUN=5"}, nil, "did you mean RUNS?"},
		{"the run's RTTS", []string{"RTTS=3"}, nil, "a key of lab run, not of ./run.sh pageload; known keys: N, RTT, RUNS"},
		{"a key in lower case", []string{"rtt=3"}, nil, "did you mean RTT?"},
		{"another command's key", []string{"COUNT=5"}, nil, "a key of lab run, not of ./run.sh pageload"},
		{"a word without =", []string{"100"}, nil, "want KEY=VALUE with KEY one of N, RTT, RUNS, API_DELAY_MS, OUT"},
		{"a bad value from the environment", nil, map[string]string{"RUNS": "x"}, `bad environment RUNS="x"`},
	}
	for _, tt := range tests {
		for _, cmd := range []string{"pageload-check", "pageload"} {
			t.Run(cmd+"/"+tt.name, func(t *testing.T) {
				dir := t.TempDir()
				t.Chdir(dir)
				var stdout, stderr bytes.Buffer
				code := exitCode(run(context.Background(), append([]string{cmd}, tt.args...), func(k string) string { return tt.env[k] }, &stdout), &stderr)
				if code != 2 || !strings.Contains(stderr.String(), tt.want) || !strings.Contains(stderr.String(), "nothing was started") {
					t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tt.want)
				}
				if stdout.Len() > 0 {
					t.Errorf("stdout %q; want nothing", stdout.String())
				}
				emptyDir(t, dir)
			})
		}
	}
}

func TestPageloadArgsGood(t *testing.T) {
	cfg, src, err := parsePageloadArgs([]string{"N=5,20", "RUNS=7", "OUT=x"}, func(k string) string { return map[string]string{"RTT": "20", "RUNS": "9"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Resources, []int{5, 20}) || cfg.Runs != 7 || cfg.RTTMS != 20 || cfg.APIDelayMS != 2000 || cfg.Out != "x" || src["RTT"] != "environment" || src["RUNS"] != "argument" {
		t.Errorf("config %+v, sources %v", cfg, src)
	}
	def, _, err := parsePageloadArgs(nil, nil)
	if err != nil || !slices.Equal(def.Resources, []int{10, 50, 100}) || def.RTTMS != 50 || def.Runs != 5 {
		t.Errorf("defaults %+v, %v", def, err)
	}
}

// TestPageloadRefusesAnotherCommandsFolder: OUT holding a bench run's
// results is refused before anything starts.
func TestPageloadRefusesAnotherCommandsFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bench-pooled-3ms.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".notifier-lab-out"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := exitCode(run(context.Background(), []string{"pageload-check", "OUT=" + dir}, noEnv, &stdout), &stderr); code != 2 || !strings.Contains(stderr.String(), "holds another command's results") {
		t.Errorf("exit %d, %q", code, stderr.String())
	}
}

func TestPageloadHelp(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"pageload", "help"}, noEnv, &stdout); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  N=\"10 50 100\"\n", "  RUNS=5\n", "The defaults make 40 loads", "Exit 2: a bad key, nothing started"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, stdout.String())
		}
	}
}
