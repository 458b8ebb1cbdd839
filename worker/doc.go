// Package worker is the notification worker: one RabbitMQ consumer at
// prefetch 1 that decodes each message, applies the send window and the
// attempt ledger, sends it to the vendor, routes it to exactly one place
// (DESIGN.md, "Delivery outcomes") and writes one Record per handled message.
//
//	RabbitMQ main queue
//	     | one consumer, QoS prefetch 1, manual ack
//	     v
//	 Consumer ---- per connection: generation g (acks of older g refused)
//	     |
//	     v
//	 Handler: message.Decode --INVALID------------------> dead queue + ack
//	     |    window (ad only) --OUTSIDE_SEND_WINDOW-----> held queue (TTL to opening) + ack
//	     |    ledger.Begin --Duplicate-------------------> ack (DUPLICATE, not sent)
//	     |                 --Unresolved------------------> unknown queue + ack
//	     |                 --Conflict (other body)-------> dead queue, INVALID REFKEY_CONFLICT + ack
//	     |                 --Proceed
//	     v
//	 Sender (vendorapi.Client): SENT ---------------------> ledger SENT + ack
//	                         REJECTED -----------------> failed queue + ack
//	                         NOT_SENT -----------------> retry queue (attempt+1) or dead queue + ack
//	                         UNKNOWN ------------------> unknown queue + ack (never re-sent)
//	     |
//	     v
//	 Record (JSON line, -records) + slog line
//
// Re-publishing uses publisher confirms and the original message is acked
// only after the broker confirmed the copy: a failed re-publish nacks the
// original with requeue, so nothing is lost. The ledger is written before any
// request goes out; when it cannot be written the message is nacked with
// requeue and the worker stops with an error wrapping ErrLedger.
//
// Run wires everything from a Config; cmd/notifier-worker is its thin main.
package worker
