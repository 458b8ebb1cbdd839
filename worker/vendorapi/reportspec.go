package vendorapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Errors of delivery reports; match them with errors.Is.
var (
	// ErrReportSpec: ParseReportSpec was given a document it cannot use.
	ErrReportSpec = errors.New("invalid vendor report spec")
	// ErrForgedReport: a pushed report's signature or secret header is
	// missing or wrong (VerifyPush).
	ErrForgedReport = errors.New("report not authenticated")
	// ErrMalformedReport: a report is not the JSON object the spec
	// describes: no refkey, or a result value the spec does not list.
	ErrMalformedReport = errors.New("malformed report")
)

// ReportSpec is the worker's view of the vendor's delivery-report API, read
// from the profile's reports section (VENDOR_REPORTS, the same JSON keys;
// docs/vendor-api.md#delivery-reports). The zero value is "no reports".
type ReportSpec struct {
	Push *ReportPush `json:"push,omitempty"`
	Pull *ReportPull `json:"pull,omitempty"`
	// RefKeyField, ResultField, CodeField: the report's JSON fields.
	RefKeyField string `json:"refkey_field"`
	ResultField string `json:"result_field"`
	CodeField   string `json:"code_field,omitempty"`
	// Delivered, Failed, Unknown: the result values of each kind.
	Delivered []string `json:"delivered"`
	Failed    []string `json:"failed"`
	Unknown   []string `json:"unknown,omitempty"`
	// Horizon is a Go duration ("10m"): the vendor reports every accepted
	// message within it. HorizonDuration returns it parsed.
	Horizon string `json:"horizon"`
	// Complete: the vendor's promise holds, so no report after Horizon
	// means the message was not sent.
	Complete bool `json:"complete"`

	horizon time.Duration
}

// ReportPush is how a pushed report is authenticated.
type ReportPush struct {
	// Auth is ReportAuthHMAC or ReportAuthSecret.
	Auth string `json:"auth"`
	// Header carries the signature or the secret.
	Header string `json:"header"`
}

// ReportPull is the report-by-refkey endpoint: GET Path with "{refkey}"
// replaced by the path-escaped refkey; 404 = no report yet.
type ReportPull struct {
	Path string `json:"path"`
}

// Report authentication schemes of ReportPush.Auth.
const (
	// ReportAuthHMAC: the header is "sha256=" + lower-case hex
	// HMAC-SHA256 of the raw body under the shared secret.
	ReportAuthHMAC = "hmac-sha256"
	// ReportAuthSecret: the header is the shared secret itself.
	ReportAuthSecret = "secret"
)

// ReportKind is what a report says about its message.
type ReportKind string

// Report kinds.
const (
	ReportDelivered ReportKind = "delivered"
	ReportFailed    ReportKind = "failed"
	ReportPending   ReportKind = "unknown" // not final yet: changes nothing
)

// Report is one parsed delivery report.
type Report struct {
	RefKey string     `json:"refkey"`
	Result string     `json:"result"` // the vendor's result value, e.g. "DELIVERED"
	Kind   ReportKind `json:"kind"`
	Code   string     `json:"code,omitempty"` // the vendor's detail code, "" when none
}

// ParseReportSpec reads a ReportSpec from JSON (unknown keys are errors)
// and validates it; "" is the zero spec (no reports). Errors wrap
// ErrReportSpec and name the key.
func ParseReportSpec(doc string) (ReportSpec, error) {
	var s ReportSpec
	if strings.TrimSpace(doc) == "" {
		return s, nil
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return ReportSpec{}, fmt.Errorf("%w: %v", ErrReportSpec, err)
	}
	var probs []string
	if s.Push == nil && s.Pull == nil {
		probs = append(probs, "push or pull must be set")
	}
	if s.Push != nil && s.Push.Auth != ReportAuthHMAC && s.Push.Auth != ReportAuthSecret {
		probs = append(probs, fmt.Sprintf("push.auth must be %q or %q, got %q", ReportAuthHMAC, ReportAuthSecret, s.Push.Auth))
	}
	if s.Push != nil && s.Push.Header == "" {
		probs = append(probs, "push.header must not be empty")
	}
	if s.Pull != nil && !strings.Contains(s.Pull.Path, "{refkey}") {
		probs = append(probs, fmt.Sprintf("pull.path must contain {refkey}, got %q", s.Pull.Path))
	}
	if s.RefKeyField == "" || s.ResultField == "" {
		probs = append(probs, "refkey_field and result_field must not be empty")
	}
	if len(s.Delivered) == 0 || len(s.Failed) == 0 {
		probs = append(probs, "delivered and failed must each list a result value")
	}
	var err error
	if s.horizon, err = time.ParseDuration(s.Horizon); err != nil || s.horizon <= 0 {
		probs = append(probs, fmt.Sprintf("horizon must be a Go duration > 0, got %q", s.Horizon))
	}
	if len(probs) > 0 {
		return ReportSpec{}, fmt.Errorf("%w: %s", ErrReportSpec, strings.Join(probs, "; "))
	}
	return s, nil
}

// Enabled reports whether the vendor publishes reports at all.
func (s ReportSpec) Enabled() bool { return s.Push != nil || s.Pull != nil }

// HorizonDuration is Horizon parsed (0 for the zero spec).
func (s ReportSpec) HorizonDuration() time.Duration { return s.horizon }

// ParseReport reads one report (a JSON object) by the spec's fields.
// Errors wrap ErrMalformedReport: not a JSON object, no refkey, no result,
// or a result value in none of Delivered, Failed, Unknown.
func (s ReportSpec) ParseReport(body []byte) (Report, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return Report{}, fmt.Errorf("%w: not a JSON object", ErrMalformedReport)
	}
	str := func(f string) string {
		if f == "" {
			return ""
		}
		switch v := m[f].(type) {
		case string:
			return v
		case json.Number:
			return v.String()
		}
		return ""
	}
	r := Report{RefKey: str(s.RefKeyField), Result: str(s.ResultField), Code: str(s.CodeField)}
	if r.RefKey == "" {
		return Report{}, fmt.Errorf("%w: no %q", ErrMalformedReport, s.RefKeyField)
	}
	switch {
	case slices.Contains(s.Delivered, r.Result):
		r.Kind = ReportDelivered
	case slices.Contains(s.Failed, r.Result):
		r.Kind = ReportFailed
	case slices.Contains(s.Unknown, r.Result):
		r.Kind = ReportPending
	default:
		return Report{}, fmt.Errorf("%w: %s %s: %q=%q is none of delivered %v, failed %v, unknown %v",
			ErrMalformedReport, s.RefKeyField, r.RefKey, s.ResultField, r.Result, s.Delivered, s.Failed, s.Unknown)
	}
	return r, nil
}

// SignReport returns the ReportAuthHMAC header value of body under secret:
// "sha256=" + hex HMAC-SHA256.
func SignReport(body, secret []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// VerifyPush checks a pushed report's header against the shared secret
// (constant-time). Errors wrap ErrForgedReport (no push in the spec, an
// empty secret, a missing or wrong header); they never quote the secret.
func (s ReportSpec) VerifyPush(h http.Header, body, secret []byte) error {
	if s.Push == nil {
		return fmt.Errorf("%w: this vendor pushes no reports", ErrForgedReport)
	}
	if len(secret) == 0 {
		return fmt.Errorf("%w: no shared secret configured", ErrForgedReport)
	}
	got := h.Get(s.Push.Header)
	if got == "" {
		return fmt.Errorf("%w: no %s header", ErrForgedReport, s.Push.Header)
	}
	want := string(secret)
	if s.Push.Auth == ReportAuthHMAC {
		want = SignReport(body, secret)
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return fmt.Errorf("%w: %s does not match (%s)", ErrForgedReport, s.Push.Header, s.Push.Auth)
	}
	return nil
}
