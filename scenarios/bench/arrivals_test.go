package bench

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseArrivals(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "gaps.txt")
	os.WriteFile(good, []byte("# production gaps\n45s\n\n2\n750ms\n"), 0o644)
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("45s\nsoon\n"), 0o644)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("# nothing\n\n"), 0o644)
	for _, tt := range []struct {
		in      string
		kind    string
		gap     time.Duration
		file    []time.Duration
		wantErr string
	}{
		{in: "back-to-back", kind: ArrivalsBackToBack},
		{in: "poisson:45s", kind: ArrivalsPoisson, gap: 45 * time.Second},
		{in: "fixed:40", kind: ArrivalsFixed, gap: 40 * time.Second},
		{in: "fixed:750ms", kind: ArrivalsFixed, gap: 750 * time.Millisecond},
		{in: "file:" + good, kind: ArrivalsFile, file: []time.Duration{45 * time.Second, 2 * time.Second, 750 * time.Millisecond}},
		{in: "back-to-back:1s", wantErr: "takes no argument"},
		{in: "poisson", wantErr: "needs a gap"},
		{in: "poisson:", wantErr: "needs a gap"},
		{in: "poisson:0s", wantErr: "outside"},
		{in: "fixed:-1s", wantErr: "outside"},
		{in: "fixed:25h", wantErr: "outside"},
		{in: "fixed:soon", wantErr: "not a duration"},
		{in: "burst:3", wantErr: "unknown arrival process"},
		{in: "file:", wantErr: "needs a path"},
		{in: "file:" + bad, wantErr: "line 2"},
		{in: "file:" + empty, wantErr: "holds no gap"},
		{in: "file:" + filepath.Join(dir, "none"), wantErr: "read gap file"},
	} {
		a, err := ParseArrivals(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseArrivals(%q) = %v, want an error with %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseArrivals(%q): %v", tt.in, err)
			continue
		}
		if a.Kind != tt.kind || a.Gap != tt.gap || !slices.Equal(a.File, tt.file) || a.Spec != tt.in {
			t.Errorf("ParseArrivals(%q) = %+v", tt.in, a)
		}
	}
}

// TestArrivalGaps: a seeded poisson process gives the same gaps for the
// same seed and others for another, with about the asked mean; fixed and
// file gaps are exact and repeat; every gap is divided by the scale.
func TestArrivalGaps(t *testing.T) {
	p, _ := ParseArrivals("poisson:40s")
	a, b := p.Gaps(10000, 1, ArrivalSeed), p.Gaps(10000, 1, ArrivalSeed)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed gave different gaps")
	}
	if c := p.Gaps(10000, 1, ArrivalSeed+1); slices.Equal(a, c) {
		t.Error("another seed gave the same gaps")
	}
	mean := sumGaps(a) / time.Duration(len(a))
	if mean < 38*time.Second || mean > 42*time.Second {
		t.Errorf("mean gap %s over 10,000 draws, want 40s within 5%%", mean)
	}
	var above int
	for _, g := range a {
		if g > 40*time.Second {
			above++
		}
	}
	// Exponential: P(gap > mean) = 1/e = 36.8%.
	if share := float64(above) / float64(len(a)); share < 0.34 || share > 0.40 {
		t.Errorf("%.3f of gaps above the mean, want about 1/e (0.368): not exponential", share)
	}
	scaled := p.Gaps(10000, 40, ArrivalSeed)
	for i := range scaled {
		if want := a[i] / 40; scaled[i] != want {
			t.Fatalf("gap %d scaled by 40 = %s, want %s", i, scaled[i], want)
		}
	}
	f, _ := ParseArrivals("fixed:30s")
	if g := f.Gaps(3, 10, 0); !slices.Equal(g, []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second}) {
		t.Errorf("fixed:30s at scale 10 = %v", g)
	}
	file := Arrivals{Kind: ArrivalsFile, File: []time.Duration{time.Second, 2 * time.Second}}
	if g := file.Gaps(5, 1, 0); !slices.Equal(g, []time.Duration{time.Second, 2 * time.Second, time.Second, 2 * time.Second, time.Second}) {
		t.Errorf("file gaps = %v, want them in order, repeated", g)
	}
	if g := (Arrivals{}).Gaps(5, 1, 0); g != nil {
		t.Errorf("back-to-back gaps = %v, want none", g)
	}
}
