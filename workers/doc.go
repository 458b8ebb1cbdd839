// Package workers holds the reference workers the lab can measure besides
// the Go worker: workers/node (Node.js, amqplib and Node's own HTTP
// clients) and workers/java (JDK 17 HttpClient and the RabbitMQ Java
// client). Each follows the worker contract (docs/worker-contract.md); the
// Go tests in their folders run their unit tests with the language's own
// tools, so `go test ./...` covers them.
package workers
