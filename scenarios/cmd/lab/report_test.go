package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// `lab report OUT` re-renders any committed results folder offline (issue
// 16: only the bench's folders could be re-rendered): a copy of each is
// rendered again, and the reports it must write are newer than before.
func TestReportRendersEveryKindOfFolder(t *testing.T) {
	for _, tt := range []struct{ src, report string }{
		{"../../../results", "summary.md"},
		{"../../../results/sweep", "summary.md"},
		{"../../../results/matrix", "matrix.md"},
		{"../../../results/audit/go-alimtalk", "audit.html"},
		{"../../../results/audit", "clients.html"}, // the third-party clients' comparison
	} {
		t.Run(tt.src, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "copy")
			if err := os.CopyFS(dir, os.DirFS(tt.src)); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(dir, tt.report)
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(target, old, old); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := exitCode(run(context.Background(), []string{"report", dir}, noEnv, &stdout), &stderr); code != 0 {
				t.Fatalf("report %s: exit %d, stderr %q", tt.src, code, stderr.String())
			}
			fi, err := os.Stat(target)
			if err != nil || !fi.ModTime().After(old) {
				t.Errorf("%s not rewritten (%v)", tt.report, err)
			}
		})
	}
}
