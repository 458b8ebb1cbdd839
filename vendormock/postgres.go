package vendormock

import (
	"context"
	"fmt"
	"net/url"

	"github.com/containerd/errdefs"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// PostgreSQL of a run (LedgerPostgres).
const (
	// EnvPostgresImage names the PostgreSQL image; vendormock/images/
	// ensure-images.sh exports it (the official image when present, else
	// one built offline from Debian's postgresql package, with the same
	// POSTGRES_* contract).
	EnvPostgresImage = "LAB_IMAGE_POSTGRES"
	// DefaultPostgresImage is used when EnvPostgresImage is unset.
	DefaultPostgresImage = "postgres:16"
	// AliasPostgres is PostgreSQL's alias on the run's network.
	AliasPostgres = "postgres"
	// PostgresUser and PostgresDB are the account and database the
	// ledger uses; the password is generated per run.
	PostgresUser = "lab"
	PostgresDB   = "ledger"
)

// Postgres is the run's PostgreSQL. Both URLs carry the password: never
// log them (String redacts it).
type Postgres struct {
	Image      string
	URLNetwork string // network: postgres://lab:PASS@postgres:5432/ledger?sslmode=disable
	URLHost    string // host: postgres://lab:PASS@127.0.0.1:PORT/ledger?sslmode=disable
}

// String prints p with the password redacted.
func (p *Postgres) String() string {
	red := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil {
			return "<unparsable url>"
		}
		return u.Redacted()
	}
	return fmt.Sprintf("postgres %s at %s (host %s)", p.Image, red(p.URLNetwork), red(p.URLHost))
}

// StartPostgres starts PostgreSQL on the run's network under AliasPostgres
// with a password generated for this run, or returns the one already
// started (image is then ignored). image "" = Options.Images.Postgres
// (EnvPostgresImage as the command read it), else DefaultPostgresImage; it must exist locally (no
// pull is tried). Ready means pg_isready over TCP inside the container
// answers (the official image's init server listens on no TCP port, so
// only the final server passes) and the published port accepts
// connections, bounded by DefaultReadyTimeout. Close removes it.
// Plaintext on the run's own network: the ledger's traffic never leaves
// the machine. Errors: ErrImagesMissing, ErrNotReady, Docker errors.
func (s *Stack) StartPostgres(ctx context.Context, image string) (*Postgres, error) {
	s.pgMu.Lock()
	defer s.pgMu.Unlock()
	if s.pg != nil {
		return s.pg, nil
	}
	if image == "" {
		image = s.imagePG
	}
	if image == "" {
		image = DefaultPostgresImage
	}
	cli, err := s.dockerClient(ctx)
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	if _, err := cli.ImageInspect(ctx, image); err != nil {
		if errdefs.IsNotFound(err) {
			return nil, fmt.Errorf("start postgres: %w: %s (%s) not in the local Docker engine: run vendormock/images/ensure-images.sh and source %s",
				ErrImagesMissing, image, EnvPostgresImage, DefaultImagesEnvFile)
		}
		return nil, fmt.Errorf("start postgres: inspect %s: %w", image, err)
	}
	pass := randomHex(16)
	c, err := s.run(ctx, "postgres", []string{AliasPostgres}, testcontainers.ContainerRequest{
		Image:        image,
		ExposedPorts: []string{"5432/tcp"}, // on 127.0.0.1 (Stack.run)
		Env: map[string]string{
			"POSTGRES_USER":     PostgresUser,
			"POSTGRES_PASSWORD": pass,
			"POSTGRES_DB":       PostgresDB,
		},
		WaitingFor: wait.ForAll(
			wait.ForExec([]string{"pg_isready", "-q", "-h", "127.0.0.1", "-p", "5432", "-U", PostgresUser, "-d", PostgresDB}).
				WithExitCodeMatcher(func(code int) bool { return code == 0 }),
			wait.ForListeningPort("5432/tcp").SkipInternalCheck(),
		).WithDeadline(DefaultReadyTimeout),
	})
	if err != nil {
		return nil, fmt.Errorf("start postgres (%s; pg_isready must be on the image's PATH): %w", image, err)
	}
	addr, err := hostAddr(ctx, c, "5432/tcp")
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	mk := func(hostport string) string {
		u := url.URL{Scheme: "postgres", User: url.UserPassword(PostgresUser, pass), Host: hostport, Path: "/" + PostgresDB, RawQuery: "sslmode=disable"}
		return u.String()
	}
	s.pg = &Postgres{Image: image, URLNetwork: mk(AliasPostgres + ":5432"), URLHost: mk(addr)}
	s.logf("postgres ready: %s", s.pg)
	return s.pg, nil
}
