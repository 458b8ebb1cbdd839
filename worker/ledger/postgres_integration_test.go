//go:build integration

package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/wait"
	"go.uber.org/goleak"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// pgStartTimeout bounds the PostgreSQL container's start (3 min).
const pgStartTimeout = 3 * time.Minute

// envImagePostgres names the lab's PostgreSQL image (.lab/images.env,
// written by vendormock/images/ensure-images.sh).
const envImagePostgres = "LAB_IMAGE_POSTGRES"

func init() {
	leakIgnores = append(leakIgnores,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

var (
	pgOnce sync.Once
	pgURL  string
	pgErr  error
	pgSeq  atomic.Int64
)

// postgresURL starts the lab's PostgreSQL image once for the package
// (testcontainers' postgres module; durable settings: the module's default
// `-c fsync=off` is replaced by plain `postgres`) and returns its URL. It
// fails the test when the image is not built or does not start.
func postgresURL(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() {
		vendormock.EnsureTestcontainersEnv()
		img, err := postgresImage()
		if err != nil {
			pgErr = err
			return
		}
		ctx := context.Background()
		c, err := tcpostgres.Run(ctx, img,
			tcpostgres.WithDatabase("ledger"), tcpostgres.WithUsername("notifier"), tcpostgres.WithPassword("ledger-test"),
			// The module's waits (ready logged twice, then the port), with
			// pgStartTimeout instead of their 60 s: initdb alone takes longer
			// on a loaded shared host.
			testcontainers.WithWaitStrategyAndDeadline(pgStartTimeout,
				wait.ForLog("database system is ready to accept connections").WithOccurrence(2).WithStartupTimeout(pgStartTimeout),
				wait.ForListeningPort("5432/tcp").WithStartupTimeout(pgStartTimeout)),
			testcontainers.WithCmd("postgres"))
		if c != nil {
			afterAll = append(afterAll, func() { _ = testcontainers.TerminateContainer(c) })
		}
		if err != nil {
			pgErr = fmt.Errorf("start postgres %s: %w", img, err)
			return
		}
		pgURL, pgErr = c.ConnectionString(ctx, "sslmode=disable")
	})
	if pgErr != nil {
		t.Fatal(pgErr)
	}
	return pgURL
}

// postgresImage returns LAB_IMAGE_POSTGRES from the environment or from
// .lab/images.env at the repository root (vendormock.ReadImagesEnv: the
// environment wins).
func postgresImage() (string, error) {
	if v := os.Getenv(envImagePostgres); v != "" {
		return v, nil
	}
	im, err := vendormock.ReadImagesEnv(vendormock.DefaultImagesEnvFile)
	if im.Postgres == "" {
		return "", fmt.Errorf("%s not set and not in %s (%v): build the images with vendormock/images/ensure-images.sh", envImagePostgres, vendormock.DefaultImagesEnvFile, err)
	}
	return im.Postgres, nil
}

// freshSchema creates an empty schema and returns the URL that selects it.
func freshSchema(t testing.TB) string {
	t.Helper()
	base := postgresURL(t)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), pgSeq.Add(1))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	return base + "&search_path=" + name
}

func openPostgres(t *testing.T, url string) *ledger.Postgres {
	t.Helper()
	s, err := ledger.OpenPostgres(context.Background(), url)
	if err != nil {
		t.Fatalf("OpenPostgres: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestContractPostgres runs the one table of contract cases on PostgreSQL.
func TestContractPostgres(t *testing.T) {
	ledgertest.Contract(t, func(t *testing.T) ledger.Store { return openPostgres(t, freshSchema(t)) })
}

// TestPostgresOpenStoreAndDurableCommits: OpenStore takes the URL, and the
// session commits synchronously whatever the server default.
func TestPostgresOpenStoreAndDurableCommits(t *testing.T) {
	url := freshSchema(t)
	s, err := ledger.OpenStore(context.Background(), url)
	if err != nil {
		t.Fatalf("OpenStore: %v", err)
	}
	defer s.Close()
	if _, ok := s.(*ledger.Postgres); !ok {
		t.Fatalf("OpenStore(%s) = %T; want *ledger.Postgres", vendormockRedact(url), s)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ALTER DATABASE ledger SET synchronous_commit = off"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "ALTER DATABASE ledger RESET synchronous_commit")
	s2 := openPostgres(t, url)
	var got string
	if err := s2.QueryRowForTest(ctx, "SHOW synchronous_commit", &got); err != nil || got != "on" {
		t.Fatalf("synchronous_commit = %q, %v; want on although the database default is off", got, err)
	}
}

func vendormockRedact(url string) string {
	if i := strings.Index(url, "@"); i > 0 {
		return "postgres://…" + url[i:]
	}
	return url
}

// TestRacePostgresBegin: 32 goroutines over two pools (two replicas) call
// Begin on one refkey at the same moment: exactly one proceeds, on a new
// refkey and again on a NOT_SENT one (checkOneProceeds, whose failure
// TestRacePostgresNaiveBeginFails shows).
func TestRacePostgresBegin(t *testing.T) {
	url := freshSchema(t)
	a, b := openPostgres(t, url), openPostgres(t, url)
	const n = 32
	if err := checkOneProceeds(t, n, a, b); err != nil {
		t.Fatalf("new refkey: %v", err)
	}
	if err := a.Finish(context.Background(), "race", ledgertest.HashA, 1, outcome.NotSent, "dial refused", t0); err != nil {
		t.Fatal(err)
	}
	if err := checkOneProceeds(t, n, a, b); err != nil {
		t.Fatalf("NOT_SENT refkey: %v", err)
	}
	if e, _, _ := a.Get(context.Background(), "race"); e.Attempts != 2 {
		t.Errorf("attempts %d; want 2 (one per proceed)", e.Attempts)
	}
}

// naiveBegin is the negative control's planted store: Begin as a read and
// then a write (two statements on a fresh connection each, no lock), with
// the stores' own rule (ledger.Decide) deciding on what was read.
type naiveBegin struct{ url string }

func (s naiveBegin) Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (ledger.Decision, ledger.Entry, error) {
	c, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return 0, ledger.Entry{}, err
	}
	defer c.Close(ctx)
	var e ledger.Entry
	var state string
	err = c.QueryRow(ctx, "SELECT refkey, state, attempts, body_hash FROM "+ledger.Table+" WHERE refkey = $1", refkey).
		Scan(&e.RefKey, &state, &e.Attempts, &e.BodyHash)
	if err != nil {
		return 0, ledger.Entry{}, err
	}
	e.State = outcome.Outcome(state)
	time.Sleep(50 * time.Millisecond) // the other racers read too
	if d := ledger.Decide(e, bodyHash); d != ledger.Proceed {
		return d, e, nil
	}
	if _, err := c.Exec(ctx, "UPDATE "+ledger.Table+" SET state = 'ATTEMPTING', attempts = attempts + 1 WHERE refkey = $1", refkey); err != nil {
		return 0, ledger.Entry{}, err
	}
	e.State, e.Attempts = ledger.Attempting, e.Attempts+1
	return ledger.Proceed, e, nil
}

// TestRacePostgresNaiveBeginFails is the race test's negative control: the
// race test's own check (checkOneProceeds) run on the planted naiveBegin,
// over one NOT_SENT refkey, must report more than one proceed. A race may
// not interleave on one try (CI saw one round pass), so it gets five
// rounds, each on a fresh schema, and must catch the double proceed in one.
func TestRacePostgresNaiveBeginFails(t *testing.T) {
	const n, rounds = 8, 5
	for round := 1; round <= rounds; round++ {
		url := freshSchema(t)
		s := openPostgres(t, url)
		if err := s.Finish(context.Background(), "race", ledgertest.HashA, 0, outcome.NotSent, "", t0); err != nil {
			t.Fatal(err)
		}
		if err := checkOneProceeds(t, n, naiveBegin{url}); err != nil {
			t.Logf("the race check on a naive read-then-write Begin, round %d: %v", round, err)
			return
		}
	}
	t.Fatalf("the race check passed a naive read-then-write Begin in %d rounds: it cannot see a double proceed", rounds)
}

// TestPostgresErrorsNameTheProblem: a server that is not there gives an
// error without the password.
func TestPostgresErrorsNameTheProblem(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := ledger.OpenPostgres(ctx, "postgres://notifier:s3cret-pw@127.0.0.1:1/ledger?sslmode=disable&connect_timeout=2")
	if err == nil {
		t.Fatal("OpenPostgres of a closed port succeeded")
	}
	if strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("error carries the password: %v", err)
	}
	if !strings.Contains(err.Error(), "open postgres ledger") {
		t.Errorf("error %v; want it to say what failed", err)
	}
}

// TestPostgresCheckWrite: CheckWrite commits on a live server and says
// ErrClosed after Close (the wait after a ledger failure relies on both).
func TestPostgresCheckWrite(t *testing.T) {
	s := openPostgres(t, freshSchema(t))
	if err := s.CheckWrite(context.Background()); err != nil {
		t.Fatalf("CheckWrite = %v; want nil", err)
	}
	_ = s.Close()
	if err := s.CheckWrite(context.Background()); !errors.Is(err, ledger.ErrClosed) {
		t.Errorf("CheckWrite after Close = %v; want ErrClosed", err)
	}
}
