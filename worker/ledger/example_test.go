package ledger_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

func ExampleLedger_Begin() {
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	l, err := ledger.OpenStore(ctx, filepath.Join(dir, "ledger.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	body := []byte(`{"refkey":"order-1001","text":"your order shipped"}`)

	d, e, _ := l.Begin(ctx, "order-1001", ledger.BodyHash(body), now) // first delivery
	fmt.Println(d)
	// ... the request goes out, the vendor accepts it: close this attempt ...
	_ = l.Finish(ctx, "order-1001", ledger.BodyHash(body), e.Attempts, outcome.Sent, "code=1000", now)

	d, e, _ = l.Begin(ctx, "order-1001", ledger.BodyHash(body), now) // a redelivery
	fmt.Println(d, e.State, e.Attempts)

	other := []byte(`{"refkey":"order-1001","text":"a different notification"}`)
	d, _, _ = l.Begin(ctx, "order-1001", ledger.BodyHash(other), now) // the refkey reused
	fmt.Println(d)
	// Output:
	// proceed
	// duplicate SENT 1
	// conflict
}
