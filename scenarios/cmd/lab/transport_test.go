package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// TestParseTransportKeys: SCHEME, CONCURRENCY, HTTP_VERSION and POOL_SIZE
// from words and the environment, their defaults, and the errors naming
// what is allowed.
func TestParseTransportKeys(t *testing.T) {
	def, err := parseKeys(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.Scheme != "https" || def.Concurrency != 1 || def.HTTPVersion != "1.1" || def.PoolSize != 0 {
		t.Errorf("defaults %s %d %s %d; want https 1 1.1 0", def.Scheme, def.Concurrency, def.HTTPVersion, def.PoolSize)
	}
	ok := []struct {
		name string
		args []string
		env  map[string]string
		want results.Transport
	}{
		{"mtls h2 at 8", []string{"SCHEME=mtls", "CONCURRENCY=8", "HTTP_VERSION=2"}, nil,
			results.Transport{Scheme: "mtls", Concurrency: 8, HTTPVersion: "2"}},
		{"pool size below the concurrency", []string{"CONCURRENCY=8", "POOL_SIZE=2"}, nil,
			results.Transport{Scheme: "https", Concurrency: 8, HTTPVersion: "1.1", PoolSize: 2}},
		{"plain http from environment", nil, map[string]string{"SCHEME": "http", "CONCURRENCY": "32"},
			results.Transport{Scheme: "http", Concurrency: 32, HTTPVersion: "1.1"}},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseKeys(tt.args, envOf(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Transport(); got != tt.want {
				t.Errorf("transport %+v; want %+v", got, tt.want)
			}
		})
	}
	bad := []struct {
		name, key, want string
		args            []string
		env             map[string]string
	}{
		{"unknown scheme", "SCHEME", "one of http, https, mtls", []string{"SCHEME=ftp"}, nil},
		{"concurrency 0", "CONCURRENCY", "1..256", []string{"CONCURRENCY=0"}, nil},
		{"concurrency too high", "CONCURRENCY", "1..256", nil, map[string]string{"CONCURRENCY": "257"}},
		{"http version 3", "HTTP_VERSION", "1.1 or 2", []string{"HTTP_VERSION=3"}, nil},
		{"negative pool", "POOL_SIZE", "0..1000", []string{"POOL_SIZE=-1"}, nil},
		{"h2 over plain http", "HTTP_VERSION", "https or mtls", []string{"SCHEME=http", "HTTP_VERSION=2"}, nil},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseKeys(tt.args, envOf(tt.env))
			var ue *UsageError
			if !errors.As(err, &ue) || ue.Key != tt.key || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v; want a *UsageError on %s naming %q", err, tt.key, tt.want)
			}
		})
	}
	// Control: h2 over https is fine.
	if _, err := parseKeys([]string{"SCHEME=https", "HTTP_VERSION=2"}, nil); err != nil {
		t.Errorf("https h2: %v", err)
	}
}

// TestUsageListsTransportKeys: --help lists the transport keys with
// their defaults.
func TestUsageListsTransportKeys(t *testing.T) {
	var b strings.Builder
	if err := usage(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SCHEME=https", "CONCURRENCY=1", "HTTP_VERSION=1.1", "POOL_SIZE=0"} {
		if !strings.Contains(b.String(), "  "+want+"\n") {
			t.Errorf("usage lacks %s", want)
		}
	}
}
