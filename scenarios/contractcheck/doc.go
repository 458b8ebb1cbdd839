// Package contractcheck checks one worker image against the worker
// contract (docs/worker-contract.md) in about a minute and names each
// gap: `./run.sh contract-check WORKER=image:NAME`. It is a smoke test of
// the contract's letter (queues and their arguments, one records line per
// message that validates against docs/schemas/records-line.schema.json,
// one send per valid message with the correlation header, an invalid
// message dead-lettered as INVALID with a reason, a message published
// again after it was sent not sent twice, exit 0 on SIGTERM), not the
// audit: `./run.sh audit` judges behaviour under faults.
package contractcheck
