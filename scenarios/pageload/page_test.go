package pageload

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestWritePages: every page references exactly its N images, each once,
// by a relative URL that exists in the folder as a distinct 24x24 PNG;
// the backend page has its one API call and no image.
func TestWritePages(t *testing.T) {
	dir := t.TempDir()
	total, err := WritePages(dir, []int{3, 12})
	if err != nil {
		t.Fatal(err)
	}
	src := regexp.MustCompile(`<img src="([^"]+)"`)
	seen := map[string][]byte{}
	var sum int64
	for _, n := range []int{3, 12} {
		b, err := os.ReadFile(filepath.Join(dir, PageName(n)+".html"))
		if err != nil {
			t.Fatal(err)
		}
		refs := src.FindAllStringSubmatch(string(b), -1)
		if len(refs) != n {
			t.Fatalf("%s references %d images; want %d", PageName(n), len(refs), n)
		}
		uniq := map[string]bool{}
		for _, m := range refs {
			ref := m[1]
			if strings.HasPrefix(ref, "/") || strings.Contains(ref, "://") {
				t.Errorf("%s: %q is not relative: the load id in the page's path would not tag it", PageName(n), ref)
			}
			uniq[ref] = true
			if _, ok := seen[ref]; ok {
				continue
			}
			img, err := os.ReadFile(filepath.Join(dir, ref))
			if err != nil {
				t.Fatalf("%s references %s: %v", PageName(n), ref, err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(img))
			if err != nil || cfg.Width != ImageSide || cfg.Height != ImageSide {
				t.Errorf("%s: %v, %dx%d; want a %dx%d PNG", ref, err, cfg.Width, cfg.Height, ImageSide, ImageSide)
			}
			seen[ref] = img
			sum += int64(len(img))
		}
		if len(uniq) != n {
			t.Errorf("%s: %d distinct images of %d", PageName(n), len(uniq), n)
		}
		if strings.Contains(string(b), "fetch(") {
			t.Errorf("%s calls the API; only the backend page does", PageName(n))
		}
	}
	if len(seen) != 12 || sum != total {
		t.Errorf("%d images of %d bytes; WritePages said %d bytes; want 12 images", len(seen), sum, total)
	}
	for a, ba := range seen {
		for b, bb := range seen {
			if a < b && bytes.Equal(ba, bb) {
				t.Errorf("%s and %s are the same image", a, b)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, BackendPage+".html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if n := strings.Count(page, "fetch("); n != 1 || !strings.Contains(page, `fetch("api/slow"`) || strings.Contains(page, "<img") {
		t.Errorf("backend page: %d fetch calls, want one of api/slow and no image:\n%s", n, page)
	}
	if !strings.Contains(page, `rel="icon" href="data:,"`) {
		t.Error("backend page asks for a favicon: an extra request nginx would count")
	}
}

func TestWritePagesRefusesNoCount(t *testing.T) {
	for _, ns := range [][]int{nil, {0}, {10, -1}} {
		if _, err := WritePages(t.TempDir(), ns); err == nil {
			t.Errorf("WritePages(%v) wrote pages", ns)
		}
	}
}

// TestPlan: every page over both protocols once per run, the order of the
// protocols alternating, ids unique.
func TestPlan(t *testing.T) {
	p := Plan([]int{50, 10}, 2)
	if len(p) != 2*3*2 {
		t.Fatalf("%d loads; want 12", len(p))
	}
	want := []string{"r1-p10-h1", "r1-p10-h2", "r1-p50-h1", "r1-p50-h2", "r1-backend-h1", "r1-backend-h2",
		"r2-p10-h2", "r2-p10-h1", "r2-p50-h2", "r2-p50-h1", "r2-backend-h2", "r2-backend-h1"}
	for i, l := range p {
		if l.ID != want[i] {
			t.Errorf("load %d is %s; want %s", i, l.ID, want[i])
		}
	}
	if p[4].Resources != 0 || p[4].Page != BackendPage || p[2].Resources != 50 {
		t.Errorf("pages: %+v, %+v", p[4], p[2])
	}
}
