//go:build integration

package vendormock

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRateLimitEnforced: with Options.RateLimit 5 (the alimtalk profile's
// burst 8, Retry-After 1), 30 sends made at once are
// refused 429 by nginx beyond the burst, each with Retry-After 1 and the
// code 4290, and WireMock's journal holds only the accepted ones; sends
// paced under the rate after the bucket drained are all accepted (the
// positive control: the limit refuses excess, not every send).
func TestRateLimitEnforced(t *testing.T) {
	im := labImages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s := startStack(t, ctx, Options{ServerDelayMS: 0, RateLimit: 5, Images: im, WorkDir: t.TempDir(), Log: testLog{t}})
	if s.RateLimit != 5 {
		t.Fatalf("Stack.RateLimit %d, want 5", s.RateLimit)
	}
	c := s.HostClient()
	defer c.CloseIdleConnections()
	api := s.Profile.API
	req, _ := http.NewRequest(http.MethodPost, s.VendorURL+api.TokenPath, http.NoBody)
	req.SetBasicAuth(s.ClientID, s.ClientSecret)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	var tok map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != 200 {
		t.Fatalf("token: status %d decode %v (the token call is not limited)", resp.StatusCode, err)
	}
	resp.Body.Close()
	if err := s.ResetJournal(ctx); err != nil {
		t.Fatal(err)
	}
	send := func(refkey string) (int, string, string) {
		body := `{"refkey":"` + refkey + `","recipient":"010****0000","template_code":"T1","text":"hi"}`
		req, _ := http.NewRequest(http.MethodPost, s.VendorURL+api.SendPath, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok["accesstoken"])
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(s.Profile.Client.CorrelationHeader, refkey)
		resp, err := c.Do(req)
		if err != nil {
			t.Errorf("send %s: %v", refkey, err) // not Fatalf: called from goroutines
			return 0, "", ""
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Retry-After"), string(raw)
	}
	// The 30 sends go out together, so they reach nginx well inside the
	// 4.2 s the bucket takes to pass them all, even on a slow machine
	// (sent one after another, 150 ms each would have seen no 429).
	type answer struct {
		code             int
		retryAfter, body string
	}
	answers := make([]answer, 30)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range answers {
		wg.Go(func() {
			code, retryAfter, body := send("rlt-fast-" + randomHex(3) + "-" + string(rune('a'+i%26)))
			answers[i] = answer{code, retryAfter, body}
		})
	}
	wg.Wait()
	accepted, refused := 0, 0
	for _, a := range answers {
		switch a.code {
		case 200:
			accepted++
		case 429:
			refused++
			if a.retryAfter != "1" || !strings.Contains(a.body, `"code":"4290"`) {
				t.Errorf("429: Retry-After %q body %s, want 1 and code 4290", a.retryAfter, a.body)
			}
		default:
			t.Errorf("send: status %d %s, want 200 or 429", a.code, a.body)
		}
	}
	elapsed := time.Since(start)
	// nginx passes the burst at once, then one per 1/rate.
	if most := 8 + 1 + int(5*elapsed.Seconds()+1); accepted > most || refused == 0 {
		t.Errorf("30 sends in %s: %d accepted, %d refused; want at most %d accepted and some refused", elapsed, accepted, refused, most)
	}
	t.Logf("30 sends in %s: %d accepted, %d refused 429", elapsed, accepted, refused)
	n, err := s.JournalCount(ctx, http.MethodPost, api.SendPath)
	if err != nil || n != int64(accepted) {
		t.Errorf("journal holds %d sends (%v), want the %d accepted: a 429 never reaches the vendor", n, err, accepted)
	}
	// Drained bucket, then 8 sends at 4/s: all accepted.
	time.Sleep(3 * time.Second)
	for i := range 8 {
		if code, _, body := send("rlt-paced-" + randomHex(3) + "-" + string(rune('a'+i))); code != 200 {
			t.Errorf("paced send %d at 4/s under 5/s: status %d %s, want 200", i, code, body)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
