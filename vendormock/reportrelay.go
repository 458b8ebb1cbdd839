package vendormock

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ReportRelayOptions configure a ReportRelay (docs/vendor-api.md#the-mock-vendors-reports).
type ReportRelayOptions struct {
	// Target is the worker's report receiver, e.g.
	// "http://127.0.0.1:49153/reports" (in the fault runner: through
	// Toxiproxy, Stack.ReportsAddrHost).
	Target string
	// Secret is the shared secret the reports are signed with (never logged).
	Secret []byte
	// RefKeyPrefix limits the relay to sends whose refkey starts with it
	// (one scenario's messages); "" = every send.
	RefKeyPrefix string
	// Delay is how long after the relay saw a send accepted it pushes the
	// report (the vendor's delivery time), >= 0.
	Delay time.Duration
	// DropEvery > 0 drops the push of every DropEvery-th report (1 = every
	// push dropped; 2 = the 2nd, 4th, ...): a vendor that loses callbacks.
	// 0 = none dropped. With Pull the dropped reports can still be pulled.
	DropEvery int
	// Copies is how many times each report is pushed, 1..10 (0 = 1): a
	// vendor that delivers its callbacks at least once, not exactly once.
	Copies int
	// Jitter adds to every push (each copy, each interim report) its own
	// random delay in [0, Jitter): pushes overtake each other, so reports
	// arrive out of order. 0 = none.
	Jitter time.Duration
	// Interim also pushes, per accepted send, an interim report (the
	// profile's first reports.unknown value) at Delay plus its own jitter,
	// so it may arrive after the final report (reordered). Needs a profile
	// with reports.unknown values.
	Interim bool
	// Forge pushes, per accepted send and before its genuine report, a
	// report saying "failed" signed with a wrong secret: an attacker or a
	// misconfigured sender. The receiver must refuse it (401, counted as
	// Forged).
	Forge bool
	// Pull serves each accepted send's final report at the profile's
	// reports.pull path once Delay has passed (Delay: the report exists),
	// also when its push was dropped: the vendor lost the callback, not
	// the report. Needs a profile with reports.pull.
	Pull bool
	// Seed seeds the jitter (reproducible order per scenario).
	Seed uint64
	// Poll is how often WireMock's journal is read; 0 = 200 ms.
	Poll time.Duration
}

// ReportRelayStats count what a ReportRelay did.
type ReportRelayStats struct {
	Accepted int            // sends the journal shows accepted (2xx), each once
	Dropped  int            // reports whose pushes were dropped on purpose (DropEvery)
	Pushed   int            // pushes the receiver answered 200 (copies and interim ones included)
	Verdicts map[string]int // the receiver's {"verdict"} of each 200
	Retries  int            // pushes answered 503 or not answered, pushed again
	// Forged counts forged pushes the receiver refused with 401;
	// ForgedAccepted those it answered anything else (a receiver that
	// trusts forgeries).
	Forged         int
	ForgedAccepted int
	// Served counts reports made available for pull (Pull).
	Served int
	// SlowestOfferMS is the longest time from a send's acceptance
	// (WireMock's logged time of the request) to the first offer of its
	// report (its first push attempt, or served for pull), ms: how
	// punctual the mock vendor was. 0 when nothing was offered.
	SlowestOfferMS float64 `json:"slowest_offer_ms,omitempty"`
}

// ReportRelay is the mock vendor's report sender: it reads WireMock's
// request journal, and for every send WireMock answered 2xx it POSTs one
// delivery report ("delivered", the profile's first delivered value) to
// the worker, signed as the profile's reports.push says, Delay after
// WireMock logged the send (not after the relay read the journal: a slow
// journal read under load must not make the vendor late), and with Pull
// serves the same report at the pull path. Options make it a
// worse vendor: dropped, duplicated, reordered, interim and forged
// reports. A push answered 503 or not answered is pushed again every
// second until Close. WireMock alone cannot do this: its webhooks cannot
// compute an HMAC of the body (docs/vendor-api.md).
type ReportRelay struct {
	s      *Stack
	o      ReportRelayOptions
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	st     ReportRelayStats
	rng    *rand.Rand // guarded by mu
	// offered is when each refkey's genuine report was first offered
	// (guarded by mu; Offered).
	offered map[string]Offer
	wg      sync.WaitGroup
	// journal and serve are the stack's Journal and a stub registration
	// (tests replace them).
	journal func(context.Context) ([]JournalEntry, error)
	serve   func(context.Context, StubSpec) error
	client  *http.Client
}

// StartReportRelay starts a relay for the stack's profile. Errors: the
// profile has no reports.push (or no reports.pull with Pull, no
// reports.unknown with Interim), no Target or Secret, a negative Delay,
// DropEvery or Jitter, Copies above 10.
func (s *Stack) StartReportRelay(o ReportRelayOptions) (*ReportRelay, error) {
	r, err := newReportRelay(s, o)
	if err != nil {
		return nil, err
	}
	r.journal = s.Journal
	r.serve = func(ctx context.Context, spec StubSpec) error { return s.AddStubs(ctx, []StubSpec{spec}) }
	r.client = s.adminHTTP
	r.start()
	return r, nil
}

func newReportRelay(s *Stack, o ReportRelayOptions) (*ReportRelay, error) {
	if s.Profile == nil || s.Profile.Reports == nil || s.Profile.Reports.Push == nil {
		return nil, errors.New("report relay: the profile declares no pushed reports (reports.push)")
	}
	rs := s.Profile.Reports
	switch {
	case o.Target == "" || len(o.Secret) == 0:
		return nil, errors.New("report relay: needs a target and a secret")
	case o.Delay < 0 || o.DropEvery < 0 || o.Jitter < 0:
		return nil, fmt.Errorf("report relay: delay %s, drop_every %d and jitter %s must be >= 0", o.Delay, o.DropEvery, o.Jitter)
	case o.Copies < 0 || o.Copies > 10:
		return nil, fmt.Errorf("report relay: copies %d: want 0..10", o.Copies)
	case o.Pull && rs.Pull == nil:
		return nil, errors.New("report relay: pull asked, but the profile declares no reports.pull")
	case o.Interim && len(rs.Unknown) == 0:
		return nil, errors.New("report relay: interim reports asked, but the profile lists no reports.unknown value")
	}
	if o.Poll <= 0 {
		o.Poll = 200 * time.Millisecond
	}
	o.Copies = max(o.Copies, 1)
	return &ReportRelay{s: s, o: o, done: make(chan struct{}), st: ReportRelayStats{Verdicts: map[string]int{}},
		rng: rand.New(rand.NewPCG(o.Seed, 0x7e9)), offered: map[string]Offer{}, client: http.DefaultClient}, nil
}

func (r *ReportRelay) start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go r.run(ctx)
}

// Close stops the relay (reports not yet pushed are abandoned) and
// returns its counts.
func (r *ReportRelay) Close() ReportRelayStats {
	r.cancel()
	<-r.done
	r.wg.Wait()
	return r.Stats()
}

// Stats returns the counts so far.
func (r *ReportRelay) Stats() ReportRelayStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.st
	st.Verdicts = make(map[string]int, len(r.st.Verdicts))
	for k, v := range r.st.Verdicts {
		st.Verdicts[k] = v
	}
	return st
}

// Offer is when the mock vendor accepted a send (WireMock's logged time
// of the request) and when it first offered that send's genuine final
// report: the start of its first push attempt, or when it was served for
// pull, whichever came first.
type Offer struct {
	Accepted time.Time
	At       time.Time
}

// Offered returns each refkey's Offer. A report dropped on purpose and
// not served for pull is absent. The scenarios judge the vendor's own
// punctuality by it (a report offered past the horizon the worker was
// promised voids the run).
func (r *ReportRelay) Offered() map[string]Offer {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]Offer, len(r.offered))
	for k, o := range r.offered {
		out[k] = o
	}
	return out
}

// offer records refkey's report offered now, its send accepted at base.
func (r *ReportRelay) offer(refkey string, base time.Time) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if o, ok := r.offered[refkey]; ok && !now.Before(o.At) {
		return
	}
	r.offered[refkey] = Offer{Accepted: base, At: now}
	r.st.SlowestOfferMS = max(r.st.SlowestOfferMS, float64(now.Sub(base).Microseconds())/1000)
}

func (r *ReportRelay) run(ctx context.Context) {
	defer close(r.done)
	seen := map[string]bool{}
	send := r.s.Profile.API.SendPath
	tick := time.NewTicker(r.o.Poll)
	defer tick.Stop()
	for {
		if entries, err := r.journal(ctx); err == nil {
			for _, e := range entries {
				if e.Method != http.MethodPost || e.Path != send || e.Status < 200 || e.Status > 299 ||
					e.RefKey == "" || !strings.HasPrefix(e.RefKey, r.o.RefKeyPrefix) || seen[e.RefKey] {
					continue
				}
				seen[e.RefKey] = true
				r.accepted(ctx, e)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// accepted schedules what the vendor does for one accepted send, each
// wait counted from when WireMock logged it (now when the journal has no
// time).
func (r *ReportRelay) accepted(ctx context.Context, e JournalEntry) {
	p := r.s.Profile
	refkey, base := e.RefKey, e.LoggedAt
	if base.IsZero() {
		base = time.Now()
	}
	r.mu.Lock()
	r.st.Accepted++
	drop := r.o.DropEvery > 0 && r.st.Accepted%r.o.DropEvery == 0
	if drop {
		r.st.Dropped++
	}
	jitter := func() time.Duration {
		if r.o.Jitter <= 0 {
			return 0
		}
		return time.Duration(r.rng.Int64N(int64(r.o.Jitter)))
	}
	var waits []time.Duration
	if !drop {
		for range r.o.Copies {
			waits = append(waits, r.o.Delay+jitter())
		}
	}
	interimWait := r.o.Delay + jitter()
	r.mu.Unlock()
	final := p.ReportBodyResult(refkey, p.Reports.Delivered[0], "0000")
	if r.o.Pull {
		r.wg.Add(1)
		go r.servePull(ctx, refkey, final, base)
	}
	if drop {
		return
	}
	if r.o.Forge {
		// Pushed before the genuine report, in the same goroutine: it
		// arrives first.
		forged := p.ReportBodyResult(refkey, p.Reports.Failed[0], "9999")
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if r.sleepUntil(ctx, base.Add(r.o.Delay)) {
				r.push(ctx, refkey, forged, p.SignReportBody(forged, append([]byte("forged-"), r.o.Secret...)), pushForged, base)
				r.push(ctx, refkey, final, p.SignReportBody(final, r.o.Secret), pushFinal, base)
			}
		}()
		waits = waits[1:]
	}
	for _, w := range waits {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if r.sleepUntil(ctx, base.Add(w)) {
				r.push(ctx, refkey, final, p.SignReportBody(final, r.o.Secret), pushFinal, base)
			}
		}()
	}
	if r.o.Interim {
		body := p.ReportBodyResult(refkey, p.Reports.Unknown[0], "")
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if r.sleepUntil(ctx, base.Add(interimWait)) {
				r.push(ctx, refkey, body, p.SignReportBody(body, r.o.Secret), pushInterim, base)
			}
		}()
	}
}

// sleep waits d; false when ctx ended first.
func (r *ReportRelay) sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// sleepUntil waits until t (not at all when t has passed); false when
// ctx ended first.
func (r *ReportRelay) sleepUntil(ctx context.Context, t time.Time) bool {
	return r.sleep(ctx, time.Until(t))
}

// pushKind is what one push carries.
type pushKind int

const (
	pushFinal   pushKind = iota // the genuine final report (Offered)
	pushInterim                 // an interim report (Interim)
	pushForged                  // a report signed with a wrong secret (Forge)
)

// ReportBody returns the JSON report the mock vendor sends for refkey: the
// profile's refkey, result ("delivered" = its first delivered value) and
// code fields.
func (p *Profile) ReportBody(refkey string) []byte {
	return p.ReportBodyResult(refkey, p.Reports.Delivered[0], "0000")
}

// ReportBodyResult returns the JSON report for refkey with result (one of
// the profile's reports values) and code ("" or a profile without a code
// field: none).
func (p *Profile) ReportBodyResult(refkey, result, code string) []byte {
	rs := p.Reports
	m := map[string]string{rs.RefKeyField: refkey, rs.ResultField: result}
	if rs.CodeField != "" && code != "" {
		m[rs.CodeField] = code
	}
	b, _ := json.Marshal(m)
	return b
}

// SignReportBody returns the header value of body under the profile's
// reports.push.auth: "sha256=" + hex HMAC-SHA256, or the secret itself.
func (p *Profile) SignReportBody(body, secret []byte) string {
	if p.Reports.Push.Auth == ReportAuthSecret {
		return string(secret)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// push POSTs one report now, again every second (or the receiver's
// Retry-After) while it answers 503 or does not answer. A forged push
// expects a 401 (counted as Forged), anything else is ForgedAccepted. A
// final report's first attempt is its offer (base: when the send was
// accepted).
func (r *ReportRelay) push(ctx context.Context, refkey string, body []byte, sig string, kind pushKind, base time.Time) {
	p := r.s.Profile
	forged := kind == pushForged
	if kind == pushFinal {
		r.offer(refkey, base)
	}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.o.Target, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(p.Reports.Push.Header, sig)
		resp, err := r.client.Do(req)
		wait := time.Second
		if err != nil {
			r.count(func(st *ReportRelayStats) { st.Retries++ })
			if !r.sleep(ctx, wait) {
				return
			}
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		switch {
		case forged && resp.StatusCode == http.StatusUnauthorized:
			r.count(func(st *ReportRelayStats) { st.Forged++ })
			return
		case forged && resp.StatusCode != http.StatusServiceUnavailable:
			r.s.logf("report relay: a FORGED report for %s was answered %d: %s", refkey, resp.StatusCode, strings.TrimSpace(string(b)))
			r.count(func(st *ReportRelayStats) { st.ForgedAccepted++ })
			return
		case resp.StatusCode == http.StatusOK:
			var v struct {
				Verdict string `json:"verdict"`
			}
			_ = json.Unmarshal(b, &v)
			r.count(func(st *ReportRelayStats) { st.Pushed++; st.Verdicts[v.Verdict]++ })
			return
		case resp.StatusCode == http.StatusServiceUnavailable:
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
				wait = time.Duration(s) * time.Second
			}
			r.count(func(st *ReportRelayStats) { st.Retries++ })
		default:
			r.s.logf("report relay: %s answered %d: %s", refkey, resp.StatusCode, strings.TrimSpace(string(b)))
			return
		}
		if !r.sleep(ctx, wait) {
			return
		}
	}
}

// servePull makes refkey's report pullable Delay after base (when the
// send was accepted): a WireMock stub answering GET reports.pull.path for
// this refkey, with the run's access token, with the report (any other
// refkey keeps WireMock's 404, "no report yet").
func (r *ReportRelay) servePull(ctx context.Context, refkey string, body []byte, base time.Time) {
	defer r.wg.Done()
	if !r.sleepUntil(ctx, base.Add(r.o.Delay)) {
		return
	}
	if err := r.serve(ctx, PullStub(r.s.Profile, refkey, body)); err != nil {
		r.s.logf("report relay: serve the report of %s for pull: %v", refkey, err)
		return
	}
	r.offer(refkey, base)
	r.count(func(st *ReportRelayStats) { st.Served++ })
}

// PullStub is the WireMock stub serving body as refkey's report at the
// profile's reports.pull.path, for the run's access token.
func PullStub(p *Profile, refkey string, body []byte) StubSpec {
	token := "${access_token}"
	return StubSpec{
		Name:     "report-" + refkey,
		Priority: 1,
		Request: RequestSpec{Method: http.MethodGet, URLPath: strings.ReplaceAll(p.Reports.Pull.Path, "{refkey}", refkey),
			Bearer: &MatcherSpec{EqualTo: &token}},
		Response: ResponseSpec{Status: http.StatusOK, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(body)},
	}
}

func (r *ReportRelay) count(f func(*ReportRelayStats)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.st)
}
