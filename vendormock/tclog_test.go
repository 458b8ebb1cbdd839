package vendormock

import (
	"bytes"
	"strings"
	"testing"

	tclog "github.com/testcontainers/testcontainers-go/log"
)

// testcontainers' own lines go where LogTestcontainersTo says, not to
// standard error.
func TestLogTestcontainersTo(t *testing.T) {
	before := tclog.Default()
	t.Cleanup(func() { tclog.SetDefault(before) })
	var buf bytes.Buffer
	LogTestcontainersTo(&buf)
	tclog.Printf("🐳 Creating container for image %s", "x")
	if !strings.Contains(buf.String(), "Creating container for image x") {
		t.Errorf("testcontainers' line went elsewhere; buffer = %q", buf.String())
	}
}
