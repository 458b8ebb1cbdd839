// Package journal reads WireMock's request journal (GET /__admin/requests):
// the ground truth of what reached the vendor mock, per refkey
// (docs/vendor-api.md#journal). It is shared by vendormock (Stack.Journal) and
// the reconciler (scenarios/reconcile), and needs nothing but net/http.
package journal

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Entry is one request WireMock received: method, URL path (no query),
// refkey (from the JSON body field, else the DefaultRefKeyHeader header; ""
// when neither), the status WireMock answered and when it logged the request.
type Entry struct {
	Method   string    `json:"method"`
	Path     string    `json:"path"`             // URL path, query string removed
	RefKey   string    `json:"refkey,omitempty"` // body field or header, "" when absent
	Status   int       `json:"status"`           // HTTP status the mock answered
	LoggedAt time.Time `json:"logged_at,omitzero"`
}

// DefaultRefKeyField is the JSON body field that carries the refkey
// (docs/vendor-api.md#refkey; the profile's api.refkey_field).
const DefaultRefKeyField = "refkey"

// DefaultRefKeyHeader is the correlation header the worker sends with the
// refkey (worker/vendorapi DefaultCorrelationHeader); Read falls back to
// it when the body has no refkey.
const DefaultRefKeyHeader = "X-Refkey"

// DefaultHTTPTimeout bounds one call to WireMock's admin API.
const DefaultHTTPTimeout = 30 * time.Second

// maxJournalBytes bounds the journal document read, bytes.
const maxJournalBytes = 512 << 20

var (
	// ErrDisabled: WireMock runs with its request journal disabled,
	// so nothing can be said about what reached the vendor.
	ErrDisabled = errors.New("wiremock request journal is disabled")
	// ErrTruncated: WireMock kept fewer requests than it received
	// (--max-request-journal-entries); duplicates could hide in the rest.
	ErrTruncated = errors.New("wiremock request journal is truncated")
)

// wiremockJournal is the part of WireMock's GET /__admin/requests answer
// Read reads (ServeEvents, newest first).
type wiremockJournal struct {
	Requests []struct {
		Request struct {
			URL          string                     `json:"url"`
			Method       string                     `json:"method"`
			Headers      map[string]json.RawMessage `json:"headers"` // a string or a list of strings
			Body         string                     `json:"body"`
			BodyAsBase64 string                     `json:"bodyAsBase64"`
			LoggedDate   int64                      `json:"loggedDate"` // ms since the epoch
		} `json:"request"`
		Response struct {
			Status int `json:"status"`
		} `json:"response"`
		ResponseDefinition struct {
			Status int `json:"status"`
		} `json:"responseDefinition"`
	} `json:"requests"`
	Meta struct {
		Total *int `json:"total"`
	} `json:"meta"`
	RequestJournalDisabled bool `json:"requestJournalDisabled"`
}

// Read fetches every request in WireMock's journal (GET
// {baseURL}/__admin/requests; go-wiremock v1.11.0 only counts requests, it
// does not list them) and returns them oldest first. RefKey comes from the
// JSON body field refkeyField ("" = DefaultRefKeyField), else from the
// DefaultRefKeyHeader header. Status is the answer WireMock logged. c nil
// uses a client with DefaultHTTPTimeout. Errors: ErrDisabled,
// ErrTruncated, a non-200 answer, or the transport's.
func Read(ctx context.Context, c *http.Client, baseURL, refkeyField string) ([]Entry, error) {
	if c == nil {
		c = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(baseURL, "/")+"/__admin/requests", nil)
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("read journal: %s answered %d: %s", req.URL, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return Parse(io.LimitReader(resp.Body, maxJournalBytes), refkeyField)
}

// Parse decodes a WireMock GET /__admin/requests document (as
// Read does), oldest first. Errors: ErrDisabled,
// ErrTruncated, or a decoding error.
func Parse(r io.Reader, refkeyField string) ([]Entry, error) {
	return ParseLocated(r, Locator{BodyPath: []string{cmp.Or(refkeyField, DefaultRefKeyField)}, Header: DefaultRefKeyHeader})
}

// ParseLocated is Parse with the refkey found where loc says: the body
// path first, then the header (Locator).
func ParseLocated(r io.Reader, loc Locator) ([]Entry, error) {
	var j wiremockJournal
	if err := json.NewDecoder(r).Decode(&j); err != nil {
		return nil, fmt.Errorf("decode journal: %w", err)
	}
	if j.RequestJournalDisabled {
		return nil, fmt.Errorf("decode journal: %w", ErrDisabled)
	}
	if j.Meta.Total != nil && *j.Meta.Total > len(j.Requests) {
		return nil, fmt.Errorf("decode journal: %w: %d of %d requests listed", ErrTruncated, len(j.Requests), *j.Meta.Total)
	}
	out := make([]Entry, 0, len(j.Requests))
	for i := len(j.Requests) - 1; i >= 0; i-- { // WireMock lists the newest first
		e := j.Requests[i]
		path := e.Request.URL
		if k := strings.IndexAny(path, "?#"); k >= 0 {
			path = path[:k]
		}
		body := e.Request.Body
		if body == "" && e.Request.BodyAsBase64 != "" {
			if b, err := base64.StdEncoding.DecodeString(e.Request.BodyAsBase64); err == nil {
				body = string(b)
			}
		}
		refkey := ""
		if len(loc.BodyPath) > 0 {
			refkey = BodyPath([]byte(body), loc.BodyPath)
		}
		if refkey == "" && loc.Header != "" {
			refkey = header(e.Request.Headers, loc.Header)
		}
		var at time.Time
		if e.Request.LoggedDate > 0 {
			at = time.UnixMilli(e.Request.LoggedDate).UTC()
		}
		out = append(out, Entry{
			Method:   e.Request.Method,
			Path:     path,
			RefKey:   refkey,
			Status:   cmp.Or(e.Response.Status, e.ResponseDefinition.Status),
			LoggedAt: at,
		})
	}
	return out, nil
}

// BodyField returns the string field of a JSON object body, "" when the
// body is not a JSON object or the field is absent or not a string.
func BodyField(body []byte, field string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[field], &s) != nil {
		return ""
	}
	return s
}

// header returns the first value of a WireMock logged header, matched
// case-insensitively.
func header(h map[string]json.RawMessage, name string) string {
	for k, raw := range h {
		if !strings.EqualFold(k, name) {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		var l []string
		if json.Unmarshal(raw, &l) == nil && len(l) > 0 {
			return l[0]
		}
	}
	return ""
}
