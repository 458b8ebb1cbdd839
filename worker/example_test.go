package worker_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/notifier-lab/notifier-lab/worker"
)

// Redact makes an error text fit for a header, a log line or a record.
func ExampleRedact() {
	fmt.Println(worker.Redact("POST for +821000005678 failed: Authorization: Bearer eyJ.abc", "+821000005678"))
	// Output: POST for +82******5678 failed: Authorization: Bearer <redacted>
}

// Run is the whole worker; a command only fills a Config.
func ExampleRun() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	cfg := worker.Config{
		AMQPURL:      "amqp://guest:guest@rabbitmq:5672/",
		VendorURL:    "https://api.vendor.test",
		CAFile:       "/lab/ca.pem",
		ClientID:     "lab",
		ClientSecret: os.Getenv("VENDOR_CLIENT_SECRET"),
		Strategy:     "pooled",
		RecordsPath:  "/out/records.jsonl",
	}
	if err := worker.Run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
