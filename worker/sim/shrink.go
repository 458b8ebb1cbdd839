package sim

// maxShrinkRuns bounds the runs one shrink makes.
const maxShrinkRuns = 400

// Shrink returns the smallest schedule it finds that still breaks the
// invariant inv, and that schedule's trace: delta debugging over the
// event list (remove chunks of half, a quarter, ... one event; keep a
// removal while the invariant still breaks). The Config is kept.
func Shrink(s Schedule, opt Options, inv string) (Schedule, string) {
	fails := func(c Schedule) bool {
		r := RunSchedule(c, opt)
		return r.Violation != nil && r.Violation.Invariant == inv
	}
	cur := s
	runs := 0
	for chunk := len(cur.Events) / 2; chunk >= 1 && runs < maxShrinkRuns; {
		removed := false
		for start := 0; start < len(cur.Events) && runs < maxShrinkRuns; {
			end := min(start+chunk, len(cur.Events))
			cand := cur
			cand.Events = append(append([]Event(nil), cur.Events[:start]...), cur.Events[end:]...)
			runs++
			if fails(cand) {
				cur = cand
				removed = true
				continue
			}
			start = end
		}
		if !removed {
			chunk /= 2
		}
	}
	r := RunSchedule(cur, opt)
	return cur, r.Trace.String()
}
