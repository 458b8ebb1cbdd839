//go:build integration

package pageload

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/testlog"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/vendormock/pagesite"
)

// TestPageloadRunSmall runs the experiment end to end at a small size
// (one 10-image page and the backend page, one load each over HTTP/1.1
// and HTTP/2, 20 ms RTT): every load complete, on its protocol and on
// fresh connections, one connection per HTTP/2 load and several per
// HTTP/1.1 load, every file written. It asserts no time: one load per
// cell says nothing about speed, so the timing checks may go either way
// (Run then returns ErrJudged, which is accepted). Then the negative
// control of the browser's trust: a Chromium given another SPKI hash
// refuses the site's certificate. About 15 s here (18 s with the build).
func TestPageloadRunSmall(t *testing.T) {
	images, err := vendormock.ImagesFromEnv()
	if err != nil {
		t.Fatalf("lab images: %v\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a (./run.sh test does both)", err)
	}
	exe, err := FindChromium()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Resources, cfg.Runs, cfg.RTTMS, cfg.APIDelayMS = []int{10}, 1, 20, 300
	cfg.Images, cfg.Session, cfg.Chromium = images, os.Getenv(vendormock.EnvSession), exe
	cfg.Out = filepath.Join(t.TempDir(), "pageload")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	log := testlog.New(t)
	if err := Run(ctx, cfg, log); err != nil && !errors.Is(err, ErrJudged) {
		t.Fatalf("Run: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(cfg.Out, SummaryJSON))
	if err != nil {
		t.Fatal(err)
	}
	var sum Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	for _, c := range sum.Checks {
		switch c.Name {
		case CheckComplete, CheckProtocol, CheckFresh, CheckConnections:
			if !c.Pass {
				t.Errorf("%s", c.VerdictLine())
			}
		}
	}
	if len(sum.Cells) != 4 || sum.Setup.Chromium == "" || !strings.HasPrefix(sum.Setup.Nginx, "nginx/") || len(sum.Setup.ProbeMS) != 2 {
		t.Errorf("summary: %d cells, setup %+v", len(sum.Cells), sum.Setup)
	}
	files, _ := filepath.Glob(filepath.Join(cfg.Out, "load-*.json"))
	for _, f := range []string{SummaryMD, filepath.Join(ChartsDir, ChartPages), filepath.Join(ChartsDir, ChartBack)} {
		if _, err := os.Stat(filepath.Join(cfg.Out, f)); err != nil {
			t.Error(err)
		}
	}
	if len(files) != 4 || !strings.Contains(log.String(), "[pageload] 4/4 run 1") {
		t.Errorf("%d load files, want 4; progress lines in the log: %v", len(files), strings.Contains(log.String(), "[pageload]"))
	}

	t.Run("negative control: another CA's hash is refused", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := WritePages(filepath.Join(dir, "www"), []int{1}); err != nil {
			t.Fatal(err)
		}
		site, err := pagesite.Start(ctx, pagesite.Options{Images: images, Root: filepath.Join(dir, "www"), WorkDir: filepath.Join(dir, "site"), Session: cfg.Session, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		defer site.Close(context.WithoutCancel(ctx))
		ns, err := site.NetNS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		other := strings.Repeat("A", 43) + "="
		br, err := NewBrowser(ctx, BrowserOptions{ExecPath: exe, Host: site.Host, SPKIHash: other, NetNS: ns})
		if err != nil {
			t.Fatal(err)
		}
		defer br.Close()
		_, err = br.Load(ctx, "https://"+site.Host+":8442/run/neg/p1.html", 20*time.Second)
		if err == nil || !strings.Contains(err.Error(), "ERR_CERT_AUTHORITY_INVALID") {
			t.Errorf("load with another CA's hash: %v; want ERR_CERT_AUTHORITY_INVALID", err)
		}
	})
}
