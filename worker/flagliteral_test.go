package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ownFlagSets are folders outside worker/ whose Go code has a command line
// of its own that shares flag names with the worker's.
var ownFlagSets = map[string]string{
	"scenarios/cmd/reconcile":   "the reconciler's own -records, -ledger, -amqp-url and -queue",
	"scenarios/internal/gotest": "go test's own -count",
}

// flagLiteral matches a Go string literal that is a worker flag: "-name",
// "--name" or "-name=value", for every flag in settings and
// directSettings.
func flagLiteral() *regexp.Regexp {
	var names []string
	for _, st := range settings {
		if st.flag != "" {
			names = append(names, regexp.QuoteMeta(st.flag))
		}
	}
	for _, st := range directSettings {
		names = append(names, regexp.QuoteMeta(st.flag))
	}
	return regexp.MustCompile(`["` + "`" + `]--?(` + strings.Join(names, "|") + `)(=[^"` + "`" + `]*)?["` + "`" + `]`)
}

// TestNoWorkerFlagLiteralOutsideWorker: code outside worker/ builds a
// worker's command line with Config.Args (and DirectOptions.Args), never
// from flag strings, so a renamed flag is a compile error, not a worker
// that exits 2 inside Docker. It scans every .go file of the module
// outside worker/ (tests included) for a string literal naming a worker
// flag.
func TestNoWorkerFlagLiteralOutsideWorker(t *testing.T) {
	// go test runs in the package's folder, worker/, one below the
	// module root.
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	hits, err := workerFlagLiterals(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		t.Errorf("%s: a worker flag as a string literal; build a worker.Config and call its Args", h)
	}
}

// workerFlagLiterals returns "path:line: text" for every worker-flag
// literal in the .go files under root, outside worker/ and ownFlagSets.
func workerFlagLiterals(root string) ([]string, error) {
	re := flagLiteral()
	var hits []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			_, own := ownFlagSets[rel]
			if rel == "worker" || own || (rel != "." && strings.HasPrefix(d.Name(), ".")) || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := re.FindString(line); m != "" {
				hits = append(hits, fmt.Sprintf("%s:%d: %s", rel, i+1, m))
			}
		}
		return nil
	})
	return hits, err
}

// TestFlagLiteralMatches is the check's control: it finds a planted
// literal in each form and leaves other strings alone.
func TestFlagLiteralMatches(t *testing.T) {
	re := flagLiteral()
	for _, s := range []string{`"-max-messages"`, `"--ledger"`, `"-idle-conn-timeout=5s"`, "`-records`", `"-count"`} {
		if !re.MatchString(s) {
			t.Errorf("%s: not found", s)
		}
	}
	for _, s := range []string{`"-h2"`, `"-pool%d"`, `"-rabbit loopback_users []"`, `"max-messages"`, `"-https-c8"`} {
		if re.MatchString(s) {
			t.Errorf("%s: found, but it is not a worker flag", s)
		}
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "scenarios"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scenarios", "planted.go"), []byte("package x\n\nvar a = []string{\"-queue\", \"q\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hits, err := workerFlagLiterals(dir)
	if err != nil || len(hits) != 1 || !strings.HasPrefix(hits[0], "scenarios/planted.go:3:") {
		t.Errorf("planted literal: hits %q, err %v; want scenarios/planted.go:3", hits, err)
	}
}
