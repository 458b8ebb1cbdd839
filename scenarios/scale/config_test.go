package scale

import (
	"math"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// TestPointCountAccountsForConcurrency: a point at concurrency 32 gets
// about 32 times the sends of one at concurrency 1 (both about POINT_S
// long), the machine's ceiling and the rate limit cap the model, and the
// count stays within [MinPointCount, COUNT].
func TestPointCountAccountsForConcurrency(t *testing.T) {
	one := ModelRate(1, 1, 150, 10, 0)
	if want := 1 / 0.163; math.Abs(one-want) > 0.01 {
		t.Errorf("ModelRate(c1, 150 ms) = %.3f, want %.3f (think + RTT + overhead)", one, want)
	}
	c1, c32 := PointCount(100_000, 60, one), PointCount(100_000, 60, ModelRate(32, 1, 150, 10, 0))
	if c32 < 31*c1 || c32 > 33*c1 {
		t.Errorf("concurrency 32 gets %d sends, concurrency 1 %d: want about 32x", c32, c1)
	}
	if got := ModelRate(128, 4, 150, 10, 0); got != MachineSendsPerS {
		t.Errorf("ModelRate(c128, w4) = %.1f, want the machine's ceiling %d", got, MachineSendsPerS)
	}
	if got := ModelRate(128, 4, 150, 10, 100); math.Abs(got-95) > 1e-9 {
		t.Errorf("ModelRate under a 100/s limit = %.2f, want 95 (the workers' pace)", got)
	}
	if got := PointCount(100_000, 1, 0.1); got != MinPointCount {
		t.Errorf("PointCount of a tiny rate = %d, want the floor %d", got, MinPointCount)
	}
	if got := PointCount(500, 60, 800); got != 500 {
		t.Errorf("PointCount above COUNT = %d, want COUNT 500", got)
	}
}

// TestPlan: the default plan is issue 17's grid (4 concurrencies x (the
// bare client + 3 worker counts)), the case series (4 x 2) and one memory
// run at the largest concurrency; keys remove the parts.
func TestPlan(t *testing.T) {
	cfg := DefaultConfig()
	plan := cfg.Plan()
	count := map[string]int{}
	for _, s := range plan {
		count[s.Series+"/"+s.Driver]++
		if s.Count < MinPointCount || s.Count > cfg.Count {
			t.Errorf("%s: count %d out of [%d, %d]", s.Name(), s.Count, MinPointCount, cfg.Count)
		}
	}
	want := map[string]int{"grid/direct": 4, "grid/worker": 12, "case/direct": 4, "case/worker": 4, "soak/worker": 1}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%s: %d points, want %d (plan %v)", k, count[k], n, count)
		}
	}
	soak := plan[len(plan)-1]
	if soak.Series != SeriesSoak || soak.Concurrency != 128 || soak.Workers != 1 || soak.DelayMS != DefaultServerDelayMS {
		t.Errorf("last point %s, want the memory run at c128, 1 worker, %d ms", soak.Name(), DefaultServerDelayMS)
	}
	if want := int(math.Round(ModelRate(128, 1, 150, 10, 0) * DefaultSoakS)); soak.Count != want {
		t.Errorf("memory run: %d sends, want %d (SOAK_S at the model's rate)", soak.Count, want)
	}
	names := map[string]bool{}
	for _, s := range plan {
		if names[s.Name()] {
			t.Errorf("two points named %s", s.Name())
		}
		names[s.Name()] = true
	}

	cfg.Drivers, cfg.CaseDelayMS, cfg.SoakS = []string{results.DriverWorker}, CaseOff, 0
	if got := len(cfg.Plan()); got != 12 {
		t.Errorf("workers only, no case series, no memory run: %d points, want 12", got)
	}
	if d := DefaultConfig().Estimate(); d.Minutes() < 20 || d.Minutes() > 60 {
		t.Errorf("default estimate %s: want between 20 and 60 min", d)
	}
}
