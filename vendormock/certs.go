package vendormock

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// DefaultCertValidity is how long the run's CA and server certificate are
// valid: a run is minutes long; a day leaves room for a slow machine.
const DefaultCertValidity = 24 * time.Hour

// Certificate file names inside the directory given to GenerateCerts.
const (
	CAFileName    = "ca.pem"     // the lab CA certificate (PEM); public
	CertFileName  = "server.pem" // server certificate then CA (PEM chain)
	ServerKeyFile = "server.key" // server private key (PKCS#8 PEM), mode 0600
	// ClientCertFileName and ClientKeyFileName are the worker's client
	// certificate (mutual TLS) and its key (mode 0600), in the client dir
	// given to GenerateCertsWithClient: never in the folder nginx mounts.
	ClientCertFileName = "client.pem"
	ClientKeyFileName  = "client.key"
	certDirPerm        = 0o700
	serverKeyPerms     = 0o600
)

// Certs is the TLS material of one run. Only the CA certificate is meant to
// leave the work dir; the CA's private key is never written anywhere (it
// signs the server certificate in memory and is dropped), and the server key
// exists only as KeyFile (0600) for nginx's read-only bind mount.
type Certs struct {
	CAFile   string            // PEM CA certificate: what clients trust
	CertFile string            // PEM server certificate chain for nginx
	KeyFile  string            // PEM server key for nginx, 0600; never logged
	CA       *x509.Certificate // the CA certificate
	CAPool   *x509.CertPool    // a pool holding only CA
	Host     string            // the server certificate's only DNS SAN
	// ClientCertFile and ClientKeyFile are the worker's client certificate
	// (issued by CA, for client authentication only) and its key (0600,
	// never logged); "" unless GenerateCertsWithClient was given a client
	// dir.
	ClientCertFile, ClientKeyFile string
}

// GenerateCerts creates a fresh CA and a server certificate for host (its
// only SAN) with ECDSA P-256 keys, valid from one hour ago for validFor
// (DefaultCertValidity when 0), and writes CAFileName, CertFileName and
// ServerKeyFile into dir (created 0700). Errors: dir not writable, host
// empty, crypto failures.
func GenerateCerts(dir, host string, validFor time.Duration) (*Certs, error) {
	return GenerateCertsWithClient(dir, "", host, validFor)
}

// GenerateCertsWithClient is GenerateCerts that also issues, when
// clientDir is not "", a client certificate for mutual TLS (CN
// "notifier-worker", ExtKeyUsageClientAuth only, ECDSA P-256, same
// validity) from the same CA, written as ClientCertFileName and
// ClientKeyFileName (0600) into clientDir (created 0700). The client dir
// is kept apart from dir so nginx's bind mount never holds the worker's
// key.
func GenerateCertsWithClient(dir, clientDir, host string, validFor time.Duration) (*Certs, error) {
	if host == "" {
		return nil, errors.New("generate certs: empty host")
	}
	if validFor <= 0 {
		validFor = DefaultCertValidity
	}
	if err := os.MkdirAll(dir, certDirPerm); err != nil {
		return nil, fmt.Errorf("generate certs: %w", err)
	}
	notBefore := time.Now().Add(-time.Hour).UTC()
	notAfter := notBefore.Add(time.Hour + validFor)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	caSerial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          caSerial,
		Subject:               pkix.Name{Organization: []string{"notifier-lab"}, CommonName: "notifier-lab run CA"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate: %w", err)
	}

	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate server key: %w", err)
	}
	srvSerial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: srvSerial,
		Subject:      pkix.Name{Organization: []string{"notifier-lab"}, CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create server certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		return nil, fmt.Errorf("encode server key: %w", err)
	}

	c := &Certs{
		CAFile:   filepath.Join(dir, CAFileName),
		CertFile: filepath.Join(dir, CertFileName),
		KeyFile:  filepath.Join(dir, ServerKeyFile),
		CA:       ca,
		CAPool:   x509.NewCertPool(),
		Host:     host,
	}
	c.CAPool.AddCert(ca)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}), caPEM...)
	if err := writeFile(c.CAFile, caPEM, 0o644); err != nil {
		return nil, err
	}
	if err := writeFile(c.CertFile, chain, 0o644); err != nil {
		return nil, err
	}
	if err := writeFile(c.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), serverKeyPerms); err != nil {
		return nil, err
	}
	if clientDir != "" {
		if err := c.issueClient(clientDir, ca, caKey, notBefore, notAfter); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// issueClient writes a client certificate signed by ca and its key into
// dir and sets c's client file paths.
func (c *Certs) issueClient(dir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, notBefore, notAfter time.Time) error {
	if err := os.MkdirAll(dir, certDirPerm); err != nil {
		return fmt.Errorf("generate client certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate client key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{Organization: []string{"notifier-lab"}, CommonName: "notifier-worker"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("create client certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode client key: %w", err)
	}
	c.ClientCertFile = filepath.Join(dir, ClientCertFileName)
	c.ClientKeyFile = filepath.Join(dir, ClientKeyFileName)
	if err := writeFile(c.ClientCertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return writeFile(c.ClientKeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), serverKeyPerms)
}

// randomSerial returns a random positive 128-bit serial number.
func randomSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generate serial: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

// writeFile writes data with perm, also when the file already exists with
// other permissions (the mode is set explicitly, not through the umask).
func writeFile(path string, data []byte, perm os.FileMode) error {
	if err := os.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Chmod(path, perm); err != nil {
		return fmt.Errorf("chmod %s: %w", filepath.Base(path), err)
	}
	return nil
}
