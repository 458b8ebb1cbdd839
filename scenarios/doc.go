// Package scenarios is the lab's engine: it runs the case study of
// docs/case.md (a per-request HTTP client against one pooled keep-alive
// client, at several RTTs) through the real stack and turns what every
// part saw into results, a summary and charts. Like vegeta's lib, the
// engine is a library and the `lab` command (scenarios/cmd/lab) only wires
// it up.
//
//	lab command (KEY=VALUE words, env) ──> Config
//	                                      │
//	Run ── vendormock.Start (once) ───────┤ RabbitMQ, WireMock, nginx, Toxiproxy
//	  for each RTT, for each mode:        │
//	    SetRTT ─> SelfCheck ─> ResetJournal ─> access-log offset
//	    publish WARMUP+COUNT (confirms) ─> RabbitMQ
//	    StartWorker (1 CPU) ──> records.jsonl ──tail──> progress
//	                      └──> HTTPS ─> Toxiproxy ─> nginx ─> WireMock
//	    collect:  records.jsonl ─> Metrics.Add ... Close ─┐
//	              nginx access log slice ─> CountConnections ─┼─> Result ─> bench-<mode>-<rtt>ms.json
//	              WireMock journal ─> CountJournalSends ──────┘
//	  WriteReport: Markdown/text Reporters (summary.md, terminal), Charts (charts/*.svg)
//
// Where each number comes from:
//
//   - latency, sends/s, wall time, CPU per send and connection reuse come
//     from the worker's own records (records.Record: httptrace per send,
//     getrusage CPU after each message), measured sends only;
//   - TCP connections and TLS versions come from nginx's access log (the
//     server's truth: distinct $connection values carrying sends, warm-up
//     included, as the case counted);
//   - what reached the vendor comes from WireMock's request journal.
//
// Reporters are func(io.Writer) error (Reporter), each tested against a
// golden file in testdata/scenarios; `go test ./scenarios/ -update`
// rewrites them. The integration test (build tag integration) runs both
// modes through the real stack.
package scenarios
