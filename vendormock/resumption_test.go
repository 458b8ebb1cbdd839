package vendormock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTLSResumptionOption: Options.TLSResumption turns nginx's session
// cache and tickets on in the rendered nginx.conf, whatever the profile
// says (both off in alimtalk); without it the profile's "off" stays, so
// the per-request client pays a full handshake every time.
func TestTLSResumptionOption(t *testing.T) {
	for _, tc := range []struct {
		on         bool
		want, lack string
	}{
		{true, "ssl_session_cache shared:lab:1m;\n        ssl_session_tickets on;", "ssl_session_cache off;"},
		{false, "ssl_session_cache off;\n        ssl_session_tickets off;", "ssl_session_tickets on;"},
	} {
		s := &Stack{}
		dir := t.TempDir()
		if err := s.prepare(Options{ProfileDir: DefaultProfileDir, WorkDir: dir, TLSResumption: tc.on}); err != nil {
			t.Fatalf("prepare (resumption %v): %v", tc.on, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "nginx", "nginx.conf"))
		if err != nil {
			t.Fatal(err)
		}
		conf := string(b)
		if !strings.Contains(conf, tc.want) || strings.Contains(conf, tc.lack) {
			t.Errorf("resumption %v: nginx.conf wants %q and not %q:\n%s", tc.on, tc.want, tc.lack, conf)
		}
	}
}
