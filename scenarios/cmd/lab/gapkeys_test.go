package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
)

// TestGapKeysScale: TIME_SCALE divides nginx's keepalive_timeout (the
// profile's 75 s here) and keeps the case's value; the gaps and the
// client's idle timeout stay in case time in the config (the bench
// divides them).
func TestGapKeysScale(t *testing.T) {
	cfg, err := parseKeys([]string{"ARRIVALS=poisson:40s", "CLIENT_IDLE=30s", "TIME_SCALE=40"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CaseKeepalive != 75*time.Second || cfg.KeepaliveTimeout != 1875*time.Millisecond {
		t.Errorf("keepalive %s (case %s), want 1.875s (75s / 40)", cfg.KeepaliveTimeout, cfg.CaseKeepalive)
	}
	if cfg.ClientIdle != 30*time.Second || cfg.TimeScale != 40 || cfg.Arrivals.Kind != bench.ArrivalsPoisson || cfg.Arrivals.Gap != 40*time.Second {
		t.Errorf("config %+v %+v", cfg.ClientIdle, cfg.Arrivals)
	}
	def, err := parseKeys(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.Arrivals.Paced() || def.KeepaliveTimeout != 0 || def.TimeScaleOr1() != 1 {
		t.Errorf("defaults: arrivals %+v, keepalive %s, scale %d; want back-to-back, the profile's, 1", def.Arrivals, def.KeepaliveTimeout, def.TimeScale)
	}
}

// TestGapKeysRefused: bad values and combinations exit 2 naming the key.
func TestGapKeysRefused(t *testing.T) {
	for _, tt := range []struct {
		args      []string
		key, want string
	}{
		{[]string{"ARRIVALS=poison:3s"}, "ARRIVALS", "unknown arrival process"},
		{[]string{"ARRIVALS=fixed:1s", "WORKERS=2"}, "ARRIVALS", "one Go worker"},
		{[]string{"ARRIVALS=fixed:1s", "SCENARIO=idle-race"}, "ARRIVALS", "scenario"},
		{[]string{"CLIENT_IDLE=74s"}, "CLIENT_IDLE", "vendor would close first"},
		{[]string{"CLIENT_IDLE=30s", "TIME_SCALE=40", "KEEPALIVE_TIMEOUT=40s"}, "CLIENT_IDLE", "vendor would close first"},
		{[]string{"CLIENT_IDLE=10ms"}, "CLIENT_IDLE", "out of range"},
		{[]string{"TIME_SCALE=0"}, "TIME_SCALE", "out of range"},
		{[]string{"TIME_SCALE=x"}, "TIME_SCALE", "not a whole number"},
	} {
		_, err := parseKeys(tt.args, nil)
		var ue *UsageError
		if !errors.As(err, &ue) || ue.Key != tt.key || !strings.Contains(ue.Error(), tt.want) {
			t.Errorf("parseKeys(%q) = %v, want a usage error of %s with %q", tt.args, err, tt.key, tt.want)
		}
	}
}
