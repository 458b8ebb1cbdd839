package audit

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden audit.md")

func TestGoldenReport(t *testing.T) {
	dir, rep := buildFixture(t)
	got, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join(fixtureDir, "audit.golden.md")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("audit.md differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
	if rep.Pass {
		t.Errorf("the fixture's worker opens a connection per send: the audit must fail")
	}
	if len(rep.Charts) != 6 {
		t.Errorf("%d charts inlined; want 6 (five bench charts and the idle race)", len(rep.Charts))
	}
}

func TestHTMLSelfContained(t *testing.T) {
	dir, _ := buildFixture(t)
	b, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"<style>", "<svg", `data-rule="connections-per-send"`, "one new connection per send", "FAIL"} {
		if !strings.Contains(page, want) {
			t.Errorf("audit.html lacks %q", want)
		}
	}
	// Self-contained: nothing to fetch (the SVG namespace URIs are names,
	// not requests).
	for _, bad := range []string{"<script src", "<link", "<img", "@import", "url(http"} {
		if strings.Contains(page, bad) {
			t.Errorf("audit.html contains %q: it must be one self-contained page", bad)
		}
	}
	if strings.Contains(page, "<?xml") {
		t.Errorf("an inlined SVG kept its XML prolog")
	}
}
