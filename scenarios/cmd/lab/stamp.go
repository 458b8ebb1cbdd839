package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// stampUsage is the one line `lab provenance` prints when its words are off.
const stampUsage = "provenance takes --command \"<words>\" and then the result files to stamp (results/**.json or .log)"

// runStamp is `lab provenance --command "mutate ledger" FILE...`: it gives
// the result files a command outside the lab wrote (./run.sh mutate:
// go-gremlins' JSON report and its log) the provenance every lab result
// file carries (docs/results.md, "Provenance"), filled when the stamp is
// made, i.e. at the end of the command it stamps: the commit, the command
// words, the machine (its load then), the date. Images are none (the
// command starts no container). A .json file must hold one JSON object without a
// "provenance" key and gets one; a .log file gets results.Provenance's
// Header as its first lines. A file outside a results folder, of another
// kind, or stamped already is refused before any file is changed (exit 2),
// so the stamp never rewrites what the lab did not write.
func runStamp(rest []string) error {
	if len(rest) < 3 || rest[0] != "--command" || strings.TrimSpace(rest[1]) == "" {
		return fmt.Errorf("%w: %s", errUsage, stampUsage)
	}
	files := rest[2:]
	for _, f := range files {
		if err := stampable(f); err != nil {
			return err
		}
	}
	p := newProvenance(time.Now(), strings.Fields(rest[1])[0], strings.Fields(rest[1])[1:], nil, nil, vendormock.Images{})
	for _, f := range files {
		if err := stampFile(f, p); err != nil {
			return err
		}
	}
	return nil
}

// stampable refuses a file that is not a .json or .log inside a folder
// named results (at any depth), that cannot be read, or that carries a
// provenance already.
func stampable(path string) error {
	ext := filepath.Ext(path)
	if ext != ".json" && ext != ".log" {
		return fmt.Errorf("%w: %s: want a .json or .log result file", errUsage, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if !slices.Contains(strings.Split(filepath.ToSlash(filepath.Dir(abs)), "/"), "results") {
		return fmt.Errorf("%w: %s is not inside a results folder: the lab stamps only its own result files", errUsage, path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if ext == ".log" {
		if bytes.HasPrefix(raw, []byte("Run ")) && bytes.Contains(raw[:min(len(raw), 400)], []byte("Command: `")) {
			return fmt.Errorf("%w: %s carries a provenance already", errUsage, path)
		}
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("%w: %s: want one JSON object: %v", errUsage, path, err)
	}
	if _, ok := obj["provenance"]; ok {
		return fmt.Errorf("%w: %s carries a provenance already", errUsage, path)
	}
	return nil
}

// stampFile writes p into path (stampable checked it).
func stampFile(path string, p *results.Provenance) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var out []byte
	if filepath.Ext(path) == ".log" {
		out = append([]byte(p.Header()), raw...)
	} else {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return err
		}
		if obj["provenance"], err = json.Marshal(p); err != nil {
			return err
		}
		if out, err = json.MarshalIndent(obj, "", "  "); err != nil {
			return err
		}
		out = append(out, '\n')
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return errors.Join(fmt.Errorf("stamp %s", path), err)
	}
	return nil
}
