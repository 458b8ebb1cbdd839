// Package fault runs the lab's fault and race scenarios: each
// scenario is a YAML file of scenarios/catalog/ (Scenario, Load,
// LoadCatalog), run through the real stack of package vendormock against
// the worker image, then reconciled (package scenarios/reconcile) and
// judged against the file's expectations (Verdict, results/faults.json).
//
//	scenarios/catalog/*.yaml --LoadCatalog--> []*Scenario
//	      |
//	      v
//	Runner (one vendormock.Stack per invocation, broker reached via Toxiproxy)
//	      |  per scenario: own queues (queues.DefaultTopology("fault.<name>")),
//	      |  own worker container, or replicas (workers: vendormock.StartReplicas),
//	      |  steps in order:
//	      |    send (publish + wait for records) | wait | check_journal
//	      |    toxic_add/remove, proxy_disable/enable   -> Toxiproxy (vendor or broker)
//	      |    nginx variant + `nginx -s reload`         -> nginx
//	      |    server_delay_ms, rotate_token, stubs      -> WireMock (business answers only)
//	      |    restart_worker (SIGTERM, same ledger)     -> worker
//	      |    kill/stop/add/recreate_worker             -> replicas (SIGKILL, SIGTERM, new pod, lost volume)
//	      |    restart_broker                            -> RabbitMQ
//	      v
//	stop workers --> merge every replica's records --> reconcile.Gather/Reconcile
//	      --> evaluate(Expect: duplicates seen by reconciler AND journal) --> Verdict
//	      |
//	      v
//	WriteFaults: OUT/faults.json, OUT/faults.md, a section of OUT/summary.md
//
// The idle race (kind idle-race, RunIdleRace) runs one pooled worker per
// (RTT, client idle-timeout setting) at once, each with its own queue and
// each RTT on its own Toxiproxy proxy, against nginx reloaded with
// keepalive_timeout T and no Keep-Alive hint; WriteIdleRace writes
// OUT/idle-race.json, OUT/idle-race.md and OUT/charts/idle-race.svg.
// With idle_race.reports each lane's worker also gets the vendor's
// delivery reports and a relay of its own, and the lane waits for its
// UNKNOWN to settle before it is judged (idlerace_reports.go).
//
// Transport failures come from Toxiproxy or nginx, never from WireMock's
// faults, which nginx would turn into 502s; every scenario file names the
// tool that produces its fault.
package fault
