package vendormock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpstreamKeepaliveOption: Options.UpstreamKeepalive sets nginx's
// upstream keepalive pool in the rendered nginx.conf instead of the
// profile's (8 in sms); 0 keeps the profile's; a negative one is refused
// before anything is written.
func TestUpstreamKeepaliveOption(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{600, "keepalive 600;"},
		{0, "keepalive 8;"},
	} {
		s := &Stack{}
		dir := t.TempDir()
		if err := s.prepare(Options{ProfileDir: DefaultProfileDir, WorkDir: dir, UpstreamKeepalive: tc.n}); err != nil {
			t.Fatalf("prepare (upstream keepalive %d): %v", tc.n, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "nginx", "nginx.conf"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "        "+tc.want+"\n") {
			t.Errorf("upstream keepalive %d: nginx.conf lacks %q:\n%s", tc.n, tc.want, b)
		}
		if s.Profile.Nginx.UpstreamKeepalive != max(tc.n, 8) {
			t.Errorf("upstream keepalive %d: stack's profile says %d", tc.n, s.Profile.Nginx.UpstreamKeepalive)
		}
	}
	if err := (&Stack{}).prepare(Options{ProfileDir: DefaultProfileDir, WorkDir: t.TempDir(), UpstreamKeepalive: -1}); err == nil {
		t.Error("prepare took upstream keepalive -1")
	}
}
