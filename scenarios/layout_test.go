package scenarios

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is the module path (go.mod).
const module = "github.com/notifier-lab/notifier-lab"

// layout is the dependency direction of the tree (doc.go of each
// package; issue 15): for each package (a folder, or "folder/..." for it
// and everything under it), the folders of this module its non-test
// files may import. A package takes the longest match; a package that
// matches none fails the test, so a new package must take its place here.
//
//	cmd -> audit -> {matrix -> bench, fault}
//	{bench, matrix, fault} -> {report, internal/*}
//	report -> {results, netmodel}
//	results, netmodel: nothing of the driver
//	vendormock: nothing of ours; worker: nothing outside worker/
var layout = map[string][]string{
	"worker/...":                 {"worker"},
	"vendormock/...":             {"vendormock"},
	"scenarios":                  {}, // the package doc only
	"scenarios/netmodel":         {"worker"},
	"scenarios/reconcile":        {"worker", "vendormock"},
	"scenarios/results":          {"worker", "vendormock", "scenarios/reconcile"},
	"scenarios/report":           {"worker", "vendormock", "scenarios/results", "scenarios/netmodel"},
	"scenarios/internal/...":     {"worker", "vendormock", "scenarios/reconcile", "scenarios/internal"},
	"scenarios/bench":            {"worker", "vendormock", "scenarios/reconcile", "scenarios/internal", "scenarios/results", "scenarios/netmodel", "scenarios/report"},
	"scenarios/fault":            {"worker", "vendormock", "scenarios/reconcile", "scenarios/internal", "scenarios/results", "scenarios/netmodel", "scenarios/report"},
	"scenarios/matrix":           {"worker", "vendormock", "scenarios/reconcile", "scenarios/internal", "scenarios/results", "scenarios/netmodel", "scenarios/report", "scenarios/bench"},
	"scenarios/scale":            {"worker", "vendormock", "scenarios/reconcile", "scenarios/internal", "scenarios/results", "scenarios/netmodel", "scenarios/report", "scenarios/bench", "scenarios/matrix"},
	"scenarios/pageload":         {"vendormock", "scenarios/internal", "scenarios/results", "scenarios/report"},
	"scenarios/audit":            {"worker", "vendormock", "scenarios/reconcile", "scenarios/internal", "scenarios/results", "scenarios/netmodel", "scenarios/report", "scenarios/bench", "scenarios/matrix", "scenarios/fault"},
	"scenarios/contractcheck":    {"worker", "vendormock", "scenarios/internal", "docs/schemas"},
	"scenarios/defaults":         {"vendormock", "scenarios/internal", "scenarios/results", "scenarios/report"},
	"scenarios/defaults/cmd/...": {}, // the Go client it measures: the standard library only
	"scenarios/cmd/...":          {"worker", "vendormock", "scenarios"},
	"docs/schemas":               {}, // the contract's JSON schemas, embedded
	"workers/...":                {}, // the reference workers' programs
}

// under reports whether folder p is dir or inside it.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// ruleFor returns the longest key of layout matching pkg.
func ruleFor(pkg string) (string, bool) {
	best, ok := "", false
	for key := range layout {
		dir, tree := strings.CutSuffix(key, "/...")
		if (pkg == dir || tree && under(pkg, dir)) && len(key) >= len(best) {
			best, ok = key, true
		}
	}
	return best, ok
}

// violations parses every non-test .go file under root (the module root)
// and returns one line per import of this module that layout does not
// allow, and per package without a rule.
func violations(root string) ([]string, error) {
	var bad []string
	fset := token.NewFileSet()
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
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rule, ok := ruleFor(pkg)
		if !ok {
			bad = append(bad, pkg+": no rule in layout (add the package's place)")
			return nil
		}
		for _, im := range f.Imports {
			p := strings.Trim(im.Path.Value, `"`)
			dep, ours := strings.CutPrefix(p, module+"/")
			if !ours {
				continue
			}
			if !slices.ContainsFunc(layout[rule], func(dir string) bool { return under(dep, dir) }) {
				bad = append(bad, filepath.ToSlash(filepath.Join(pkg, filepath.Base(path)))+" imports "+dep+" (not allowed for "+rule+")")
			}
		}
		return nil
	})
	slices.Sort(bad)
	return slices.Compact(bad), err
}

// TestLayout: no package of the module imports against the direction
// of layout.
func TestLayout(t *testing.T) {
	bad, err := violations("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestLayoutCatchesAWrongImport is the check's negative control: a tree
// whose report imports the bench, whose vendormock imports the worker and
// whose results import the report fails, and the same tree without those
// imports passes.
func TestLayoutCatchesAWrongImport(t *testing.T) {
	plant := func(t *testing.T, files map[string]string) string {
		t.Helper()
		root := t.TempDir()
		for name, imp := range files {
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			src := "package " + filepath.Base(filepath.Dir(p)) + "\n"
			if imp != "" {
				src += "import _ \"" + module + "/" + imp + "\"\n"
			}
			if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	wrong := plant(t, map[string]string{
		"scenarios/report/x.go":  "scenarios/bench",
		"vendormock/x.go":        "worker/records",
		"scenarios/results/x.go": "scenarios/report",
		"scenarios/newpkg/x.go":  "",
		"scenarios/bench/x.go":   "scenarios/report",
	})
	bad, err := violations(wrong)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"scenarios/newpkg: no rule in layout (add the package's place)",
		"scenarios/report/x.go imports scenarios/bench (not allowed for scenarios/report)",
		"scenarios/results/x.go imports scenarios/report (not allowed for scenarios/results)",
		"vendormock/x.go imports worker/records (not allowed for vendormock/...)",
	}
	if !slices.Equal(bad, want) {
		t.Errorf("violations of the planted tree:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
	right := plant(t, map[string]string{
		"scenarios/report/x.go":  "scenarios/results",
		"vendormock/x.go":        "vendormock/journal",
		"scenarios/results/x.go": "worker/outcome",
		"scenarios/bench/x.go":   "scenarios/report",
	})
	if bad, err := violations(right); err != nil || len(bad) > 0 {
		t.Errorf("violations of the allowed tree: %v, %v; want none", bad, err)
	}
}
