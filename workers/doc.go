// Package workers holds the contract workers the lab can measure besides
// the Go worker: workers/node (Node.js, amqplib, Node's own HTTP clients,
// axios and got), workers/java (the RabbitMQ Java client with JDK 17's
// HttpClient, OkHttp or Apache HttpClient) and workers/python (pika with
// requests or httpx). Each follows the worker contract (docs/worker-contract.md); the
// Go tests in their folders run their unit tests with the language's own
// tools, so `go test ./...` covers them.
package workers
