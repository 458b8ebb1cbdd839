package vendorapi

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

func TestParseStatusTable(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // substrings of the error; nil = valid
	}{
		{"yaml", "success_code: \"1000\"\nstatuses:\n  \"429\": NOT_SENT\n  \"503\": NOT_SENT\n  4xx: REJECTED\ncodes:\n  \"3018\": REJECTED\n", nil},
		{"json", `{"success_code":"1000","statuses":{"408":"NOT_SENT","5xx":"UNKNOWN"}}`, nil},
		{"bad outcome", "success_code: \"1000\"\nstatuses:\n  \"429\": RETRY\n", []string{"statuses.429", `"RETRY"`, "REJECTED, NOT_SENT, UNKNOWN"}},
		{"sent not allowed", "success_code: \"1000\"\ncodes:\n  \"2000\": SENT\n", []string{"codes.2000", "REJECTED, NOT_SENT, UNKNOWN"}},
		{"2xx status", "success_code: \"1000\"\nstatuses:\n  \"202\": REJECTED\n", []string{"statuses.202", "other than 2xx"}},
		{"bad status", "success_code: \"1000\"\nstatuses:\n  \"42\": REJECTED\n", []string{"statuses.42", "100-599"}},
		{"no success code", "statuses:\n  \"429\": NOT_SENT\n", []string{"success_code: empty"}},
		{"unknown field", "success_code: \"1000\"\nstatus:\n  \"429\": NOT_SENT\n", []string{"field status not found", "success_code, statuses, codes"}},
		{"success code remapped", "success_code: \"1000\"\ncodes:\n  \"1000\": REJECTED\n", []string{"codes.\"1000\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseStatusTable([]byte(tt.in))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("ParseStatusTable: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrStatusTable) {
				t.Fatalf("ParseStatusTable = %v, want ErrStatusTable", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestLoadStatusTable(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "status.yaml")
	if err := os.WriteFile(good, []byte("success_code: \"1000\"\nstatuses:\n  \"503\": NOT_SENT\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tab, err := LoadStatusTable(good)
	if err != nil || tab.ForStatus(503) != outcome.NotSent {
		t.Fatalf("LoadStatusTable(file) = %+v, %v", tab, err)
	}
	if tab, err := LoadStatusTable(`{"success_code":"1000","statuses":{"503":"NOT_SENT"}}`); err != nil || tab.ForStatus(503) != outcome.NotSent {
		t.Fatalf("LoadStatusTable(inline) = %+v, %v", tab, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("success_code: \"1000\"\nstatuses:\n  \"429\": LATER\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadStatusTable(bad)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "statuses.429") {
		t.Fatalf("LoadStatusTable(bad) = %v, want the file and the field named", err)
	}
	if _, err := LoadStatusTable(filepath.Join(dir, "missing.yaml")); !errors.Is(err, ErrStatusTable) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("LoadStatusTable(missing) = %v", err)
	}
}

// TestJudgeStatusTable: 429 and 408 are NOT_SENT by default, 503 UNKNOWN
// unless the profile's table says NOT_SENT, other 4xx REJECTED, 502/504
// UNKNOWN; a business code named in codes wins over the status.
func TestJudgeStatusTable(t *testing.T) {
	profile := DefaultStatusTable()
	profile.Statuses["503"] = outcome.NotSent
	profile.Codes = map[string]outcome.Outcome{"9001": outcome.NotSent}
	tests := []struct {
		name   string
		table  *StatusTable
		status int
		body   string
		want   outcome.Outcome
		sentry error
	}{
		{"200 success", nil, 200, `{"code":"1000"}`, outcome.Sent, nil},
		{"200 business code", nil, 200, `{"code":"3018"}`, outcome.Rejected, ErrRejected},
		{"429", nil, 429, `{"code":"429"}`, outcome.NotSent, ErrNotProcessed},
		{"408", nil, 408, ``, outcome.NotSent, ErrNotProcessed},
		{"421 (nginx refused the client certificate)", nil, 421, `{"code":"CLIENT_CERT","description":"client certificate required"}`, outcome.NotSent, ErrNotProcessed},
		{"503 default", nil, 503, ``, outcome.Unknown, ErrBadStatus},
		{"503 profile", &profile, 503, ``, outcome.NotSent, ErrNotProcessed},
		{"400", nil, 400, `{"code":"3001"}`, outcome.Rejected, ErrRejected},
		{"502", nil, 502, `<html>`, outcome.Unknown, ErrBadStatus},
		{"504", nil, 504, ``, outcome.Unknown, ErrBadStatus},
		{"200 code mapped", &profile, 200, `{"code":"9001"}`, outcome.NotSent, ErrNotProcessed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.table != nil {
				opts = append(opts, WithStatusTable(*tt.table))
			}
			c := NewClient("https://vendor.test", Credentials{}, nil, opts...)
			_, se := c.judge(tt.status, http.Header{}, []byte(tt.body), nil, nil)
			var err error
			if se != nil {
				err = se
			}
			if got := ClassOf(err); got != tt.want {
				t.Fatalf("class %s, want %s (%v)", got, tt.want, err)
			}
			if tt.sentry != nil && !errors.Is(err, tt.sentry) {
				t.Errorf("error %v does not wrap %v", err, tt.sentry)
			}
		})
	}
}

func TestJudgeRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c := NewClient("https://vendor.test", Credentials{}, nil, WithClock(func() time.Time { return now }))
	tests := []struct {
		name   string
		status int
		value  string
		want   time.Duration
	}{
		{"seconds", 429, "7", 7 * time.Second},
		{"date", 429, now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"none", 429, "", 0},
		{"garbage", 429, "soon", 0},
		{"not on REJECTED", 400, "7", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.value != "" {
				h.Set("Retry-After", tt.value)
			}
			_, se := c.judge(tt.status, h, nil, nil, nil)
			if se == nil || se.RetryAfter != tt.want {
				t.Fatalf("RetryAfter = %+v, want %v", se, tt.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"0", 0, true},
		{"120", 2 * time.Minute, true},
		{" 5 ", 5 * time.Second, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"", 0, false},
		{"99999999999999999999", 0, false},  // beyond int64: not a number
		{"100000000", 24 * time.Hour, true}, // capped, no overflow
		{"Mon, 30 Nov 2026 12:01:00 GMT", time.Minute, true},
		{"Mon, 30 Nov 2026 11:00:00 GMT", 0, true}, // in the past
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ParseRetryAfter(tt.in, now)
			if ok != tt.wantOK || (ok && got != tt.want) {
				t.Fatalf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestProfileStatusTable: the alimtalk profile's table parses and says
// what its comments say.
func TestProfileStatusTable(t *testing.T) {
	tab, err := LoadStatusTable(filepath.Join("..", "..", "vendormock", "profiles", "alimtalk", "status.yaml"))
	if err != nil {
		t.Fatalf("load profile table: %v", err)
	}
	for status, want := range map[int]outcome.Outcome{429: outcome.NotSent, 408: outcome.NotSent, 503: outcome.Unknown,
		400: outcome.Rejected, 404: outcome.Rejected, 502: outcome.Unknown, 504: outcome.Unknown} {
		if got := tab.ForStatus(status); got != want {
			t.Errorf("status %d: %s, want %s", status, got, want)
		}
	}
	if o, ok := tab.ForCode("4290"); !ok || o != outcome.NotSent {
		t.Errorf("code 4290: %s %v, want NOT_SENT", o, ok)
	}
}
