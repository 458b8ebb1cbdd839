package vendormock

import (
	"fmt"
	"strings"
	"time"
)

// ReportsSpec is a vendor's delivery-report API (reports): how the vendor
// tells, after it accepted a send, whether the message reached the
// customer. Push and Pull may both be set; at least one must be. JSON keys
// equal the YAML keys: the worker reads this document as its
// vendorapi.ReportSpec (docs/vendor-api.md#delivery-reports).
type ReportsSpec struct {
	// Push is set when the vendor POSTs a report per accepted send to a
	// callback URL (push).
	Push *ReportPush `yaml:"push" json:"push,omitempty"`
	// Pull is set when a report can be fetched by refkey (pull).
	Pull *ReportPull `yaml:"pull" json:"pull,omitempty"`
	// RefKeyField, ResultField and CodeField are the report's JSON fields
	// carrying the sender's refkey, the result and the vendor's detail
	// code ("" = none) (refkey_field, result_field, code_field).
	RefKeyField string `yaml:"refkey_field" json:"refkey_field"`
	ResultField string `yaml:"result_field" json:"result_field"`
	CodeField   string `yaml:"code_field" json:"code_field,omitempty"`
	// Delivered, Failed and Unknown list the result values of each kind;
	// a value in none of them is a malformed report (delivered, failed,
	// unknown).
	Delivered []string `yaml:"delivered" json:"delivered"`
	Failed    []string `yaml:"failed" json:"failed"`
	Unknown   []string `yaml:"unknown" json:"unknown,omitempty"`
	// Horizon is the Go duration within which the vendor promises a final
	// report for every message it accepted, e.g. "10m" (horizon).
	Horizon string `yaml:"horizon" json:"horizon"`
	// Complete says whether that promise holds: true lets the worker treat
	// an UNKNOWN with no report after Horizon as NOT_SENT and retry it
	// (complete).
	Complete bool `yaml:"complete" json:"complete"`
}

// ReportPush is a pushed report's transport (reports.push).
type ReportPush struct {
	// Auth is how the vendor authenticates a report: ReportAuthHMAC
	// (header = "sha256=" + hex HMAC-SHA256 of the body under the shared
	// secret) or ReportAuthSecret (header = the shared secret) (auth).
	Auth string `yaml:"auth" json:"auth"`
	// Header is the header carrying the signature or secret (header).
	Header string `yaml:"header" json:"header"`
}

// ReportPull is the report-by-refkey endpoint (reports.pull): GET Path with
// "{refkey}" replaced by the path-escaped refkey, authenticated with the
// send's bearer token; 404 = no report yet.
type ReportPull struct {
	Path string `yaml:"path" json:"path"`
}

// Report authentication schemes of ReportPush.Auth.
const (
	ReportAuthHMAC   = "hmac-sha256"
	ReportAuthSecret = "secret"
)

// validate returns one line per broken rule, each naming its YAML key.
func (r *ReportsSpec) validate() []string {
	var probs []string
	bad := func(key, format string, args ...any) {
		probs = append(probs, "reports."+key+": "+fmt.Sprintf(format, args...))
	}
	if r.Push == nil && r.Pull == nil {
		bad("push", "a reports section needs push, pull or both")
	}
	if r.Push != nil {
		if a := r.Push.Auth; a != ReportAuthHMAC && a != ReportAuthSecret {
			bad("push.auth", "must be %q or %q, got %q", ReportAuthHMAC, ReportAuthSecret, a)
		}
		if !headerNameRE.MatchString(r.Push.Header) {
			bad("push.header", "must be an HTTP header name, got %q", r.Push.Header)
		}
	}
	if r.Pull != nil && (!strings.HasPrefix(r.Pull.Path, "/") || !strings.Contains(r.Pull.Path, "{refkey}")) {
		bad("pull.path", "must start with '/' and contain {refkey}, got %q", r.Pull.Path)
	}
	if r.RefKeyField == "" {
		bad("refkey_field", "must not be empty")
	}
	if r.ResultField == "" {
		bad("result_field", "must not be empty")
	}
	if len(r.Delivered) == 0 || len(r.Failed) == 0 {
		bad("delivered", "delivered and failed must each list at least one result value")
	}
	seen := map[string]string{}
	kinds := []struct {
		name string
		vals []string
	}{{"delivered", r.Delivered}, {"failed", r.Failed}, {"unknown", r.Unknown}}
	for _, k := range kinds {
		kind := k.name
		for _, v := range k.vals {
			if other, dup := seen[v]; dup && other != kind {
				bad(kind, "result %q is also listed under %s", v, other)
			}
			seen[v] = kind
		}
	}
	if d, err := time.ParseDuration(r.Horizon); err != nil || d <= 0 {
		bad("horizon", "must be a Go duration > 0, e.g. \"10m\", got %q", r.Horizon)
	}
	return probs
}
