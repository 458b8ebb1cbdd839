// Package vendormock runs the lab's vendor side with testcontainers-go: one
// Docker network per run with RabbitMQ, WireMock (the vendor API stubs),
// nginx (TLS termination, access log) and Toxiproxy (latency) in front of
// nginx under the vendor's host name.
//
// Topology (docs/topology.md), aliases on the run's network in brackets:
//
//	host (bench driver, tests)            worker container (StartWorker)
//	  |  127.0.0.1 published ports          |  CA at /lab/ca.pem, /out bind mount
//	  |                                     |
//	  +--AMQP--> RabbitMQ [rabbitmq:5672] <-+
//	  |                                     |  HTTPS, HTTP/1.1 (Options: http, mtls, h2)
//	  |                                     v
//	  +--TLS---> Toxiproxy [toxiproxy, api.vendor.test:443]  proxy "vendor":
//	  |            latency rtt/2 downstream + the rest upstream (SetRTT)
//	  |                                     v  one upstream conn per client conn
//	  |          nginx [nginx:443]  TLS 1.2/1.3, session cache+tickets off,
//	  |            keepalive_timeout/keepalive_requests from the profile,
//	  |            access log -> WorkDir/log/access.log (ParseAccessLog)
//	  |                                     v  keep-alive upstream pool
//	  +--admin-> WireMock [wiremock:8080]  stubs from the profile via
//	               go-wiremock; journal = what reached the vendor (Journal)
//
// Everything vendor-specific (host, TLS policy, nginx timeouts, stubs and
// bodies, client defaults) lives in one profile folder (LoadProfile,
// DefaultProfileDir). The CA and the server certificate are made per run
// (GenerateCerts); the CA key never touches disk and only the CA's PEM is
// handed out. Options.Scheme picks plain HTTP, HTTPS or mutual TLS (a
// client certificate from the same CA, GenerateCertsWithClient, mounted
// into the workers) and Options.HTTPVersion "2" makes nginx offer h2. Images come from Options.Images; they must
// exist locally (CheckImages): no registry is reachable.
//
// The package reads the environment only in images.go, in functions for a
// command's or a test's edge (ImagesFromEnv, ReadImagesEnv,
// EnsureTestcontainersEnv); nothing of the package calls them. Images
// (reference workers' included, Images.Var), the session label
// (Options.Session, run.sh's LAB_SESSION) and the testcontainers settings
// come from the caller. FindRepoRoot is the module's one "find go.mod
// upward".
//
// A run: Start, SetRTT, SelfCheck, ResetJournal, AccessLogSize, StartWorker
// ... Wait, Journal, ReadAccessLog, Close.
//
// # Worker replicas
//
// StartReplicas starts N replicas of the worker image on one queue
// (WORKERS=N), named worker-1..worker-N (WORKER_ID), each with 1 CPU, the
// run's CA, OutDir bind-mounted at /out for its records file
// (records-worker-i.jsonl) and its /healthz and /metrics (OPS_ADDR=:9090)
// published on 127.0.0.1. The ledger (LEDGER) is either a bbolt file on a
// named Docker volume per replica, mounted at /ledger, so that a SIGKILL
// and a restart keep it and only Recreate without the ledger loses it; or
// one PostgreSQL database shared by every replica (StartPostgres, on the
// run's network as "postgres"). The lab also sets QUEUE_TYPE (classic or
// quorum) and SINGLE_ACTIVE_CONSUMER (true unless the negative control
// turns it off), and never LEDGER_EPHEMERAL_OK: the ledger always sits on
// a volume or in PostgreSQL. The worker's side of these variables is
// described in docs/deployment.md.
//
// A replica is stopped as Kubernetes or docker stop would (Replica.Stop:
// SIGTERM, then SIGKILL after ReplicaOptions.Grace, the time the worker
// needs to finish its in-flight message, which the caller takes from
// worker.ShutdownGrace: this package reads no worker flag), killed at once
// (Replica.Kill: SIGKILL, a crash or an OOM kill), or recreated (Replica.Recreate: a new container,
// with or without its ledger volume). RestartRabbitMQ restarts the broker
// in place. Volumes and PostgreSQL carry LabelRun and LabelSession and are
// removed by Close.
//
// # A RabbitMQ cluster
//
// Options.BrokerNodes = 3 (the lab's BROKER_NODES) starts three RabbitMQ
// nodes from the same image instead of one, on the run's network as
// rabbitmq-1..rabbitmq-3 (host name = alias, node name rabbit@rabbitmq-i;
// node 1 also answers to rabbitmq), with one Erlang cookie written mode 400
// before the server starts. Node 1 boots first; the others join it by
// peer discovery (classic configuration). Quorum queues declared afterwards
// have a member on every node (RabbitMQ's default initial group size, 3).
// Brokers lists the nodes with their host and network AMQP URLs;
// AMQPURLsNetwork is the comma-separated list the worker takes as
// AMQP_URL. StopBrokerNode, KillBrokerNode and StartBrokerNode stop
// (SIGTERM), kill (SIGKILL) and start one node, keeping its data, and
// RabbitMQCtl and RunningBrokerNodes look inside; they work on a single
// node too. StartBrokers starts only the network and the broker(s), for
// tests that need no vendor.
package vendormock
