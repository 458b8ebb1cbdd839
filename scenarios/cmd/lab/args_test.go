package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParseArgs(t *testing.T) {
	def := bench.DefaultConfig()
	with := func(f func(c *bench.Config)) bench.Config {
		c := bench.DefaultConfig()
		f(&c)
		return c
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want bench.Config
	}{
		{"defaults", nil, nil, def},
		{"count and warmup", []string{"COUNT=60", "WARMUP=0"}, nil,
			with(func(c *bench.Config) { c.Count, c.Warmup = 60, 0 })},
		{"rtts with spaces", []string{"RTTS=3 10 25"}, nil,
			with(func(c *bench.Config) { c.RTTs = []int{3, 10, 25} })},
		{"rtts with commas and spaces", []string{"RTTS= 10,0 , 1000"}, nil,
			with(func(c *bench.Config) { c.RTTs = []int{10, 0, 1000} })},
		{"one mode", []string{"MODES=pooled"}, nil,
			with(func(c *bench.Config) { c.Modes = []string{"pooled"} })},
		{"modes reordered with comma", []string{"MODES=pooled,per-request"}, nil,
			with(func(c *bench.Config) { c.Modes = []string{"pooled", "per-request"} })},
		{"server delay bounds", []string{"SERVER_DELAY_MS=0"}, nil,
			with(func(c *bench.Config) { c.ServerDelayMS = 0 })},
		{"tls 1.3", []string{"PER_REQUEST_TLS=1.3"}, nil,
			with(func(c *bench.Config) { c.PerRequestTLS = "1.3" })},
		{"rtt sweep with handshake", []string{"RTTS=1 3 10 50 150 380", "TCP_HANDSHAKE=on", "BULK=500"}, nil,
			with(func(c *bench.Config) { c.RTTs, c.TCPHandshake, c.Bulk = []int{1, 3, 10, 50, 150, 380}, "on", 500 })},
		{"out, images, profile", []string{"OUT=out/x", "LAB_IMAGES=offline", "PROFILE=vendormock/profiles/alimtalk"}, nil,
			with(func(c *bench.Config) {
				c.Out, c.LabImages, c.Profile = "out/x", "offline", "vendormock/profiles/alimtalk"
			})},
		{"keepalive as duration", []string{"KEEPALIVE_TIMEOUT=75s"}, nil,
			with(func(c *bench.Config) { c.KeepaliveTimeout = 75 * time.Second })},
		{"keepalive as whole seconds", []string{"KEEPALIVE_TIMEOUT=5"}, nil,
			with(func(c *bench.Config) { c.KeepaliveTimeout = 5 * time.Second })},
		{"from environment", nil, map[string]string{"COUNT": "7", "RTTS": "10", "MODES": "pooled"},
			with(func(c *bench.Config) { c.Count, c.RTTs, c.Modes = 7, []int{10}, []string{"pooled"} })},
		{"word wins over environment", []string{"COUNT=9"}, map[string]string{"COUNT": "7", "WARMUP": "3"},
			with(func(c *bench.Config) { c.Count, c.Warmup = 9, 3 })},
		{"word wins over invalid environment", []string{"COUNT=9"}, map[string]string{"COUNT": "abc"},
			with(func(c *bench.Config) { c.Count = 9 })},
		{"empty environment is unset", nil, map[string]string{"COUNT": ""}, def},
		{"later word wins", []string{"COUNT=1", "COUNT=2"}, nil,
			with(func(c *bench.Config) { c.Count = 2 })},
		{"unrelated environment ignored", nil, map[string]string{"HOME": "/root", "FOO": "x"}, def},
		{"replicas, postgres, quorum", []string{"WORKERS=2", "LEDGER=postgres", "QUEUE_TYPE=quorum"}, nil,
			with(func(c *bench.Config) { c.Workers, c.Ledger, c.QueueType = 2, "postgres", "quorum" })},
		{"workers from environment", nil, map[string]string{"WORKERS": "3"},
			with(func(c *bench.Config) { c.Workers = 3 })},
		{"thresholds", []string{"THRESHOLD_P99_MS=32.5"}, map[string]string{"THRESHOLD_CONNECTIONS": "4"},
			with(func(c *bench.Config) { c.Thresholds = bench.Thresholds{P99MS: 32.5, Connections: 4} })},
		{"competing on postgres, rate limit", []string{"WORKERS=4", "ACTIVE=competing", "LEDGER=postgres", "RATE_LIMIT=50"}, nil,
			with(func(c *bench.Config) { c.Workers, c.Active, c.Ledger, c.RateLimit = 4, "competing", "postgres", 50 })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseKeys(tt.args, envOf(tt.env))
			if err != nil {
				t.Fatalf("parseKeys(%q) error: %v", tt.args, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseKeys(%q)\n got %+v\nwant %+v", tt.args, got, tt.want)
			}
		})
	}
}

func TestParseArgsNilGetenv(t *testing.T) {
	got, err := parseKeys([]string{"COUNT=3"}, nil)
	if err != nil || got.Count != 3 {
		t.Fatalf("parseKeys with nil getenv = %+v, %v; want Count 3", got, err)
	}
}

func TestParseArgsErrors(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		wantKey   string
		wantSrc   string
		wantInMsg []string // substrings of Error()
	}{
		{"word without equals", []string{"COUNT"}, nil, "", "argument",
			[]string{"KEY=VALUE", "COUNT", "WARMUP", "RTTS", "MODES", "PROFILE"}},
		{"unknown key", []string{"COUNTS=3"}, nil, "COUNTS", "argument",
			[]string{"unknown key", "known keys: COUNT, WARMUP, RTTS, MODES, SERVER_DELAY_MS, PER_REQUEST_TLS, OUT, LAB_IMAGES, KEEPALIVE_TIMEOUT, ARRIVALS, CLIENT_IDLE, TIME_SCALE, PROFILE"}},
		{"lower-case key is unknown", []string{"count=3"}, nil, "count", "argument", []string{"known keys"}},
		{"count not a number", []string{"COUNT=abc"}, nil, "COUNT", "argument", []string{"not a whole number", ">= 1"}},
		{"count zero", []string{"COUNT=0"}, nil, "COUNT", "argument", []string{"out of range", ">= 1"}},
		{"count negative", []string{"COUNT=-5"}, nil, "COUNT", "argument", []string{"out of range"}},
		{"count empty", []string{"COUNT="}, nil, "COUNT", "argument", []string{"not a whole number"}},
		{"count from env invalid", nil, map[string]string{"COUNT": "abc"}, "COUNT", "environment", []string{"environment", "not a whole number"}},
		{"warmup negative", []string{"WARMUP=-1"}, nil, "WARMUP", "argument", []string{">= 0"}},
		{"warmup float", []string{"WARMUP=1.5"}, nil, "WARMUP", "argument", []string{"not a whole number"}},
		{"rtt negative", []string{"RTTS=-3"}, nil, "RTTS", "argument", []string{"out of range", "0..1000"}},
		{"rtt too large", []string{"RTTS=3 1001"}, nil, "RTTS", "argument", []string{"out of range"}},
		{"rtt not a number", []string{"RTTS=3ms"}, nil, "RTTS", "argument", []string{"not a whole number"}},
		{"rtt empty", []string{"RTTS= , "}, nil, "RTTS", "argument", []string{"no RTT"}},
		{"rtt duplicate", []string{"RTTS=3 3"}, nil, "RTTS", "argument", []string{"twice"}},
		{"mode unknown", []string{"MODES=foo"}, nil, "MODES", "argument", []string{`"foo"`, "per-request, per-request-resume, pooled"}},
		{"mode one bad of two", []string{"MODES=pooled,keepalive"}, nil, "MODES", "argument", []string{"keepalive", "per-request, per-request-resume, pooled"}},
		{"mode duplicate", []string{"MODES=pooled pooled"}, nil, "MODES", "argument", []string{"twice"}},
		{"profile missing", []string{"PROFILE=no/such/profile"}, nil, "PROFILE", "argument", []string{"not a directory"}},
		{"worker state unknown", []string{"WORKER_STATE=ram"}, nil, "WORKER_STATE", "argument", []string{`"ram"`, "tmpfs, disk"}},
		{"workers zero", []string{"WORKERS=0"}, nil, "WORKERS", "argument", []string{"out of range", "1..8"}},
		{"workers not a number", []string{"WORKERS=two"}, nil, "WORKERS", "argument", []string{"not a whole number", "1..8"}},
		{"competing on bbolt", []string{"WORKERS=2", "ACTIVE=competing"}, nil, "ACTIVE", "argument", []string{"send one message twice", "LEDGER=postgres"}},
		{"active unknown", []string{"ACTIVE=partitioned"}, nil, "ACTIVE", "argument", []string{`"partitioned"`, "single, competing"}},
		{"rate limit negative", []string{"RATE_LIMIT=-1"}, nil, "RATE_LIMIT", "argument", []string{"out of range", "0..10000"}},
		{"ledger unknown", []string{"LEDGER=sqlite"}, nil, "LEDGER", "argument", []string{`"sqlite"`, "bbolt, postgres"}},
		{"ledger url is not a choice", []string{"LEDGER=postgres://x"}, nil, "LEDGER", "argument", []string{"bbolt, postgres"}},
		{"queue type unknown", nil, map[string]string{"QUEUE_TYPE": "stream"}, "QUEUE_TYPE", "environment", []string{`"stream"`, "classic, quorum"}},
		{"cpu profile not on/off", []string{"CPU_PROFILE=yes"}, nil, "CPU_PROFILE", "argument", []string{"off, on"}},
		{"tcp handshake not on/off", []string{"TCP_HANDSHAKE=true"}, nil, "TCP_HANDSHAKE", "argument", []string{`"true"`, "off, on"}},
		{"bulk zero", []string{"BULK=0"}, nil, "BULK", "argument", []string{"out of range", "1..100000000"}},
		{"rtt sweep one out of range", []string{"RTTS=1 3 10 50 150 380 2000"}, nil, "RTTS", "argument", []string{`"2000"`, "out of range", "0..1000"}},
		{"mode empty", []string{"MODES="}, nil, "MODES", "argument", []string{"no mode"}},
		{"p99 threshold zero", []string{"THRESHOLD_P99_MS=0"}, nil, "THRESHOLD_P99_MS", "argument", []string{"out of range"}},
		{"p99 threshold not a number", []string{"THRESHOLD_P99_MS=30ms"}, nil, "THRESHOLD_P99_MS", "argument", []string{"not a number"}},
		{"p99 threshold NaN", []string{"THRESHOLD_P99_MS=NaN"}, nil, "THRESHOLD_P99_MS", "argument", []string{"not a number"}},
		{"connections threshold zero", nil, map[string]string{"THRESHOLD_CONNECTIONS": "0"}, "THRESHOLD_CONNECTIONS", "environment", []string{"out of range", ">= 1"}},
		{"server delay too large", []string{"SERVER_DELAY_MS=10001"}, nil, "SERVER_DELAY_MS", "argument", []string{"0..10000"}},
		{"server delay negative", []string{"SERVER_DELAY_MS=-1"}, nil, "SERVER_DELAY_MS", "argument", []string{"out of range"}},
		{"tls 1.1", []string{"PER_REQUEST_TLS=1.1"}, nil, "PER_REQUEST_TLS", "argument", []string{"1.2, 1.3"}},
		{"tls spelled out", []string{"PER_REQUEST_TLS=TLSv1.2"}, nil, "PER_REQUEST_TLS", "argument", []string{"1.2, 1.3"}},
		{"out empty", []string{"OUT="}, nil, "OUT", "argument", []string{"empty path"}},
		{"profile empty", []string{"PROFILE= "}, nil, "PROFILE", "argument", []string{"empty path"}},
		{"lab images unknown", []string{"LAB_IMAGES=docker"}, nil, "LAB_IMAGES", "argument", []string{"official, offline, auto"}},
		{"lab images from env", nil, map[string]string{"LAB_IMAGES": "local"}, "LAB_IMAGES", "environment", []string{"official, offline, auto"}},
		{"keepalive not a duration", []string{"KEEPALIVE_TIMEOUT=soon"}, nil, "KEEPALIVE_TIMEOUT", "argument", []string{"not a duration"}},
		{"keepalive too short", []string{"KEEPALIVE_TIMEOUT=1s"}, nil, "KEEPALIVE_TIMEOUT", "argument", []string{"out of range"}},
		{"keepalive too long", []string{"KEEPALIVE_TIMEOUT=2h"}, nil, "KEEPALIVE_TIMEOUT", "argument", []string{"out of range"}},
		{"keepalive leaves no idle time", []string{"KEEPALIVE_TIMEOUT=2s", "RTTS=1000"}, nil, "KEEPALIVE_TIMEOUT", "argument", []string{"no idle time"}},
		{"keepalive from env leaves no idle time", []string{"RTTS=1000"}, map[string]string{"KEEPALIVE_TIMEOUT": "2s"}, "KEEPALIVE_TIMEOUT", "environment", []string{"environment"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseKeys(tt.args, envOf(tt.env))
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("parseKeys(%q, %v) error = %v; want *UsageError", tt.args, tt.env, err)
			}
			if ue.Key != tt.wantKey || ue.Source != tt.wantSrc {
				t.Errorf("UsageError key %q source %q; want %q %q", ue.Key, ue.Source, tt.wantKey, tt.wantSrc)
			}
			for _, s := range tt.wantInMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestUsageNamesEveryKey(t *testing.T) {
	var b strings.Builder
	if err := usage(&b); err != nil {
		t.Fatal(err)
	}
	for _, k := range namesOf(cmdRun) {
		if !strings.Contains(b.String(), "\n  "+k+"=") {
			t.Errorf("Usage does not explain %s:\n%s", k, b.String())
		}
	}
	for _, s := range []string{defaultModes(), defaultRTTs(), "official, offline, auto", "1.2, 1.3"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("Usage does not mention %q", s)
		}
	}
}
