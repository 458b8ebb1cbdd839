package ledger_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
)

func ExampleLedger_Begin() {
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)
	l, err := ledger.Open(filepath.Join(dir, "ledger.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

	d, _, _ := l.Begin("order-1001", now) // first delivery
	fmt.Println(d)
	// ... the request goes out, the vendor accepts it ...
	_ = l.Finish("order-1001", ledger.Sent, "code=1000", now)

	d, e, _ := l.Begin("order-1001", now) // a redelivery of the same refkey
	fmt.Println(d, e.State, e.Attempts)
	// Output:
	// proceed
	// duplicate SENT 1
}
