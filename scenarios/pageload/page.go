package pageload

import (
	"bytes"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
)

// Page names and geometry.
const (
	// ImageSide is each image's width and height, px: 24 x 24 pixels of
	// seeded noise, about 1.8 KB as PNG (noise does not compress), a
	// "small static resource" as in study C.
	ImageSide = 24
	// BackendPage is the backend-bound page's name: its HTML and one API
	// call (fetch of api/slow, started from the head) that waits on
	// WireMock's delay, and nothing else.
	BackendPage = "backend"
)

// PageName is the file stem of the page with n images: "p100".
func PageName(n int) string { return fmt.Sprintf("p%d", n) }

// ImageName is the i-th image's path in the page folder (i from 0).
func ImageName(i int) string { return fmt.Sprintf("img/i%03d.png", i) }

// pageData is what the page template renders.
type pageData struct {
	Title  string
	Images []string
	API    bool
}

// pageTemplate is every page: relative URLs only, so a page loaded as
// /run/<load id>/p100.html asks for /run/<load id>/img/..., which tags
// every request with its load in nginx's access log. The data: icon stops
// the browser's favicon request. The backend page starts its API call
// from the head, before any image, and marks the answer's arrival.
var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{.Title}}</title>
<link rel="icon" href="data:,">
{{- if .API}}
<script>
window.__labAPIDone = false;
fetch("api/slow", {cache: "no-store"}).then(r => r.json()).then(j => {
  document.getElementById("api").textContent = "backend: " + j.items + " items";
  window.__labAPIDone = true;
}).catch(e => { window.__labAPIError = String(e); window.__labAPIDone = true; });
</script>
{{- end}}
<style>img{width:24px;height:24px;margin:1px}</style>
</head><body>
<h1>{{.Title}}</h1>
{{- if .API}}
<p id="api">waiting for the backend</p>
{{- end}}
<div>
{{- range .Images}}
<img src="{{.}}" alt="">
{{- end}}
</div>
</body></html>
`))

// WritePages writes into dir (created) the page of each n in ns
// (PageName(n)+".html" with images 0..n-1), the backend page
// (BackendPage+".html": its one API call) and the max(ns) images
// (ImageName), each a distinct PNG. It
// returns the images' total bytes. Errors: ns empty or holding n < 1,
// the file system's.
func WritePages(dir string, ns []int) (imageBytes int64, err error) {
	if len(ns) == 0 || slices.Min(ns) < 1 {
		return 0, fmt.Errorf("write pages: resources per page %v: want at least one count, each >= 1", ns)
	}
	if err := os.MkdirAll(filepath.Join(dir, "img"), 0o755); err != nil {
		return 0, fmt.Errorf("write pages: %w", err)
	}
	most := slices.Max(ns)
	for i := range most {
		b, err := ImagePNG(i)
		if err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(dir, ImageName(i)), b, 0o644); err != nil {
			return 0, fmt.Errorf("write pages: %w", err)
		}
		imageBytes += int64(len(b))
	}
	write := func(name string, d pageData) error {
		var b bytes.Buffer
		if err := pageTemplate.Execute(&b, d); err != nil {
			return fmt.Errorf("render %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".html"), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write pages: %w", err)
		}
		return nil
	}
	images := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = ImageName(i)
		}
		return out
	}
	for _, n := range ns {
		if err := write(PageName(n), pageData{Title: fmt.Sprintf("%d small images", n), Images: images(n)}); err != nil {
			return 0, err
		}
	}
	if err := write(BackendPage, pageData{Title: "a page bound by its backend", API: true}); err != nil {
		return 0, err
	}
	return imageBytes, nil
}

// ImagePNG is image i: ImageSide x ImageSide pixels of noise seeded by i,
// so every image differs from every other one.
func ImagePNG(i int) ([]byte, error) {
	rng := rand.New(rand.NewPCG(uint64(i)+1, 0x9e3779b97f4a7c15))
	img := image.NewNRGBA(image.Rect(0, 0, ImageSide, ImageSide))
	for y := range ImageSide {
		for x := range ImageSide {
			v := rng.Uint32()
			img.Set(x, y, color.NRGBA{R: uint8(v), G: uint8(v >> 8), B: uint8(v >> 16), A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("encode image %d: %w", i, err)
	}
	return b.Bytes(), nil
}
