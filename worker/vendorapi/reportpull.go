package vendorapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ErrNoPull: PullReport was asked of a vendor with no pull endpoint.
var ErrNoPull = errors.New("vendor has no report pull endpoint")

// PullReport fetches the delivery report of refkey: GET spec.Pull.Path
// with "{refkey}" replaced by the path-escaped refkey, on the client's
// base URL, with the bearer token of the sends
// (docs/vendor-api.md#delivery-reports). found is false on 404 (no report
// yet). Nothing is sent to the customer by this call, so any failure is
// safe to try again later. Errors: ErrNoPull; the client's configuration
// or token call failed (a *SendError); a transport failure; a status other
// than 200 and 404 (a 401 also drops the cached token); a body that is not
// a report of the spec's shape, or a report for another refkey (both wrap
// ErrMalformedReport).
func (c *Client) PullReport(ctx context.Context, spec ReportSpec, refkey string) (rep Report, found bool, err error) {
	if spec.Pull == nil {
		return Report{}, false, ErrNoPull
	}
	if c.initErr != nil {
		return Report{}, false, fmt.Errorf("pull report %s: %w", refkey, c.initErr)
	}
	tok, _, serr := c.token(ctx)
	if serr != nil {
		return Report{}, false, fmt.Errorf("pull report %s: %w", refkey, serr)
	}
	u, err := url.Parse(c.messageURL)
	if err != nil {
		return Report{}, false, fmt.Errorf("pull report %s: %w", refkey, err)
	}
	u.Path = strings.ReplaceAll(spec.Pull.Path, "{refkey}", refkey)
	u.RawPath = strings.ReplaceAll(spec.Pull.Path, "{refkey}", url.PathEscape(refkey))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Report{}, false, fmt.Errorf("pull report %s: %w", refkey, err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/json")
	hc, release, err := c.strategy.Client()
	if err != nil {
		return Report{}, false, fmt.Errorf("pull report %s: get http client: %w", refkey, err)
	}
	defer release()
	resp, err := hc.Do(req)
	if err != nil {
		return Report{}, false, fmt.Errorf("pull report %s: %w", refkey, err)
	}
	data, rerr := readBody(resp, c.maxBody)
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return Report{}, false, nil
	case resp.StatusCode == http.StatusUnauthorized:
		c.dropToken(tok)
		return Report{}, false, fmt.Errorf("pull report %s: vendor answered 401; the token is dropped", refkey)
	case resp.StatusCode != http.StatusOK:
		return Report{}, false, fmt.Errorf("pull report %s: vendor answered %d", refkey, resp.StatusCode)
	case rerr != nil:
		return Report{}, false, fmt.Errorf("pull report %s: read answer: %w", refkey, rerr)
	}
	rep, err = spec.ParseReport(data)
	if err != nil {
		return Report{}, false, fmt.Errorf("pull report %s: %w", refkey, err)
	}
	if rep.RefKey != refkey {
		return Report{}, false, fmt.Errorf("pull report %s: %w: the answer is for %q", refkey, ErrMalformedReport, rep.RefKey)
	}
	return rep, true, nil
}
