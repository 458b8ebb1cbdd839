package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Locator says where a request carries its refkey: BodyPath, object keys
// from the JSON body's root (["client_ref"], ["meta", "ref"]), then
// Header; an empty part is skipped. A black-box audit's adapter file
// gives it (docs/auditing.md#the-adapter-file).
type Locator struct {
	BodyPath []string
	Header   string
}

// ParsePath splits a JSON path of object keys ("$.meta.ref", "meta.ref",
// "client_ref") into its keys; "" gives nil.
func ParsePath(p string) []string {
	p = strings.TrimPrefix(strings.TrimPrefix(p, "$"), ".")
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

// BodyPath returns the string at path in a JSON object body, "" when the
// body is not JSON, a key is absent or the value is not a string.
func BodyPath(body []byte, path []string) string {
	raw := json.RawMessage(body)
	for _, k := range path {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		v, ok := m[k]
		if !ok {
			return ""
		}
		raw = v
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// ReadLocated is Read with the refkey found where loc says (ParseLocated).
func ReadLocated(ctx context.Context, c *http.Client, baseURL string, loc Locator) ([]Entry, error) {
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
		return nil, fmt.Errorf("read journal: %s answered %d", req.URL, resp.StatusCode)
	}
	return ParseLocated(http.MaxBytesReader(nil, resp.Body, maxJournalBytes), loc)
}
