//go:build integration

package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/testlog"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// mirrorProfile copies the alimtalk profile into a temporary folder and
// plants a duplicate in its nginx: every request is mirrored to WireMock
// once more (ngx_http_mirror_module), so each send reaches the vendor twice
// while the worker sees one answer. Returns the profile folder.
func mirrorProfile(t *testing.T) string {
	t.Helper()
	src, err := ResolveProfile(DefaultProfile)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "alimtalk-mirror")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	tmpl := filepath.Join(dst, "nginx.conf.tmpl")
	b, err := os.ReadFile(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	const loc = "        location / {\n"
	if strings.Count(string(b), loc) != 1 {
		t.Fatalf("%s: want exactly one %q to plant the mirror in", tmpl, loc)
	}
	planted := strings.Replace(string(b), loc, `        location = /__planted_mirror {
            internal;
            proxy_pass http://vendor_api$request_uri;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
        }

`+loc+`            mirror /__planted_mirror;
            mirror_request_body on;
`, 1)
	if err := os.WriteFile(tmpl, []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestBenchFailsOnAPlantedDuplicate is the negative control of the bench's
// verdict: nginx mirrors every send to the vendor, and Run must fail with
// ErrDelivery naming the duplicated refkeys and the evidence file (issue
// 14: the bench printed a WARNING and exited 0).
func TestBenchFailsOnAPlantedDuplicate(t *testing.T) {
	images, err := vendormock.ImagesFromEnv()
	if err != nil || images.Worker == "" {
		t.Fatalf("lab images: %v (LAB_IMAGE_WORKER %q)\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a (./run.sh test does both)", err, images.Worker)
	}
	cfg := DefaultConfig()
	cfg.Images = images // the test is the edge that reads LAB_IMAGE_* and LAB_SESSION
	cfg.Session = os.Getenv(vendormock.EnvSession)
	cfg.Count, cfg.Warmup, cfg.RTTs = 20, 2, []int{3}
	cfg.Modes = []string{vendorapi.PooledName}
	cfg.Profile = mirrorProfile(t)
	cfg.Out = filepath.Join(t.TempDir(), "results")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	log := testlog.New(t)
	err = Run(ctx, cfg, log)
	if !errors.Is(err, ErrDelivery) {
		t.Fatalf("Run = %v; want ErrDelivery (every send reached the vendor twice)", err)
	}
	for _, want := range []string{"pooled at 3 ms", "duplicated", filepath.Join(cfg.Out, "bench-pooled-3ms.json")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	rs, rerr := results.ReadResults(cfg.Out)
	if rerr != nil || len(rs) != 1 || rs[0].Reconcile == nil {
		t.Fatalf("results %+v, %v: want the run's file written before the verdict", rs, rerr)
	}
	if d := rs[0].Reconcile.Duplicates; d != cfg.Count+cfg.Warmup {
		t.Errorf("reconcile duplicates %d; want every send (%d) mirrored", d, cfg.Count+cfg.Warmup)
	}
}
