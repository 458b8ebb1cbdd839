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
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ReportRelayOptions configure a ReportRelay (docs/vendor-api.md#the-mock-vendors-reports).
type ReportRelayOptions struct {
	// Target is the worker's report receiver, e.g.
	// "http://127.0.0.1:49153/reports".
	Target string
	// Secret is the shared secret the reports are signed with (never logged).
	Secret []byte
	// RefKeyPrefix limits the relay to sends whose refkey starts with it
	// (one scenario's messages); "" = every send.
	RefKeyPrefix string
	// Delay is how long after the relay saw a send accepted it pushes the
	// report (the vendor's delivery time), >= 0.
	Delay time.Duration
	// DropEvery > 0 drops every DropEvery-th report (the 1st pushed, the
	// DropEvery-th not): a vendor that loses reports. 0 = none dropped.
	DropEvery int
	// Poll is how often WireMock's journal is read; 0 = 200 ms.
	Poll time.Duration
}

// ReportRelayStats count what a ReportRelay did.
type ReportRelayStats struct {
	Accepted int            // sends the journal shows accepted (2xx), each once
	Dropped  int            // reports not pushed on purpose (DropEvery)
	Pushed   int            // reports the receiver answered 200
	Verdicts map[string]int // the receiver's {"verdict"} of each 200
	Retries  int            // pushes answered 503 or not answered, pushed again
}

// ReportRelay is the mock vendor's report sender: it reads WireMock's
// request journal, and for every send WireMock answered 2xx it POSTs one
// delivery report ("delivered", the profile's first delivered value) to
// the worker, signed as the profile's reports.push says, after Delay.
// A push answered 503 or not answered is pushed again every second until
// Close. WireMock alone cannot do this: its webhooks cannot compute an
// HMAC of the body (docs/vendor-api.md).
type ReportRelay struct {
	s      *Stack
	o      ReportRelayOptions
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	st     ReportRelayStats
	wg     sync.WaitGroup
}

// StartReportRelay starts a relay for the stack's profile. Errors: the
// profile has no reports.push, no Target or Secret, a negative Delay or
// DropEvery.
func (s *Stack) StartReportRelay(o ReportRelayOptions) (*ReportRelay, error) {
	if s.Profile == nil || s.Profile.Reports == nil || s.Profile.Reports.Push == nil {
		return nil, errors.New("report relay: the profile declares no pushed reports (reports.push)")
	}
	if o.Target == "" || len(o.Secret) == 0 {
		return nil, errors.New("report relay: needs a target and a secret")
	}
	if o.Delay < 0 || o.DropEvery < 0 {
		return nil, fmt.Errorf("report relay: delay %s and drop_every %d must be >= 0", o.Delay, o.DropEvery)
	}
	if o.Poll <= 0 {
		o.Poll = 200 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &ReportRelay{s: s, o: o, cancel: cancel, done: make(chan struct{}), st: ReportRelayStats{Verdicts: map[string]int{}}}
	go r.run(ctx)
	return r, nil
}

// Close stops the relay (reports not yet pushed are abandoned) and
// returns its counts.
func (r *ReportRelay) Close() ReportRelayStats {
	r.cancel()
	<-r.done
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
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

func (r *ReportRelay) run(ctx context.Context) {
	defer close(r.done)
	seen := map[string]bool{}
	send := r.s.Profile.API.SendPath
	tick := time.NewTicker(r.o.Poll)
	defer tick.Stop()
	for {
		if entries, err := r.s.Journal(ctx); err == nil {
			for _, e := range entries {
				if e.Method != http.MethodPost || e.Path != send || e.Status < 200 || e.Status > 299 ||
					e.RefKey == "" || !strings.HasPrefix(e.RefKey, r.o.RefKeyPrefix) || seen[e.RefKey] {
					continue
				}
				seen[e.RefKey] = true
				r.mu.Lock()
				r.st.Accepted++
				drop := r.o.DropEvery > 0 && r.st.Accepted%r.o.DropEvery == 0
				if drop {
					r.st.Dropped++
				}
				r.mu.Unlock()
				if !drop {
					r.wg.Add(1)
					go r.push(ctx, e.RefKey)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// ReportBody returns the JSON report the mock vendor sends for refkey: the
// profile's refkey, result ("delivered" = its first delivered value) and
// code fields.
func (p *Profile) ReportBody(refkey string) []byte {
	rs := p.Reports
	m := map[string]string{rs.RefKeyField: refkey, rs.ResultField: rs.Delivered[0]}
	if rs.CodeField != "" {
		m[rs.CodeField] = "0000"
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

// push POSTs refkey's report after Delay, again every second (or the
// receiver's Retry-After) while it answers 503 or does not answer.
func (r *ReportRelay) push(ctx context.Context, refkey string) {
	defer r.wg.Done()
	p := r.s.Profile
	body := p.ReportBody(refkey)
	wait := r.o.Delay
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = time.Second
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.o.Target, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(p.Reports.Push.Header, p.SignReportBody(body, r.o.Secret))
		resp, err := r.s.adminHTTP.Do(req)
		if err != nil {
			r.count(func(st *ReportRelayStats) { st.Retries++ })
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		switch {
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
	}
}

func (r *ReportRelay) count(f func(*ReportRelayStats)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.st)
}
