package scenarios

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Facts written once (issue 15): the rules of onceRules, each a pattern
// that may match only in the files it names.
var onceRules = []struct {
	name    string
	re      *regexp.Regexp
	scope   func(rel string) bool // the files the rule looks at
	allowed []string              // the files that may match
}{
	{
		// The environment is read at the edge: commands (cmd/), tests and
		// vendormock's images.go (ImagesFromEnv, ReadImagesEnv,
		// EnsureTestcontainersEnv, which only commands and tests call).
		name: "environment read inside a library",
		re:   regexp.MustCompile(`\bos\.(Getenv|LookupEnv|Setenv|Environ)\b`),
		scope: func(rel string) bool {
			return !strings.HasSuffix(rel, "_test.go") && !strings.Contains(rel, "/cmd/") &&
				!strings.HasPrefix(rel, "vendormock/images/") && !strings.HasPrefix(rel, "workers/") &&
				(strings.HasPrefix(rel, "vendormock/") || strings.HasPrefix(rel, "scenarios/") || strings.HasPrefix(rel, "worker/"))
		},
		allowed: []string{"vendormock/images.go"},
	},
	{
		name: "EnsureTestcontainersEnv called inside vendormock (commands and test mains call it)",
		re:   regexp.MustCompile(`\bEnsureTestcontainersEnv\(\)\s*$`),
		scope: func(rel string) bool {
			return strings.HasPrefix(rel, "vendormock/") && !strings.HasSuffix(rel, "_test.go")
		},
		allowed: nil,
	},
	{
		// One "find go.mod upward": vendormock.FindRepoRoot.
		name:    "a go.mod walker besides vendormock.FindRepoRoot",
		re:      regexp.MustCompile(`filepath\.Join\([a-z]\w*, "go\.mod"\)`),
		scope:   func(rel string) bool { return true },
		allowed: []string{"vendormock/root.go"},
	},
	{
		name:    "a second YAML module",
		re:      regexp.MustCompile(`"gopkg\.in/yaml\.v\d"|"github\.com/goccy/go-yaml"|"sigs\.k8s\.io/yaml"|"go\.yaml\.in/yaml/v2"`),
		scope:   func(rel string) bool { return true },
		allowed: nil,
	},
}

// onceViolations scans the .go files under root (the module root) and
// returns one line per match of a rule outside its allowed files.
func onceViolations(root string) ([]string, error) {
	var bad []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, r := range onceRules {
			if !r.scope(rel) || slices.Contains(r.allowed, rel) {
				continue
			}
			for i, line := range strings.Split(string(raw), "\n") {
				if r.re.MatchString(line) {
					bad = append(bad, rel+":"+strconv.Itoa(i+1)+": "+r.name)
				}
			}
		}
		return nil
	})
	return bad, err
}

// TestFactsWrittenOnce: no library reads the environment, vendormock
// applies no testcontainers settings itself, go.mod is found upward in
// one place, and the module uses one YAML module.
func TestFactsWrittenOnce(t *testing.T) {
	bad, err := onceViolations("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestFactsWrittenOnceCatchesAPlant is the check's negative control: a
// planted tree breaking each rule fails, the allowed files pass.
func TestFactsWrittenOnceCatchesAPlant(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"vendormock/stack.go":           "package vendormock\nfunc f() string { return os.Getenv(\"LAB_SESSION\") }\n",
		"vendormock/images.go":          "package vendormock\nfunc g() string { return os.Getenv(\"LAB_IMAGE_NGINX\") }\n",
		"vendormock/brokers.go":         "package vendormock\nfunc h() {\n\tEnsureTestcontainersEnv()\n}\n",
		"scenarios/bench/paths.go":      "package bench\nvar _ = filepath.Join(dir, \"go.mod\")\n",
		"vendormock/root.go":            "package vendormock\nvar _ = filepath.Join(dir, \"go.mod\")\n",
		"worker/vendorapi/status.go":    "package vendorapi\nimport _ \"gopkg.in/yaml.v3\"\n",
		"scenarios/cmd/lab/main.go":     "package main\nvar _ = os.Getenv(\"COUNT\")\n",
		"scenarios/bench/bench_test.go": "package bench\nvar _ = os.Getenv(\"LAB_IMAGE_WORKER\")\n",
	}
	for name, src := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad, err := onceViolations(root)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(bad)
	want := []string{
		"scenarios/bench/paths.go:2: a go.mod walker besides vendormock.FindRepoRoot",
		"vendormock/brokers.go:3: EnsureTestcontainersEnv called inside vendormock (commands and test mains call it)",
		"vendormock/stack.go:2: environment read inside a library",
		"worker/vendorapi/status.go:2: a second YAML module",
	}
	if !slices.Equal(bad, want) {
		t.Errorf("violations of the planted tree:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
}
