package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDirectUsage: -h prints the direct usage (exit 0); a bad count or a
// missing vendor exits 2 and names the problem.
func TestDirectUsage(t *testing.T) {
	env := envOf(map[string]string{"VENDOR_URL": "http://127.0.0.1:1", "VENDOR_CLIENT_ID": "lab", "VENDOR_CLIENT_SECRET": "s"})
	tests := []struct {
		name     string
		args     []string
		getenv   func(string) string
		wantCode int
		wantText string
	}{
		{"help", []string{"-h"}, env, 0, "notifier-worker direct: call the vendor client"},
		{"count 0", []string{"-count", "0"}, env, 2, "count 0"},
		{"no vendor", []string{"-count", "1"}, envOf(nil), 2, "vendor url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := directMain(context.Background(), tc.args, tc.getenv, &out, &errOut)
			if code != tc.wantCode || !strings.Contains(errOut.String(), tc.wantText) {
				t.Errorf("exit %d, stderr %q; want %d mentioning %q", code, errOut.String(), tc.wantCode, tc.wantText)
			}
		})
	}
}
