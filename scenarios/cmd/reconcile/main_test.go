package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
)

// fixture writes a published list and records for refkeys a and b, and
// serves a WireMock journal in which a appears sends times.
func fixture(t *testing.T, aSends int) (dir, wiremock string) {
	t.Helper()
	dir = t.TempDir()
	var pub bytes.Buffer
	for i, k := range []string{"a", "b"} {
		if err := reconcile.WritePublished(&pub, reconcile.Published{Seq: i + 1, RefKey: k, MessageID: "m-" + k, Valid: true}); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "published.jsonl"), pub.String())
	write(t, filepath.Join(dir, "records.jsonl"),
		`{"seq":1,"refkey":"a","outcome":"SENT","queue":""}`+"\n"+`{"seq":2,"refkey":"b","outcome":"SENT","queue":""}`+"\n")
	var reqs []string
	for _, k := range append(repeat(aSends, "a"), "b") {
		reqs = append([]string{fmt.Sprintf(`{"request":{"url":"/v3/message","method":"POST","body":"{\"refkey\":\"%s\"}"},"response":{"status":200}}`, k)}, reqs...)
	}
	doc := `{"requests":[` + strings.Join(reqs, ",") + `],"requestJournalDisabled":false}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, doc) }))
	t.Cleanup(srv.Close)
	return dir, srv.URL
}

func repeat(n int, s string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestExitCodes(t *testing.T) {
	okDir, okWM := fixture(t, 1)
	dupDir, dupWM := fixture(t, 2)
	tests := []struct {
		name       string
		args       []string
		want       int
		wantStdout string
		wantStderr string
	}{
		{name: "help", args: []string{"-h"}, want: exitOK, wantStderr: "Exit codes"},
		{name: "no arguments", args: nil, want: exitUsage, wantStderr: "-published is required"},
		{name: "unknown flag", args: []string{"-nope"}, want: exitUsage, wantStderr: "-nope"},
		{name: "positional argument", args: []string{"-published", "x", "extra"}, want: exitUsage, wantStderr: "unexpected arguments"},
		{name: "empty queue name", args: []string{"-published", "x", "-queue", ""}, want: exitUsage, wantStderr: "-queue"},
		{name: "max attempts 0", args: []string{"-published", "x", "-max-attempts", "0"}, want: exitUsage, wantStderr: "-max-attempts 0"},
		{name: "published file missing", args: []string{"-published", filepath.Join(okDir, "nope")}, want: exitGather, wantStderr: "gather published"},
		{name: "nothing checked", args: []string{"-published", filepath.Join(okDir, "published.jsonl")}, want: exitViolation, wantStdout: "NOTHING CHECKED"},
		{
			name: "clean",
			args: []string{"-published", filepath.Join(okDir, "published.jsonl"), "-records", filepath.Join(okDir, "records.jsonl"),
				"-wiremock", okWM, "-json", filepath.Join(okDir, "report.json")},
			want: exitOK, wantStdout: "reconcile      OK", wantStderr: "skipped: places",
		},
		{
			name: "sent twice",
			args: []string{"-published", filepath.Join(dupDir, "published.jsonl"), "-records", filepath.Join(dupDir, "records.jsonl"),
				"-wiremock", dupWM, "-json", filepath.Join(dupDir, "report.json")},
			want: exitViolation, wantStdout: "duplicate", wantStderr: "1 duplicate(s)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := exitCode(context.Background(), tt.args, &stdout, &stderr)
			if got != tt.want {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.want, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantStdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr.String())
			}
		})
	}

	// The JSON reports carry the verdicts.
	for _, c := range []struct {
		dir        string
		ok         bool
		duplicates int
	}{{okDir, true, 0}, {dupDir, false, 1}} {
		b, err := os.ReadFile(filepath.Join(c.dir, "report.json"))
		if err != nil {
			t.Fatalf("report not written: %v", err)
		}
		var r reconcile.Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("report: %v", err)
		}
		if r.OK != c.ok || r.Duplicates != c.duplicates || r.Published != 2 {
			t.Errorf("report %s: ok %v duplicates %d published %d; want %v %d 2", c.dir, r.OK, r.Duplicates, r.Published, c.ok, c.duplicates)
		}
	}
}
