package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The vendor's API as the model serves it (docs/vendor-api.md): the
// alimtalk shape, and the report pull path the simulator's profile names.
const (
	tokenPath  = "/v1/token"
	sendPath   = "/v3/message"
	pullPrefix = "/v2/reports/"
	// PullPath is the report pull path of the simulator's vendor profile.
	PullPath = pullPrefix + "{refkey}"
)

// Truth is what the vendor knows of one refkey.
type Truth struct {
	RefKey string
	// Processed lists every time the vendor processed a send of it (the
	// guarantee: at most one).
	Processed []Processing
	// Rejected lists the body hashes it refused with a business code
	// (nothing processed).
	Rejected []string
	// ReportFailed: its delivery report says failed (REJECTED).
	ReportFailed bool
	// FinalAt is when its final report is ready (zero: not processed, or
	// an incomplete vendor that never reports it).
	FinalAt time.Time
	// pushed: the worker accepted the pushed final report; interim: it
	// accepted the interim one.
	pushed, interim bool
}

// Processing is one send the vendor processed.
type Processing struct {
	BodyHash string
	// PostAt is the clock when the POST left the worker; At when the
	// vendor processed it (later for a slow vendor).
	PostAt, At time.Time
	Ad         bool
}

// Vendor is the model of the messaging vendor behind the worker's real
// vendorapi.Client: an http.RoundTripper serving the token call, the send
// and the report pull in memory, firing the httptrace hooks a real
// connection would (a request that fails before WroteHeaders was never
// written). It knows the truth per refkey and pushes delivery reports
// through the worker's real report endpoint.
type Vendor struct {
	clock *Clock
	cfg   Config
	seed  uint64
	// Secret signs pushed reports (HMAC-SHA256, header X-Signature).
	Secret []byte
	tokens map[string]time.Time // token -> expiry; deleted when revoked
	ntok   int
	nkey   int
	truth  map[string]*Truth
	// armed faults
	fault, tokenFault, pullFault string
	d, tokenD                    time.Duration
	// hooks set by the scheduler
	crash   func(point string) error          // "send-before", "send-after": the process died there (crashPoint)
	midSend func()                            // a mid-send event (channel close)
	doubt   func(refkey, why string)          // the send left refkey in doubt
	push    func(body []byte, sig string) int // POST a report to the worker; its status
	note    func(format string, args ...any)  // a line for the trace
	// Faults counts the faults that fired, by kind.
	Faults map[string]int
	// Refused counts pushed reports the worker refused as forged.
	Refused, Forged int
	// Accepted lists forged reports the worker accepted (status 2xx).
	Accepted []string
}

// NewVendor returns the vendor of cfg; seed decides its per-refkey
// behaviour (which reports fail, are dropped or delayed).
func NewVendor(clock *Clock, cfg Config, seed uint64) *Vendor {
	return &Vendor{clock: clock, cfg: cfg, seed: seed, Secret: []byte("sim-report-secret"),
		tokens: map[string]time.Time{}, truth: map[string]*Truth{}, Faults: map[string]int{},
		crash: func(string) error { return nil }, midSend: func() {}, doubt: func(string, string) {}, note: func(string, ...any) {}}
}

// Truth returns refkey's truth (nil when the vendor never saw it).
func (v *Vendor) Truth(refkey string) *Truth { return v.truth[refkey] }

// Truths returns every refkey's truth.
func (v *Vendor) Truths() map[string]*Truth { return v.truth }

// Arm arms a send fault (VendorFaults); the token faults wait for the
// next token call.
func (v *Vendor) Arm(fault string, d time.Duration) {
	if strings.HasPrefix(fault, "token-") {
		v.tokenFault, v.tokenD = fault, d
		return
	}
	v.fault, v.d = fault, d
}

// ArmPull arms a pull fault (PullFaults) for the pulls until DisarmPull.
func (v *Vendor) ArmPull(fault string) { v.pullFault = fault }

// DisarmPull ends the pull fault.
func (v *Vendor) DisarmPull() { v.pullFault = "" }

// Disarm drops every armed fault.
func (v *Vendor) Disarm() { v.fault, v.tokenFault, v.pullFault = "", "", "" }

// roll returns a number in [0, n) fixed by the seed and refkey, so a
// refkey's behaviour does not depend on the order of events.
func (v *Vendor) roll(refkey, what string, n int) int {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%s", v.seed, refkey, what)
	return int(h.Sum64() % uint64(n))
}

// RoundTrip serves one request of the worker's client.
func (v *Vendor) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		_ = req.Body.Close()
	}
	trace := httptrace.ContextClientTrace(req.Context())
	wrote := func() {
		if trace == nil {
			return
		}
		if trace.GotConn != nil {
			trace.GotConn(httptrace.GotConnInfo{Reused: true})
		}
		if trace.WroteHeaders != nil {
			trace.WroteHeaders()
		}
		if trace.WroteRequest != nil {
			trace.WroteRequest(httptrace.WroteRequestInfo{})
		}
	}
	switch {
	case req.Method == http.MethodPost && req.URL.Path == tokenPath:
		return v.token(req, wrote)
	case req.Method == http.MethodPost && req.URL.Path == sendPath:
		return v.send(req, body, wrote)
	case req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, pullPrefix):
		return v.pull(req, strings.TrimPrefix(req.URL.Path, pullPrefix), wrote)
	}
	wrote()
	return answer(req, http.StatusNotFound, nil, `{"code":"404"}`), nil
}

func answer(req *http.Request, status int, h http.Header, body string) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/json")
	return &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Request: req,
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}
}

// errRefused is a dial that failed: nothing was written.
var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}

// timeoutErr is a transport timeout (net.Error with Timeout true).
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "sim: i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func (v *Vendor) token(req *http.Request, wrote func()) (*http.Response, error) {
	wrote()
	f, d := v.tokenFault, v.tokenD
	v.tokenFault = ""
	if f != "" {
		v.Faults[f]++
	}
	switch f {
	case "token-slow":
		v.clock.Advance(d)
	case "token-error":
		return answer(req, http.StatusServiceUnavailable, nil, `{"code":"503"}`), nil
	}
	v.ntok++
	tok := fmt.Sprintf("tok-%d", v.ntok)
	v.note("vendor issued %s at %s", tok, v.clock.Now().In(seoul).Format("15:04:05.000"))
	v.tokens[tok] = v.clock.Now().Add(v.cfg.TokenLife)
	return answer(req, http.StatusOK, nil, fmt.Sprintf(`{"access_token":%q,"token_type":"Bearer","expires_in":%d}`,
		tok, int(v.cfg.TokenLife.Seconds()))), nil
}

// authorized reports whether req carries a live token.
func (v *Vendor) authorized(req *http.Request) (string, bool) {
	tok := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
	exp, ok := v.tokens[tok]
	return tok, ok && v.clock.Now().Before(exp)
}

func (v *Vendor) send(req *http.Request, body []byte, wrote func()) (*http.Response, error) {
	postAt := v.clock.Now()
	var m struct {
		RefKey   string `json:"refkey"`
		Category string `json:"category"`
	}
	_ = json.Unmarshal(body, &m)
	unauthorized := answer(req, http.StatusUnauthorized, nil, `{"code":"401","description":"token expired"}`)
	tok, ok := v.authorized(req)
	if !ok {
		wrote()
		return unauthorized, nil
	}
	f, d := v.fault, v.d
	v.fault = ""
	if f != "" {
		v.Faults[f]++
		v.note("vendor fault %s on %s", f, m.RefKey)
	}
	switch f {
	case "401":
		wrote()
		delete(v.tokens, tok)
		return unauthorized, nil
	case "lost-before-write":
		return nil, errRefused
	}
	wrote()
	if err := v.crash("send-before"); err != nil {
		return nil, err
	}
	if f == "slow" || f == "report-races" {
		v.clock.Advance(d)
	}
	v.midSend()
	switch f {
	case "lost-unprocessed":
		v.doubt(m.RefKey, "the request was written and its answer lost")
		return nil, io.ErrUnexpectedEOF
	case "5xx-unprocessed":
		v.doubt(m.RefKey, "the vendor answered 503")
		return answer(req, http.StatusServiceUnavailable, nil, `{"code":"503"}`), nil
	case "429":
		h := http.Header{}
		h.Set("Retry-After", strconv.Itoa(int(d.Seconds())))
		return answer(req, http.StatusTooManyRequests, h, `{"code":"429"}`), nil
	case "reject":
		t := v.truthOf(m.RefKey)
		t.Rejected = append(t.Rejected, hashBody(body, m.RefKey))
		return answer(req, http.StatusBadRequest, nil, `{"code":"3018","description":"template mismatch"}`), nil
	}
	v.process(m.RefKey, body, postAt, m.Category == "ad", f == "report-races")
	if err := v.crash("send-after"); err != nil {
		return nil, err
	}
	switch f {
	case "lost-after-process":
		v.doubt(m.RefKey, "processed, its answer lost")
		return nil, io.ErrUnexpectedEOF
	case "5xx-processed":
		v.doubt(m.RefKey, "processed, then answered 500")
		return answer(req, http.StatusInternalServerError, nil, `{"code":"500"}`), nil
	case "report-races":
		v.PushDue()
	}
	v.nkey++
	return answer(req, http.StatusOK, nil, fmt.Sprintf(`{"code":"1000","messagekey":"mk-%d"}`, v.nkey)), nil
}

func (v *Vendor) truthOf(refkey string) *Truth {
	t, ok := v.truth[refkey]
	if !ok {
		t = &Truth{RefKey: refkey}
		v.truth[refkey] = t
	}
	return t
}

// hashBody is the vendor's identity of a send: the body without the
// fields the client adds. The worker's ledger hashes the message body, so
// the vendor keeps what identifies the notification: the refkey and the
// text.
func hashBody(body []byte, refkey string) string {
	var m struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(body, &m)
	return refkey + "|" + m.Text
}

// process records one processing of refkey and schedules its report.
func (v *Vendor) process(refkey string, body []byte, postAt time.Time, ad, now bool) {
	t := v.truthOf(refkey)
	at := v.clock.Now()
	t.Processed = append(t.Processed, Processing{BodyHash: hashBody(body, refkey), PostAt: postAt, At: at, Ad: ad})
	v.note("vendor processed %s (POST at %s)", refkey, postAt.In(seoul).Format("15:04:05.000"))
	if len(t.Processed) > 1 || !v.cfg.Reports() {
		return
	}
	t.ReportFailed = v.roll(refkey, "failed", 6) == 0
	switch {
	case !v.cfg.Complete && v.roll(refkey, "dropped", 3) == 0:
		// an incomplete vendor never reports this one
	case now:
		t.FinalAt = at
	case v.cfg.Delayed && v.roll(refkey, "delayed", 2) == 0:
		t.FinalAt = at.Add(2*v.cfg.Horizon + time.Hour)
	default:
		t.FinalAt = at.Add(v.cfg.ReportDelay)
	}
}

func (v *Vendor) pull(req *http.Request, refkey string, wrote func()) (*http.Response, error) {
	if v.pullFault == "timeout" {
		v.Faults["pull-timeout"]++
		return nil, timeoutErr{}
	}
	wrote()
	switch v.pullFault {
	case "error":
		v.Faults["pull-error"]++
		return answer(req, http.StatusServiceUnavailable, nil, `{"code":"503"}`), nil
	case "401":
		v.Faults["pull-401"]++
		return answer(req, http.StatusUnauthorized, nil, `{"code":"401"}`), nil
	}
	if _, ok := v.authorized(req); !ok {
		return answer(req, http.StatusUnauthorized, nil, `{"code":"401"}`), nil
	}
	body, ok := v.report(refkey, false)
	if !ok {
		return answer(req, http.StatusNotFound, nil, `{"code":"404"}`), nil
	}
	return answer(req, http.StatusOK, nil, string(body)), nil
}

// report returns refkey's report as the vendor would give it now: its
// final result once ready, else an interim one when the vendor says so
// (its delayed reports) or interim is asked for; false when it has none
// to give (not processed: "not found").
func (v *Vendor) report(refkey string, interim bool) ([]byte, bool) {
	t := v.truth[refkey]
	if t == nil || len(t.Processed) == 0 {
		return nil, false
	}
	result := ""
	switch {
	case !t.FinalAt.IsZero() && !t.FinalAt.After(v.clock.Now()):
		result = "DELIVERED"
		if t.ReportFailed {
			result = "FAILED"
		}
	case interim || (v.cfg.Delayed && !t.FinalAt.IsZero()):
		result = "PENDING"
	default:
		return nil, false
	}
	b, _ := json.Marshal(map[string]string{"refkey": refkey, "result": result, "code": "R" + result[:1]})
	return b, true
}

// ReportSpec is the simulator vendor's report profile (VENDOR_REPORTS),
// for vendorapi.ParseReportSpec.
func (v *Vendor) ReportSpec() string {
	if !v.cfg.Reports() {
		return ""
	}
	var b bytes.Buffer
	b.WriteString(`{`)
	if v.cfg.Push {
		b.WriteString(`"push":{"auth":"hmac-sha256","header":"X-Signature"},`)
	}
	if v.cfg.Pull {
		fmt.Fprintf(&b, `"pull":{"path":%q},`, PullPath)
	}
	fmt.Fprintf(&b, `"refkey_field":"refkey","result_field":"result","code_field":"code",`+
		`"delivered":["DELIVERED"],"failed":["FAILED"],"unknown":["PENDING"],"horizon":%q,"complete":%t}`,
		v.cfg.Horizon.String(), v.cfg.Complete)
	return b.String()
}
