package bench

import (
	"slices"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// clientIdle is the pooled client's idle timeout for a run at rtt, run
// time: CLIENT_IDLE divided by TIME_SCALE, or the lab's default one RTT
// and netmodel.IdleConnMargin below the stack's (already scaled)
// keepalive_timeout.
func (b *Bench) clientIdle(rtt int) time.Duration {
	if b.cfg.ClientIdle > 0 {
		return b.cfg.ClientIdle / time.Duration(b.cfg.TimeScaleOr1())
	}
	return netmodel.IdleConnTimeout(b.stack.KeepaliveTimeout, rtt)
}

// gapStudy is the point's split by gap (results.GapStudy) in case time.
func (b *Bench) gapStudy(recs []records.Record, published []reconcile.Published, p *point) *results.GapStudy {
	scale := b.cfg.TimeScaleOr1()
	sends := GapSends(recs, published, scale)
	idle := b.clientIdle(p.rtt) * time.Duration(scale)
	keepalive := b.stack.KeepaliveTimeout * time.Duration(scale)
	return results.NewGapStudy(b.cfg.Arrivals.Spec, scale, idle.Seconds(), keepalive.Seconds(), sends)
}

// GapSends returns, for every measured send of recs (a record of a
// refkey published valid and not warm-up, with a send call), the time
// since the previous send call ended (its handling start minus that
// record's end, in handling order: Seq) times scale, its latency and
// whether it reused a connection. The first send's gap counts from the
// last warm-up send. A send with no send before it is left out.
func GapSends(recs []records.Record, published []reconcile.Published, scale int) []results.GapSend {
	warm := map[string]bool{}
	for _, p := range published {
		if p.Valid && p.RefKey != "" {
			warm[p.RefKey] = p.Warmup
		}
	}
	sorted := slices.Clone(recs)
	slices.SortStableFunc(sorted, func(a, b records.Record) int { return a.Seq - b.Seq })
	var out []results.GapSend
	var prevEnd time.Time
	for _, r := range sorted {
		if r.TotalMS <= 0 || r.NoCall {
			continue
		}
		w, ok := warm[r.RefKey]
		if ok && !w && !prevEnd.IsZero() {
			gap := max(r.Start.Sub(prevEnd), 0)
			out = append(out, results.GapSend{GapS: gap.Seconds() * float64(max(scale, 1)), MS: r.TotalMS, Reused: r.Reused})
		}
		prevEnd = r.End
	}
	return out
}
