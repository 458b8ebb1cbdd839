// Package message defines the notification contract the worker consumes: a
// JSON document per AMQP message, decoded and validated before anything is
// sent.
//
// CONTRACT STUB (written by the lead): the exported names and signatures
// below are shared with other packages; keep them, fill in the bodies.
package message

import (
	"time"
)

// Category says which delivery rules apply to a notification.
type Category string

const (
	// Info is a transactional notification (order shipped, one-time code):
	// it may be sent at any hour.
	Info Category = "info"
	// Ad is an advertising notification: it may only be sent inside the
	// send window (see package window).
	Ad Category = "ad"
)

// Notification is one message to send to the vendor.
//
// JSON shape (all keys lower snake case):
//
//	{"refkey": "order-123-shipped", "category": "info",
//	 "recipient": "+821012345678", "template_code": "SHIP_01",
//	 "text": "...", "created_at": "2026-11-30T10:00:00+09:00"}
type Notification struct {
	RefKey       string    `json:"refkey"`
	Category     Category  `json:"category"`
	Recipient    string    `json:"recipient"`
	TemplateCode string    `json:"template_code"`
	Text         string    `json:"text"`
	CreatedAt    time.Time `json:"created_at"`
}

// InvalidError says why a message cannot be sent. It is returned by Decode;
// the worker dead-letters the message with Reason in a header.
type InvalidError struct {
	Field  string // JSON key at fault, "" for the document as a whole
	Reason string // human-readable, never contains the recipient in clear
}

func (e *InvalidError) Error() string {
	if e.Field == "" {
		return "invalid message: " + e.Reason
	}
	return "invalid message: " + e.Field + ": " + e.Reason
}

// Decode parses and validates one message body. It returns either a valid
// Notification and nil, or the zero Notification and an *InvalidError.
func Decode(body []byte) (Notification, error) {
	panic("TODO: message.Decode")
}

// MaskedRecipient returns the recipient with all but the last 4 digits
// masked, for logs ("+82******5678").
func (n Notification) MaskedRecipient() string {
	panic("TODO: MaskedRecipient")
}
