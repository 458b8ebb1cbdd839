package vendormock_test

import (
	"context"
	"fmt"
	"os"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// A crash of the active replica with a standby (needs Docker and the
// lab's images; see ./run.sh): two replicas on one queue, SIGKILL of the
// first, then the same replica back with its ledger volume.
func ExampleStack_StartReplicas() {
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
	defer s.Close(context.WithoutCancel(ctx)) // containers, volumes, PostgreSQL

	// The broker, vendor URL, CA and credentials come from the stack;
	// each replica's records and ledger files from StartReplicas.
	cfg := worker.Config{Queue: "fault.sigkill", Strategy: "pooled"}
	ws, err := s.StartReplicas(ctx, vendormock.ReplicaOptions{
		Name: "sigkill", Count: 2, OutDir: ".lab/example-replicas",
		Ledger: vendormock.LedgerBbolt, QueueType: vendormock.QueueQuorum,
		Args: func(f vendormock.ReplicaFiles) []string {
			c := cfg
			c.RecordsPath, c.LedgerPath = f.RecordsPath, f.LedgerFile
			return c.Args()
		},
		Grace: worker.ShutdownGrace(cfg),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// ... publish, wait until worker-1 is sending ...
	w1, _ := ws.Replica("worker-1")
	if err := w1.Kill(ctx); err != nil { // SIGKILL: no graceful end
		fmt.Println(err)
		return
	}
	// ... the standby takes over; then worker-1 comes back on its volume.
	if err := w1.Recreate(ctx, true); err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range ws.Replicas() {
		rs, _ := records.ReadFile(r.RecordsPath())
		metrics, _ := r.Metrics(ctx)
		fmt.Println(r.ID, len(rs), len(metrics) > 0)
	}
}
