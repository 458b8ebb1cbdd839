package vendormock_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
)

// Count the TCP connections that carried sends, as the case did.
func ExampleParseAccessLog() {
	// Three lines as nginx writes them with log_format lab escape=json
	// (vendormock.LogFormat), the fields a count needs kept.
	log := `{"connection":"5","connection_requests":"1","status":"200","request_time":"0.041","method":"POST","uri":"/v1/token"}
{"connection":"5","connection_requests":"2","status":"200","request_time":"0.040","method":"POST","uri":"/v3/message","refkey":"rk-1"}
{"connection":"7","connection_requests":"1","status":"200","request_time":"0.052","method":"POST","uri":"/v3/message","refkey":"rk-2"}
`
	entries, err := vendormock.ParseAccessLog(strings.NewReader(log))
	if err != nil {
		fmt.Println(err)
		return
	}
	conns := map[int64]bool{}
	for _, e := range entries {
		if e.Path == "/v3/message" {
			conns[e.Connection] = true
		}
	}
	fmt.Printf("%d sends on %d connections; first send reused a connection: %v\n", len(entries)-1, len(conns), entries[1].Request > 1)
	// Output: 2 sends on 2 connections; first send reused a connection: true
}

// One measured run against the vendor stack (needs Docker and the lab's
// images; see ./run.sh).
func ExampleStart() {
	ctx := context.Background()
	images, err := vendormock.ImagesFromEnv()
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := vendormock.Start(ctx, vendormock.Options{ServerDelayMS: -1, Images: images, Log: os.Stderr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close(context.WithoutCancel(ctx))

	if err := s.SetRTT(ctx, 10); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := s.SelfCheck(ctx, 10); err != nil {
		fmt.Println(err) // the latency toxic is not in place: no numbers
		return
	}
	_ = s.ResetJournal(ctx)
	from, _ := s.AccessLogSize()
	// The worker's command line from its Config; the secret goes by
	// environment.
	cfg := worker.Config{AMQPURL: s.AMQPURLNetwork, VendorURL: s.VendorURL, CAFile: vendormock.WorkerCAPath,
		ClientID: s.ClientID, Strategy: "pooled", RecordsPath: vendormock.WorkerOutDir + "/records.jsonl", MaxMessages: 1050}
	w, err := s.StartWorker(ctx, vendormock.WorkerOptions{
		Name: "pooled-10ms", CPUs: 1, OutDir: ".lab/example-out",
		Args:  cfg.Args(),
		Env:   map[string]string{"GOMAXPROCS": "1", "VENDOR_CLIENT_SECRET": s.ClientSecret},
		Grace: worker.ShutdownGrace(cfg),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	code, _ := w.Wait(ctx)
	_ = w.Stop(ctx, 10*time.Second)
	entries, raw, _ := s.ReadAccessLog(from)
	journal, _ := s.Journal(ctx)
	fmt.Println(code, len(entries), len(raw), len(journal))
}
