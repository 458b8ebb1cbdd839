package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestStampProvenance: a gremlins report and its log inside a results
// folder get the provenance (JSON key, log header) with the command words.
func TestStampProvenance(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results", "mutation")
	js, log := filepath.Join(dir, "ledger.json"), filepath.Join(dir, "ledger.log")
	writeFile(t, js, `{"go_module":"m","files":[]}`)
	writeFile(t, log, "Starting...\n")
	if err := runStamp([]string{"--command", "mutate ledger", js, log}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Module     string `json:"go_module"`
		Provenance struct {
			Command []string `json:"command"`
			Machine struct {
				Cores int `json:"cores"`
			} `json:"machine"`
			Date string `json:"date"`
		} `json:"provenance"`
	}
	if err := json.Unmarshal([]byte(readFile(t, js)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Module != "m" || strings.Join(got.Provenance.Command, " ") != "mutate ledger" || got.Provenance.Machine.Cores < 1 || got.Provenance.Date == "" {
		t.Errorf("stamped json = %+v; want the report kept and command, machine, date", got)
	}
	l := readFile(t, log)
	if !strings.HasPrefix(l, "Run ") || !strings.Contains(l, "Command: `./run.sh mutate ledger`") || !strings.HasSuffix(l, "Starting...\n") {
		t.Errorf("stamped log = %q; want the header, then the log", l)
	}
	// Stamping again is refused and changes nothing.
	before := readFile(t, js)
	if err := runStamp([]string{"--command", "mutate ledger", js}); !errors.Is(err, errUsage) {
		t.Errorf("second stamp: err %v, want a usage error", err)
	}
	if err := runStamp([]string{"--command", "mutate ledger", log}); !errors.Is(err, errUsage) {
		t.Errorf("second stamp of the log: err %v, want a usage error", err)
	}
	if readFile(t, js) != before {
		t.Error("a refused stamp changed the file")
	}
}

// TestStampRefusesBeforeWriting: one file the lab may not stamp (outside a
// results folder, not an object, another kind) refuses the whole call and
// leaves every file as it was.
func TestStampRefusesBeforeWriting(t *testing.T) {
	root := t.TempDir()
	good := filepath.Join(root, "results", "mutation", "window.json")
	writeFile(t, good, `{"files":[]}`)
	for name, bad := range map[string]struct{ path, body string }{
		"outside results": {filepath.Join(root, "home", "notes.json"), `{}`},
		"not an object":   {filepath.Join(root, "results", "list.json"), `[1,2]`},
		"another kind":    {filepath.Join(root, "results", "report.md"), "# r\n"},
	} {
		writeFile(t, bad.path, bad.body)
		err := runStamp([]string{"--command", "mutate window", good, bad.path})
		if !errors.Is(err, errUsage) {
			t.Errorf("%s: err %v, want a usage error", name, err)
		}
		if readFile(t, good) != `{"files":[]}` || readFile(t, bad.path) != bad.body {
			t.Errorf("%s: a refused call changed a file", name)
		}
	}
	if err := runStamp([]string{"mutate", good}); !errors.Is(err, errUsage) {
		t.Errorf("no --command: err %v, want a usage error", err)
	}
}
