package vendormock

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGenerateCerts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	c, err := GenerateCerts(dir, "api.vendor.test", 0)
	if err != nil {
		t.Fatalf("GenerateCerts: %v", err)
	}

	caPEM, err := os.ReadFile(c.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(caPEM), "PRIVATE KEY") {
		t.Fatal("CA file holds a private key")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("%d files in the cert dir, want 3 (ca.pem, server.pem, server.key): no CA key on disk", len(entries))
	}
	fi, err := os.Stat(c.KeyFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("server key mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("cert dir mode %v, want 0700", fi.Mode().Perm())
	}

	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		t.Fatalf("server cert and key do not pair: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
		t.Errorf("server key is %T, want ECDSA P-256", leaf.PublicKey)
	}
	if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != "api.vendor.test" || len(leaf.IPAddresses) != 0 {
		t.Errorf("SANs = %v %v, want only api.vendor.test", leaf.DNSNames, leaf.IPAddresses)
	}
	if leaf.IsCA {
		t.Error("server certificate is a CA")
	}

	// The chain verifies from a pool built from the CA file alone.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA file has no certificate")
	}
	opts := x509.VerifyOptions{Roots: pool, DNSName: "api.vendor.test", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if _, err := leaf.Verify(opts); err != nil {
		t.Errorf("chain does not verify: %v", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: c.CAPool, DNSName: "api.vendor.test"}); err != nil {
		t.Errorf("chain does not verify with Certs.CAPool: %v", err)
	}
	opts.DNSName = "other.vendor.test"
	if _, err := leaf.Verify(opts); err == nil {
		t.Error("certificate verifies for another host")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: x509.NewCertPool(), DNSName: "api.vendor.test"}); err == nil {
		t.Error("certificate verifies without the lab CA")
	}
	if d := time.Until(leaf.NotAfter); d < DefaultCertValidity-time.Minute || d > DefaultCertValidity+time.Minute {
		t.Errorf("valid for %s more, want about %s", d, DefaultCertValidity)
	}

	// The chain file carries the CA after the leaf, for nginx.
	chain, _ := os.ReadFile(c.CertFile)
	var blocks int
	for rest := chain; ; blocks++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
	}
	if blocks != 2 {
		t.Errorf("server.pem holds %d certificates, want 2 (leaf, CA)", blocks)
	}
}

func TestGenerateCertsFresh(t *testing.T) {
	a, err := GenerateCerts(t.TempDir(), "api.vendor.test", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateCerts(t.TempDir(), "api.vendor.test", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if a.CA.Equal(b.CA) || a.CA.SerialNumber.Cmp(b.CA.SerialNumber) == 0 {
		t.Error("two runs produced the same CA")
	}
	if _, err := GenerateCerts(t.TempDir(), "", 0); err == nil {
		t.Error("empty host: nil error")
	}
}

// TestGenerateClientCert: the client certificate verifies against the
// run's CA for client authentication only, pairs with its key (0600), and
// lives outside the folder nginx mounts; without a client dir none is made.
func TestGenerateClientCert(t *testing.T) {
	root := t.TempDir()
	dir, clientDir := filepath.Join(root, "tls"), filepath.Join(root, "tls-client")
	c, err := GenerateCertsWithClient(dir, clientDir, "api.vendor.test", 0)
	if err != nil {
		t.Fatalf("GenerateCertsWithClient: %v", err)
	}
	if filepath.Dir(c.ClientKeyFile) != clientDir || filepath.Dir(c.ClientCertFile) != clientDir {
		t.Errorf("client files %s %s, want them in %s", c.ClientCertFile, c.ClientKeyFile, clientDir)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%d files in the nginx cert dir, want 3: the client key must not be there", len(entries))
	}
	if fi, err := os.Stat(c.ClientKeyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("client key mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	pair, err := tls.LoadX509KeyPair(c.ClientCertFile, c.ClientKeyFile)
	if err != nil {
		t.Fatalf("client cert and key do not pair: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: c.CAPool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate does not verify for client auth: %v", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: c.CAPool, DNSName: "api.vendor.test"}); err == nil {
		t.Errorf("client certificate also verifies as the server: want client auth only")
	}

	plain, err := GenerateCerts(filepath.Join(root, "plain"), "api.vendor.test", 0)
	if err != nil {
		t.Fatal(err)
	}
	if plain.ClientCertFile != "" || plain.ClientKeyFile != "" {
		t.Errorf("GenerateCerts made a client certificate: %s", plain.ClientCertFile)
	}
}
