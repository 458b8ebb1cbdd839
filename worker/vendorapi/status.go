package vendorapi

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// ErrStatusTable is wrapped by every error ParseStatusTable and
// LoadStatusTable return.
var ErrStatusTable = errors.New("invalid vendor status table")

// StatusTable maps the vendor's answers to outcomes; it belongs to the
// vendor profile (docs/vendor-api.md, docs/outcomes.md), because only the
// vendor's documentation can say that a status means "not processed".
//
// A send's answer is judged in this order:
//
//  1. a business code in the body that Codes names: that outcome;
//  2. a 2xx: SuccessCode is outcome.Sent, any other code outcome.Rejected,
//     no parsable code outcome.Unknown (never configurable: an unreadable
//     2xx may be a stored message);
//  3. the HTTP status in Statuses, exactly ("429") or by class ("4xx");
//  4. otherwise outcome.Unknown.
//
// A 401 is first answered by one token refetch and one resend (the vendor
// refused before processing); only the second 401 is judged by the table.
type StatusTable struct {
	// SuccessCode is the business code of an accepted send ("1000").
	SuccessCode string `yaml:"success_code" json:"success_code"`
	// Statuses maps "NNN" or "Nxx" (1xx, 3xx, 4xx, 5xx) to REJECTED,
	// NOT_SENT or UNKNOWN.
	Statuses map[string]outcome.Outcome `yaml:"statuses" json:"statuses"`
	// Codes maps vendor business codes to REJECTED, NOT_SENT or UNKNOWN,
	// whatever the HTTP status that carried them.
	Codes map[string]outcome.Outcome `yaml:"codes" json:"codes"`
}

// TableOutcomes are the outcomes a StatusTable entry may name.
var TableOutcomes = []outcome.Outcome{outcome.Rejected, outcome.NotSent, outcome.Unknown}

// DefaultStatusTable is the table of a vendor whose documentation says
// nothing more: 429 (rate limited), 408 (request timeout) and 421
// (misdirected: the server would not produce a response on this
// connection, and a client may retry it even for a POST) were not
// processed and are NOT_SENT (RFC 9110 15.5.9 and 15.5.20, RFC 6585 4).
// The lab's nginx answers 421 to a missing or untrusted client certificate
// (docs/vendor-api.md). Any other 4xx
// is REJECTED; any 5xx (a proxy's 502/504 says nothing about the vendor)
// and 1xx/3xx are UNKNOWN. 503 is NOT_SENT only where a profile says so.
func DefaultStatusTable() StatusTable {
	return StatusTable{
		SuccessCode: SuccessCode,
		Statuses: map[string]outcome.Outcome{
			"429": outcome.NotSent,
			"408": outcome.NotSent,
			"421": outcome.NotSent,
			"4xx": outcome.Rejected,
			"5xx": outcome.Unknown,
		},
	}
}

// LoadStatusTable reads a table from spec: inline JSON when spec starts
// with "{", else the path of a YAML or JSON file. Errors wrap
// ErrStatusTable and name the file, the field and the allowed values.
func LoadStatusTable(spec string) (StatusTable, error) {
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "{") {
		t, err := ParseStatusTable([]byte(spec))
		if err != nil {
			return StatusTable{}, fmt.Errorf("inline status table: %w", err)
		}
		return t, nil
	}
	data, err := os.ReadFile(spec)
	if err != nil {
		return StatusTable{}, fmt.Errorf("read status table: %w: %w", ErrStatusTable, err)
	}
	t, err := ParseStatusTable(data)
	if err != nil {
		return StatusTable{}, fmt.Errorf("status table %s: %w", spec, err)
	}
	return t, nil
}

// ParseStatusTable parses YAML (or JSON, a subset of it) into a table and
// validates it. Unknown fields are errors. Errors wrap ErrStatusTable.
func ParseStatusTable(data []byte) (StatusTable, error) {
	var t StatusTable
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&t); err != nil {
		return StatusTable{}, fmt.Errorf("%w: %w (fields: success_code, statuses, codes)", ErrStatusTable, err)
	}
	if err := t.Validate(); err != nil {
		return StatusTable{}, err
	}
	return t, nil
}

// Validate checks every entry: success_code set; statuses keys "NNN"
// (100-599, not 2xx) or "1xx", "3xx", "4xx", "5xx"; every value one of
// TableOutcomes. Errors wrap ErrStatusTable, naming the field.
func (t StatusTable) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrStatusTable}, args...)...))
	}
	if t.SuccessCode == "" {
		bad("success_code: empty, want the vendor's code of an accepted send (for example %q)", SuccessCode)
	}
	allowed := outcome.Names(TableOutcomes)
	for _, k := range sortedKeys(t.Statuses) {
		if !validStatusKey(k) {
			bad("statuses.%s: want an HTTP status 100-599 other than 2xx, or 1xx, 3xx, 4xx, 5xx (2xx answers are judged by success_code and codes)", k)
		}
		if v := t.Statuses[k]; !slices.Contains(TableOutcomes, v) {
			bad("statuses.%s: outcome %q, want one of %s", k, v, allowed)
		}
	}
	for _, k := range sortedKeys(t.Codes) {
		if k == "" || k == t.SuccessCode {
			bad("codes.%q: want a business code other than success_code", k)
		}
		if v := t.Codes[k]; !slices.Contains(TableOutcomes, v) {
			bad("codes.%s: outcome %q, want one of %s", k, v, allowed)
		}
	}
	return errors.Join(errs...)
}

func validStatusKey(k string) bool {
	switch k {
	case "1xx", "3xx", "4xx", "5xx":
		return true
	}
	n, err := strconv.Atoi(k)
	return err == nil && len(k) == 3 && n >= 100 && n <= 599 && n/100 != 2
}

func sortedKeys(m map[string]outcome.Outcome) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ForStatus returns the outcome of a non-2xx HTTP status: the exact entry,
// else the class entry ("4xx"), else outcome.Unknown.
func (t StatusTable) ForStatus(status int) outcome.Outcome {
	if o, ok := t.Statuses[strconv.Itoa(status)]; ok {
		return o
	}
	if o, ok := t.Statuses[strconv.Itoa(status/100)+"xx"]; ok {
		return o
	}
	return outcome.Unknown
}

// ForCode returns the outcome Codes names for a business code, if any.
func (t StatusTable) ForCode(code string) (outcome.Outcome, bool) {
	o, ok := t.Codes[code]
	return o, ok
}

// ParseRetryAfter reads an HTTP Retry-After value (RFC 9110 10.2.3):
// delay-seconds ("120") or an HTTP-date ("Wed, 21 Oct 2026 07:28:00 GMT"),
// relative to now. A date in the past is 0. ok is false for an empty or
// unparsable value (then the caller's default delay applies).
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second) // far beyond any bound; avoids overflow
		}
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}
