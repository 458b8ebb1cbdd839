package results

import (
	"math"
	"testing"
)

func TestLatencyCDFOf(t *testing.T) {
	sorted := []float64{10, 20, 30, 40}
	got := LatencyCDFOf(sorted, 5) // q = 0, .25, .5, .75, 1
	want := []CDFPoint{{Q: 0, MS: 10}, {Q: 0.25, MS: 10}, {Q: 0.5, MS: 20}, {Q: 0.75, MS: 30}, {Q: 1, MS: 40}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("point %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if LatencyCDFOf(nil, 5) != nil || LatencyCDFOf(sorted, 1) != nil {
		t.Error("empty data or n < 2 must give nil")
	}
}

func TestPercentile(t *testing.T) {
	oneTo := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(i + 1)
		}
		return s
	}
	tests := []struct {
		name   string
		sorted []float64
		q      float64
		want   float64
	}{
		{"p50 of 1..100", oneTo(100), 0.50, 50},
		{"p90 of 1..100", oneTo(100), 0.90, 90},
		{"p99 of 1..100", oneTo(100), 0.99, 99},
		{"p100 of 1..100", oneTo(100), 1, 100},
		{"p50 of 1..10", oneTo(10), 0.50, 5},
		{"p99 of 1..10 is the max (nearest rank)", oneTo(10), 0.99, 10},
		{"p50 of even pair is the lower, no interpolation", []float64{20, 30}, 0.5, 20},
		{"p50 of one", []float64{7.5}, 0.5, 7.5},
		{"p99 of 1..1000", oneTo(1000), 0.99, 990},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.q); got != tt.want {
				t.Errorf("Percentile(q=%v) = %v; want %v", tt.q, got, tt.want)
			}
		})
	}
	if got := Percentile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("Percentile(empty) = %v; want NaN", got)
	}
}
