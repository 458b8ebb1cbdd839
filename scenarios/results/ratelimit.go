package results

// RateLimitCheck is what nginx's access log shows of a run under the
// vendor's rate limit (RATE_LIMIT; docs/deployment.md, Vendor rate
// limit): the sends it let through and those it refused 429, warm-up
// included.
type RateLimitCheck struct {
	// LimitSendsPerS is the limit nginx enforced for the whole account.
	LimitSendsPerS int `json:"limit_sends_per_s"`
	// ActiveWorkers is how many workers consumed at once, and
	// WorkerShareSendsPerS the rate each paced itself at
	// (worker -send-interval); 0 = not paced (RATE_PACE=off, the
	// negative control).
	ActiveWorkers        int     `json:"active_workers"`
	WorkerShareSendsPerS float64 `json:"worker_share_sends_per_s"`
	// Accepted and Refused count the sends nginx passed to the vendor
	// and answered 429 itself.
	Accepted int `json:"accepted"`
	Refused  int `json:"refused_429"`
	// AcceptedPerS is (Accepted - 1) over the time from the first to the
	// last accepted send in the access log (ms resolution); 0 below two.
	AcceptedPerS float64 `json:"accepted_per_s"`
	// SteadyPerS is the accepted rate between the 10th and the 90th
	// percentile of the accepted sends' times: the workers' starts (one
	// replica starts consuming a second or two after another) and the
	// run's tail left out; 0 below 10 accepted sends.
	SteadyPerS float64 `json:"steady_per_s"`
	// OfLimit is AcceptedPerS / LimitSendsPerS and SteadyOfLimit
	// SteadyPerS / LimitSendsPerS; RefusedShare is Refused /
	// (Accepted + Refused).
	OfLimit       float64 `json:"of_limit"`
	SteadyOfLimit float64 `json:"steady_of_limit"`
	RefusedShare  float64 `json:"refused_share"`
}
