package main

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/matrix"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

func TestParseMatrixArgs(t *testing.T) {
	noEnv := func(string) string { return "" }
	t.Run("defaults are study A's matrix", func(t *testing.T) {
		c, err := parseMatrixArgs(nil, noEnv)
		if err != nil {
			t.Fatal(err)
		}
		if c.RTTMS() != 0 || c.Count != 800 || c.ServerDelayMS != 0 || !slices.Equal(c.Concurrencies, []int{1, 8, 32}) ||
			len(c.Schemes) != 3 || len(c.Drivers) != 2 || c.Out != matrix.DefaultOut {
			t.Errorf("defaults %+v", c)
		}
	})
	t.Run("the run's names: RTTS and SCHEME, as lists", func(t *testing.T) {
		c, err := parseMatrixArgs([]string{"RTTS=10", "SCHEME=mtls https", "CONCURRENCY=1,8"}, noEnv)
		if err != nil {
			t.Fatal(err)
		}
		if c.RTTMS() != 10 || !slices.Equal(c.Schemes, []vendormock.Scheme{"mtls", "https"}) || !slices.Equal(c.Concurrencies, []int{1, 8}) {
			t.Errorf("config %+v", c)
		}
	})
	t.Run("old names, words, then environment", func(t *testing.T) {
		env := map[string]string{"RTT": "5", "POOL_SIZE": "2"}
		c, err := parseMatrixArgs([]string{"RTT=10", "SCHEMES=mtls,https", "CONCURRENCY=8", "HTTP_VERSION=2", "DRIVERS=direct"},
			func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		if c.RTTMS() != 10 || c.PoolSize != 2 || !slices.Equal(c.Schemes, []vendormock.Scheme{"mtls", "https"}) ||
			!slices.Equal(c.Concurrencies, []int{8}) || c.HTTPVersion != "2" || !slices.Equal(c.Drivers, []string{"direct"}) {
			t.Errorf("config %+v", c)
		}
	})
	for _, tc := range []struct {
		arg, want string
	}{
		{"SCHEMES=quic", `"quic" is not allowed`},
		{"CONCURRENCY=0", "out of range"},
		{"CONCURRENCY=8 8", "given twice"},
		{"DRIVERS=", "no value given"},
		{"HTTP_VERSION=3", "allowed: 1.1 or 2"},
		{"FOO=1", "unknown key"},
		{"RTT", "want KEY=VALUE"},
		{"RTTS=3 10", "lab matrix takes one value"},
		{"WORKERS=2", "a key of lab run, not of lab matrix; known keys: COUNT, WARMUP, RTTS"},
		{"SCENARIO=all", "a key of lab run, not of lab matrix"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			_, err := parseMatrixArgs([]string{tc.arg}, noEnv)
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parseMatrixArgs(%q): %v, want a UsageError mentioning %q", tc.arg, err, tc.want)
			}
		})
	}
}
