package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// checkKeysDoc returns nil when doc holds exactly the generated key table
// between its markers, else an error saying how to fix it.
func checkKeysDoc(doc string) error {
	var want strings.Builder
	if err := keysMarkdown(&want); err != nil {
		return err
	}
	_, after, ok := strings.Cut(doc, keysBegin)
	if !ok {
		return errors.New("no generated key table (marker missing)")
	}
	body, _, ok := strings.Cut(after, keysEnd)
	if !ok {
		return errors.New("the generated key table has no end marker")
	}
	if keysBegin+body+keysEnd+"\n" != want.String() {
		return errors.New("the key table differs from scenarios/cmd/lab/keys.go: regenerate it with go run ./scenarios/cmd/lab keys --markdown")
	}
	return nil
}

// TestRunningDocKeys: docs/running.md's key table is the one keys.go
// generates; the negative controls (a changed default, a missing key)
// fail the same check.
func TestRunningDocKeys(t *testing.T) {
	root, ok := vendormock.FindRepoRoot()
	if !ok {
		t.Fatal("no go.mod above the working directory")
	}
	raw, err := os.ReadFile(filepath.Join(root, "docs", "running.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	if err := checkKeysDoc(doc); err != nil {
		t.Errorf("docs/running.md: %v", err)
	}
	for name, planted := range map[string]string{
		"changed default": strings.Replace(doc, "| `COUNT` | `1000` |", "| `COUNT` | `999` |", 1),
		"missing key":     strings.Replace(doc, "| `DRIVERS` |", "| `DRIVER` |", 1),
		"no table":        strings.Replace(doc, keysBegin, "", 1),
	} {
		if planted == doc {
			t.Fatalf("%s: the plant changed nothing", name)
		}
		if checkKeysDoc(planted) == nil {
			t.Errorf("%s: the check passed a wrong table", name)
		}
	}
}

// TestKeysOneNamePerIdea: no two keys share a name or an old name, and
// the matrix's old names are no key's current name.
func TestKeysOneNamePerIdea(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range keys {
		for _, n := range []string{k.name, k.old} {
			if n == "" {
				continue
			}
			if seen[n] {
				t.Errorf("%s names two keys", n)
			}
			seen[n] = true
		}
		if k.in == 0 || k.show == nil || k.set == nil || k.help == "" || k.allowed == "" {
			t.Errorf("%s: incomplete entry", k.name)
		}
	}
}
