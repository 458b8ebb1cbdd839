package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseJournalSample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vendormock", "journal.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(bytes.NewReader(b), "refkey")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := []Entry{
		{Method: "POST", Path: "/v1/token", RefKey: "", Status: 200, LoggedAt: time.UnixMilli(1796007303710).UTC()},
		{Method: "POST", Path: "/v3/message", RefKey: "rk-0001", Status: 200, LoggedAt: time.UnixMilli(1796007304086).UTC()},
		{Method: "POST", Path: "/v3/message", RefKey: "rk-0002", Status: 401, LoggedAt: time.UnixMilli(1796007304117).UTC()},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d (oldest first):\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if _, err := Parse(strings.NewReader(`{"requests": [], "requestJournalDisabled": true}`), "refkey"); err == nil {
		t.Error("disabled journal: nil error")
	}
}

func TestBodyField(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"refkey":"a-1","text":"x"}`, "a-1"},
		{` {"refkey": "b"}`, "b"},
		{`{"refkey": 12}`, ""},
		{`{"other": "x"}`, ""},
		{`grant_type=client_credentials`, ""},
		{``, ""},
		{`{"refkey": "unterminated`, ""},
	} {
		if got := BodyField([]byte(tc.body), "refkey"); got != tc.want {
			t.Errorf("BodyField(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, doc string
		want      error
	}{
		{"disabled", `{"requests": [], "requestJournalDisabled": true}`, ErrDisabled},
		{"truncated", `{"requests": [], "meta": {"total": 3}}`, ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse(strings.NewReader(tt.doc), ""); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := Parse(strings.NewReader(`<html>`), ""); err == nil {
		t.Fatal("a non-JSON answer parsed without error")
	}
}

func TestParseLocatedFindsTheRefkeyWhereTheLocatorSays(t *testing.T) {
	doc := `{"requests":[
	 {"request":{"url":"/send","method":"POST","headers":{"X-Req-Id":"h-2"},"body":"{\"meta\":{\"ref\":\"b-2\"}}"},"response":{"status":202}},
	 {"request":{"url":"/send?x=1","method":"POST","headers":{"x-req-id":["h-1"]},"body":"{\"meta\":{\"ref\":7}}"},"response":{"status":202}}]}`
	got, err := ParseLocated(strings.NewReader(doc), Locator{BodyPath: ParsePath("$.meta.ref"), Header: "X-Req-Id"})
	if err != nil {
		t.Fatal(err)
	}
	// Oldest first: the second listed is the first; its body value is a
	// number, so the header is used.
	if len(got) != 2 || got[0].RefKey != "h-1" || got[1].RefKey != "b-2" || got[0].Path != "/send" {
		t.Fatalf("got %+v, want refkeys h-1 (header fallback) then b-2 (body path)", got)
	}
	got, err = ParseLocated(strings.NewReader(doc), Locator{Header: "X-Req-Id"})
	if err != nil || got[1].RefKey != "h-2" {
		t.Fatalf("header only: got %+v, %v; want h-2", got, err)
	}
	if p := ParsePath("client_ref"); len(p) != 1 || p[0] != "client_ref" {
		t.Fatalf("ParsePath(client_ref) = %v", p)
	}
}
