package results

import (
	"encoding/json"
	"math"
	"testing"
)

func TestSplitGapsEdges(t *testing.T) {
	sends := []GapSend{
		{GapS: 0, MS: 10, Reused: true},
		{GapS: 29.99, MS: 12, Reused: true},
		{GapS: 30, MS: 30}, // exactly the idle timeout: the first bucket at or above it
		{GapS: 95, MS: 31}, // >= 3 x idle: the open-ended bucket
	}
	bs := SplitGaps(sends, 30)
	if len(bs) != len(GapEdgeFractions)+1 {
		t.Fatalf("%d buckets, want %d", len(bs), len(GapEdgeFractions)+1)
	}
	total := 0
	for _, b := range bs {
		total += b.N
	}
	if total != len(sends) {
		t.Errorf("buckets hold %d sends, want %d (each in exactly one)", total, len(sends))
	}
	if b := bs[0]; b.LoS != 0 || b.HiS != 7.5 || b.N != 1 {
		t.Errorf("first bucket %+v, want [0, 7.5) with 1 send", b)
	}
	if b := bs[3]; b.LoS != 22.5 || b.HiS != 30 || b.N != 1 || b.Reused != 1 {
		t.Errorf("bucket below the idle timeout %+v, want [22.5, 30) with the 29.99 s send", b)
	}
	if b := bs[4]; b.LoS != 30 || b.N != 1 || b.Reused != 0 || b.P50NewMS != 30 {
		t.Errorf("bucket from the idle timeout %+v, want [30, 37.5) with the 30 s send", b)
	}
	if b := bs[len(bs)-1]; b.LoS != 90 || b.HiS != 0 || b.N != 1 {
		t.Errorf("last bucket %+v, want [90, open) with 1 send", b)
	}
	// JSON has no NaN or Inf: an empty bucket and the open end must marshal.
	if _, err := json.Marshal(NewGapStudy("fixed:1s", 1, 30, 75, sends)); err != nil {
		t.Errorf("marshal a study with empty buckets: %v", err)
	}
}

func TestStatsOf(t *testing.T) {
	s := StatsOf([]GapSend{{MS: 11, Reused: true}, {MS: 9, Reused: true}, {MS: 30}, {MS: 10, Reused: true}, {MS: 28}})
	if s.N != 5 || s.Reused != 3 || s.P50MS != 11 || s.P50ReusedMS != 10 || s.P50NewMS != 28 {
		t.Errorf("StatsOf = %+v, want n 5, reused 3, medians 11 / 10 / 28 (nearest rank)", s)
	}
	if e := StatsOf(nil); e.N != 0 || e.P50MS != 0 || !math.IsNaN(e.ReuseShare()) {
		t.Errorf("StatsOf(nil) = %+v, share %v", e, e.ReuseShare())
	}
}

// TestGapShape: the case's shape passes, and each half fails on its own
// negative control.
func TestGapShape(t *testing.T) {
	var shaped []GapSend
	for i := range 100 {
		gap := float64(i) // 0..99 s, idle 30 s: 30 below, 70 at or above
		ms := 25 + gap/10 // a new connection: 28-35 ms
		if gap < 30 {
			ms = 10 + gap/30 // reused: 10-11 ms
		}
		shaped = append(shaped, GapSend{GapS: gap, MS: ms, Reused: gap < 30})
	}
	if sh := NewGapStudy("poisson:40s", 40, 30, 75, shaped).Shape(); !sh.MedianBetween || !sh.ReuseFalls || sh.ReuseBelow != 1 || sh.ReuseAbove != 0 {
		t.Errorf("shaped study: %+v, want both checks to pass", sh)
	}
	// Every send reused (a client that never idles out): no fall, and the
	// median equals the reused one.
	allReused := make([]GapSend, len(shaped))
	for i, s := range shaped {
		allReused[i] = GapSend{GapS: s.GapS, MS: 11, Reused: true}
	}
	if sh := NewGapStudy("poisson:40s", 40, 30, 75, allReused).Shape(); sh.MedianBetween || sh.ReuseFalls {
		t.Errorf("all reused: %+v, want both checks to fail", sh)
	}
	// Reuse falls at the wrong place (10 s instead of 30 s).
	early := make([]GapSend, len(shaped))
	for i, s := range shaped {
		early[i] = GapSend{GapS: s.GapS, MS: 28, Reused: s.GapS < 10}
		if early[i].Reused {
			early[i].MS = 11
		}
	}
	if sh := NewGapStudy("poisson:40s", 40, 30, 75, early).Shape(); sh.ReuseFalls {
		t.Errorf("reuse falling at a third of the idle timeout: %+v, want ReuseFalls false", sh)
	}
}
