// Package scenarios is the lab's engine, one package per job; this
// package holds only this map and the test of its dependency direction
// (layout_test.go). It runs the case study of docs/case.md (a
// per-request HTTP client against one pooled keep-alive client, at
// several RTTs) through the real stack and turns what every part saw into
// results, a summary and charts. Like vegeta's lib, the engine is a set of
// libraries and the `lab` command (scenarios/cmd/lab) only wires them up.
//
//	scenarios/
//	  cmd/lab        the lab command: one key table (keys.go) for run, audit and matrix; KEY=VALUE words + environment (read here, once) -> bench.Config, matrix.Config
//	  cmd/reconcile  the reconcile command
//	  audit          a worker under audit: bench + fault scenarios -> rules -> report
//	  matrix         the published matrix (study A): cells over bench.RunPoint and `notifier-worker direct`
//	  bench          the bench driver: points (mode x RTT), the worker kinds, records -> results.Result
//	  fault          the fault and race scenarios of catalog/ on one stack
//	  pageload       the browser page-load experiment (study C): headless Chromium, nginx h1/h2 (vendormock/pagesite)
//	  report         reporters, charts, studies, the matrix report: pure functions of results
//	  results        the result schema, its checks, file names, read/write
//	  netmodel       the round-trip model, the idle-timeout rule, the point counts
//	  reconcile      the reconciler: every published message in exactly one place
//	  internal/lab   the helpers the drivers share (publisher, records, worker env)
//	  internal/outdir  which OUT folders a run may write
//
// Dependency direction (checked by layout_test.go over every import):
//
//	cmd ──> audit ──> matrix ──> bench ──┐
//	          └─────> fault ─────────────┼──> report ──> results, netmodel
//	                                     └──> internal/lab, reconcile, vendormock, worker
//
// results and netmodel import nothing of the driver; vendormock imports
// nothing of ours; worker nothing outside worker/.
//
// A bench run, from the words to the files:
//
//	lab command (KEY=VALUE words, env) ──> bench.Config (images, host note)
//	                                      │
//	bench.Run ── vendormock.Start (once) ─┤ RabbitMQ, WireMock, nginx, Toxiproxy
//	  for each RTT, for each mode: Bench.RunPoint
//	    SetRTT ─> SelfCheck ─> ResetJournal ─> access-log offset
//	    publish WARMUP+COUNT (confirms) ─> RabbitMQ
//	    worker kind: one worker | replicas | a contract worker ──> records.jsonl ──tail──> progress
//	                      └──> HTTPS ─> Toxiproxy ─> nginx ─> WireMock
//	    collect:  records.jsonl ─> Metrics.Add ... Close ─┐
//	              nginx access log slice ─> CountConnections ─┼─> results.Result ─> bench-<mode>-<rtt>ms.json
//	              WireMock journal ─> CountJournalSends ──────┘
//	  report.WriteReport: Markdown/text reporters (summary.md, terminal), charts (charts/*.svg)
package scenarios
