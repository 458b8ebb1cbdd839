package results

import (
	"math"
	"slices"
)

// Production figures of the case's follow-up (docs/case.md, "Production
// follow-up"): the vendor call's median before the fix (a new connection
// each), after it (gaps and the JDK client's 30 s idle close), and of the
// sends that reused a connection, ms; and the JDK client's idle timeout, s.
const (
	CaseBeforeP50MS = 28.2
	CaseAfterP50MS  = 21.4
	CaseReusedP50MS = 11.0
	CaseClientIdleS = 30.0
)

// GapSend is one measured send of a run with gaps.
type GapSend struct {
	// GapS is the time the worker was idle before this send (its
	// handling start minus the previous message's end), in the case's
	// time: the run's gap times TimeScale, s.
	GapS   float64 `json:"gap_s"`
	MS     float64 `json:"ms"`     // httptrace total of the send, ms
	Reused bool    `json:"reused"` // the send reused a kept connection
}

// GapStats is the latency of a set of sends: how many, how many reused a
// connection, and the medians (nearest rank) of all, of the reused and of
// the new-connection ones, ms (0 when the set is empty: JSON has no NaN).
type GapStats struct {
	N           int     `json:"n"`
	Reused      int     `json:"reused"`
	P50MS       float64 `json:"p50_ms"`
	P50ReusedMS float64 `json:"p50_reused_ms"`
	P50NewMS    float64 `json:"p50_new_ms"`
}

// ReuseShare is Reused / N, NaN when N is 0.
func (s GapStats) ReuseShare() float64 {
	if s.N == 0 {
		return math.NaN()
	}
	return float64(s.Reused) / float64(s.N)
}

// GapBucket is the sends whose gap lies in [LoS, HiS), case time, s;
// HiS is 0 for the last bucket, which has no upper end.
type GapBucket struct {
	LoS float64 `json:"lo_s"`
	HiS float64 `json:"hi_s"`
	GapStats
}

// GapStudy is a run with gaps between arrivals: the arrival process, the
// time scale, the client's idle timeout in case time, every measured send
// and their split by gap.
type GapStudy struct {
	Arrivals string `json:"arrivals"` // ARRIVALS, e.g. "poisson:45s"
	// TimeScale is TIME_SCALE: the run divided every gap and both idle
	// timeouts by it; the figures here are multiplied back (case time).
	TimeScale int `json:"time_scale"`
	// ClientIdleS is the pooled client's idle timeout in case time, s
	// (CLIENT_IDLE, or the lab's default below nginx's): the bucket
	// edges are fractions of it, whatever the run's client strategy.
	ClientIdleS float64 `json:"client_idle_s"`
	// KeepaliveS is nginx's keepalive_timeout in case time, s.
	KeepaliveS float64     `json:"keepalive_s"`
	Sends      []GapSend   `json:"sends"`
	Overall    GapStats    `json:"overall"`
	Buckets    []GapBucket `json:"buckets"`
}

// GapEdgeFractions are the bucket edges as fractions of the client's idle
// timeout: a bucket ends exactly where the gap passes it (1).
var GapEdgeFractions = []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3}

// StatsOf returns the GapStats of sends.
func StatsOf(sends []GapSend) GapStats {
	var all, reused, fresh []float64
	for _, s := range sends {
		all = append(all, s.MS)
		if s.Reused {
			reused = append(reused, s.MS)
		} else {
			fresh = append(fresh, s.MS)
		}
	}
	for _, v := range [][]float64{all, reused, fresh} {
		slices.Sort(v)
	}
	return GapStats{N: len(all), Reused: len(reused), P50MS: median(all), P50ReusedMS: median(reused), P50NewMS: median(fresh)}
}

// median is the nearest-rank median of sorted v, 0 when v is empty.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return Percentile(v, 0.5)
}

// SplitGaps splits sends into buckets at idleS x GapEdgeFractions (case
// time, s; idleS > 0), the first from 0 and the last open-ended; every
// bucket is returned, empty ones with N 0.
func SplitGaps(sends []GapSend, idleS float64) []GapBucket {
	edges := []float64{0}
	for _, f := range GapEdgeFractions {
		edges = append(edges, f*idleS)
	}
	edges = append(edges, math.Inf(1))
	out := make([]GapBucket, 0, len(edges)-1)
	for i := range len(edges) - 1 {
		var in []GapSend
		for _, s := range sends {
			if s.GapS >= edges[i] && s.GapS < edges[i+1] {
				in = append(in, s)
			}
		}
		hi := edges[i+1]
		if math.IsInf(hi, 1) {
			hi = 0
		}
		out = append(out, GapBucket{LoS: edges[i], HiS: hi, GapStats: StatsOf(in)})
	}
	return out
}

// NewGapStudy fills Overall and Buckets of a study from its Sends and
// ClientIdleS.
func NewGapStudy(arrivals string, scale int, idleS, keepaliveS float64, sends []GapSend) *GapStudy {
	return &GapStudy{Arrivals: arrivals, TimeScale: scale, ClientIdleS: idleS, KeepaliveS: keepaliveS,
		Sends: sends, Overall: StatsOf(sends), Buckets: SplitGaps(sends, idleS)}
}

// GapShape is the case's shape checked on a study: the overall median
// lies strictly between the reused and the new-connection medians, and
// the reuse share falls where the gap passes the client's idle timeout
// (the buckets wholly below it reuse at least MinReuseBelow of their
// sends, those wholly above at most MaxReuseAbove).
type GapShape struct {
	MedianBetween bool
	ReuseBelow    float64 // reuse share of the sends with gaps below the idle timeout (NaN: none)
	ReuseAbove    float64 // reuse share of the sends with gaps at or above it (NaN: none)
	ReuseFalls    bool
}

// Bounds of GapShape.ReuseFalls.
const (
	MinReuseBelow = 0.9
	MaxReuseAbove = 0.1
)

// Shape checks the case's shape on g.
func (g *GapStudy) Shape() GapShape {
	o := g.Overall
	lo, hi := min(o.P50ReusedMS, o.P50NewMS), max(o.P50ReusedMS, o.P50NewMS)
	sh := GapShape{MedianBetween: o.Reused > 0 && o.Reused < o.N && o.P50MS > lo && o.P50MS < hi}
	var below, above []GapSend
	for _, s := range g.Sends {
		if s.GapS < g.ClientIdleS {
			below = append(below, s)
		} else {
			above = append(above, s)
		}
	}
	sh.ReuseBelow, sh.ReuseAbove = StatsOf(below).ReuseShare(), StatsOf(above).ReuseShare()
	sh.ReuseFalls = sh.ReuseBelow >= MinReuseBelow && sh.ReuseAbove <= MaxReuseAbove
	return sh
}
