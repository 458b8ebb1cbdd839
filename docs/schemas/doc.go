// Package schemas holds the worker contract's JSON schemas
// (docs/worker-contract.md): the records line, the status table and the
// vendors' token and send bodies (vendor-<profile>.schema.json); the
// message's is worker/message/notification.schema.json. Its test
// validates the lab's own samples against them: the message samples
// under testdata/message, records written by worker/records' type, each
// profile's status table, and the bodies the Go worker's vendor client
// sends and the profiles' stubs answer. adapter.schema.json is the
// black-box audit's adapter file (docs/auditing.md#the-adapter-file);
// scenarios/audit's TestAdapterSchemaAgreesWithTheParser checks it
// against the parser.
package schemas
