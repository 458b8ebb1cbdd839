package java

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// selfTestSources are the classes SelfTest needs: none of them imports the
// RabbitMQ client, so the test needs only a JDK.
var selfTestSources = []string{"Json", "Classify", "Ledger", "Records", "SendWindow", "Message", "Intake", "Config", "SendResult", "Handler", "SelfTest"}

// TestSelfTest compiles the worker's broker-free classes and runs
// notifierlab.SelfTest (classification, status table, ledger, send window,
// the handler's window re-check after the ledger's begin,
// records shape, intake). A missing JDK fails the test: the Java worker would
// otherwise go unchecked.
func TestSelfTest(t *testing.T) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Fatal("javac not found: install a JDK 17 (Debian: apt-get install openjdk-17-jdk-headless) to check the Java reference worker")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatal("java not found: install a JDK 17 (Debian: apt-get install openjdk-17-jdk-headless)")
	}
	out := t.TempDir()
	args := []string{"-encoding", "UTF-8", "-d", out}
	for _, s := range selfTestSources {
		args = append(args, filepath.Join("src", "notifierlab", s+".java"))
	}
	if b, err := exec.Command(javac, args...).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	b, err := exec.Command(java, "-cp", out, "notifierlab.SelfTest").CombinedOutput()
	if err != nil {
		t.Fatalf("SelfTest: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), ", 0 failed") {
		t.Fatalf("SelfTest did not report its checks:\n%s", b)
	}
	t.Logf("%s", strings.TrimSpace(string(b)))
}
