// Package message defines the notification contract the worker consumes: a
// JSON document per AMQP message, decoded and validated before anything is
// sent.
//
//	AMQP body ──> Decode ──┬─> Notification (valid) ──> window, ledger, vendor
//	                       └─> *InvalidError{Field, Reason}
//	                              └─> worker: dead-letter queue, Reason in
//	                                  header x-notifier-reason, ack, carry on
//
// # The contract
//
// notification.schema.json (JSON Schema 2020-12, beside this file) is the
// published contract; the Go rules here are the same and a test keeps them
// in sync. One message is one JSON object, every value a string:
//
//	key            required  rule
//	refkey         yes       1-100 of [A-Za-z0-9._:-]; the sender's unique
//	                         reference, the de-duplication key of the ledger
//	category       yes       "info" (any hour) or "ad" (send window only)
//	recipient      yes       E.164: "+821000005678"; national forms refused
//	template_code  yes       1-64 of [A-Za-z0-9._-], the vendor template
//	text           yes       1-1000 characters (runes), not only white space
//	created_at     yes       RFC 3339 with offset: "2026-11-30T10:00:00+09:00"
//	sender_key     no        1-64 of [A-Za-z0-9_-], the vendor sender profile
//
// Decoding is strict: unknown keys, duplicate keys, null or non-string
// values, trailing data, invalid UTF-8 and bodies over 64 KiB are INVALID.
// A strict contract fails loudly at the producer's first test instead of
// dropping a misspelt field in production. Adding a field is a contract
// change: schema, Notification, RequiredFields/OptionalFields and samples
// move together.
//
// # Privacy
//
// Reasons never quote values, only key names, lengths and positions, so the
// recipient (a phone number) never reaches a header or a log in clear; use
// MaskedRecipient for logs.
//
// # Samples
//
// testdata/message/valid/*.json and testdata/message/invalid/*.json at the
// repository root are shared samples (the lab mixes them into runs). An
// invalid sample is named "<field>--<what>.json", with "document" as the
// field for faults of the document as a whole; tests check Decode reports
// that field. The fuzz corpus is testdata/fuzz/FuzzDecode in this package.
package message
