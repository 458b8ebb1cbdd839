package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/audit"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
)

// TestParseProbesArgs: audit-probes needs OUT naming an audit's folder,
// whose audit.json sets WORKER and PROFILE; anything else is a usage
// error naming OUT before anything starts.
func TestParseProbesArgs(t *testing.T) {
	env := func(string) string { return "" }
	var ue *UsageError
	if _, err := parseProbesArgs(nil, env); !errors.As(err, &ue) || ue.Key != "OUT" {
		t.Errorf("no OUT: %v; want a usage error naming OUT", err)
	}
	empty := t.TempDir()
	if _, err := parseProbesArgs([]string{"OUT=" + empty}, env); !errors.As(err, &ue) || !strings.Contains(err.Error(), "not an audit's folder") {
		t.Errorf("an empty folder: %v; want not an audit's folder", err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{outdir.Marker: "audit-x\n", audit.RulesFile: `{"worker":"python-httpx","profile":"sms"}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := parseProbesArgs([]string{"OUT=" + dir, "IDLE_LADDER=1,3"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Worker != "python-httpx" || cfg.Profile != "sms" || len(cfg.AuditIdleLadder) != 2 {
		t.Errorf("cfg worker %q profile %q ladder %v", cfg.Worker, cfg.Profile, cfg.AuditIdleLadder)
	}
}
