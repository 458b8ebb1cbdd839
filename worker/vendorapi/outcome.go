package vendorapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// A send attempt ends in one of outcome.SendClasses (docs/outcomes.md):
// outcome.Sent (acked), outcome.Rejected (failed queue), outcome.NotSent
// (retry queue) or outcome.Unknown (unknown queue, never re-sent
// automatically). This package declares no outcome names of its own.

// Reason says what failed, as a short label for records and reports. The
// Class decides the routing; Reason only explains it. It is derived from
// typed errors (errors.Is / errors.As) and the httptrace phases, never from
// error text.
type Reason string

// Reasons, from the earliest failure to the latest.
const (
	ReasonNone      Reason = ""          // no failure
	ReasonRequest   Reason = "request"   // the request could not be built (bad base URL, bad header value)
	ReasonClosed    Reason = "closed"    // the client or strategy was closed (ErrClientClosed)
	ReasonGated     Reason = "gated"     // the caller's WithBeforePost check refused the POST (ErrRefusedBeforePost)
	ReasonCanceled  Reason = "canceled"  // the caller's context was canceled
	ReasonDNS       Reason = "dns"       // name resolution failed (*net.DNSError)
	ReasonDial      Reason = "dial"      // TCP connect failed: refused, unreachable, dial timeout
	ReasonTLS       Reason = "tls"       // TLS handshake failed: certificate, alert, version, handshake timeout
	ReasonReset     Reason = "reset"     // the connection was reset (ECONNRESET, EPIPE, ECONNABORTED), or an HTTP/2 stream (ErrReplayRefused)
	ReasonEOF       Reason = "eof"       // the server closed the connection (io.EOF, io.ErrUnexpectedEOF)
	ReasonTimeout   Reason = "timeout"   // a timeout fired (ResponseTimeout, context deadline)
	ReasonTransport Reason = "transport" // any other transport error
	ReasonStatus    Reason = "status"    // the vendor answered an HTTP status that is not success
	ReasonBusiness  Reason = "business"  // the vendor answered a business code that is not success
	ReasonBody      Reason = "body"      // the vendor's 2xx body could not be parsed
)

// Operations of a SendError.
const (
	OpToken = "token" // POST /v1/token
	OpSend  = "send"  // POST /v3/message
)

// Sentinel errors, found with errors.Is in a *SendError's chain.
var (
	// ErrClientClosed is returned (inside a *SendError of class NotSent)
	// for a send attempted after the client or strategy was closed.
	// Nothing is dialled.
	ErrClientClosed = errors.New("vendor client closed")
	// ErrRejected is in the chain of every Rejected *SendError: the vendor
	// answered a 4xx or a business code other than SuccessCode.
	ErrRejected = errors.New("vendor rejected the request")
	// ErrNotProcessed is in the chain of a NotSent *SendError made from a
	// vendor answer the StatusTable maps to NOT_SENT (429, 408, ...).
	ErrNotProcessed = errors.New("vendor did not process the request")
	// ErrBadStatus is in the chain of an Unknown *SendError made from a
	// 5xx (a proxy's 502/504, or the vendor's 500/503) or an unexpected
	// 1xx/3xx status.
	ErrBadStatus = errors.New("unexpected http status")
	// ErrBadResponse is in the chain when a body could not be parsed: a
	// 2xx send response (Unknown) or a token response (NotSent).
	ErrBadResponse = errors.New("unparsable vendor response")
)

// SendError is the one typed error of this package: it carries the class the
// caller acts on. Send and its helpers return no other error type.
//
// Its text never holds the client secret, the token, the recipient or the
// vendor's description (which may echo message data).
type SendError struct {
	// Class is one of outcome.SendClasses other than outcome.Sent.
	Class outcome.Outcome
	Op    string // OpToken or OpSend
	// Code is the vendor's business code, or the HTTP status as text when
	// there is no business code, or "" when no response was read.
	Code string
	// Reason labels the failure (see Reason); it does not change Class.
	Reason Reason
	// Description is the vendor's "description" text (or "message",
	// "error_description", "error": descriptionKeys) when a response was
	// parsed, for the failed queue. It is kept out of Error() because a
	// vendor may echo message data in it.
	Description string
	// RetryAfter is the vendor's Retry-After (seconds or HTTP date, from
	// now) on a NotSent answer; 0 when it sent none.
	RetryAfter time.Duration
	Err        error
}

// Error returns "vendor <op>: <CLASS> (<reason>) code <code>: <cause>", the
// parts that are empty left out.
func (e *SendError) Error() string {
	var b strings.Builder
	b.WriteString("vendor ")
	if e.Op != "" {
		b.WriteString(e.Op)
	} else {
		b.WriteString("call")
	}
	b.WriteString(": ")
	b.WriteString(string(e.Class))
	if e.Reason != ReasonNone {
		b.WriteString(" (" + string(e.Reason) + ")")
	}
	if e.Code != "" {
		b.WriteString(" code " + e.Code)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *SendError) Unwrap() error { return e.Err }

// ClassOf returns Sent for nil, the class of a *SendError anywhere in err's
// chain, and Unknown for any other error (the conservative choice: an error
// this package did not classify may hide a send that reached the vendor).
func ClassOf(err error) outcome.Outcome {
	if err == nil {
		return outcome.Sent
	}
	if se, ok := errors.AsType[*SendError](err); ok {
		return se.Class
	}
	return outcome.Unknown
}

// classifyTransport turns an error from http.Client.Do (or from reading a
// response body before any status line was seen) into a *SendError.
//
// The class comes from the httptrace record, the only witness of what left
// the worker: if no attempt that counts started to write the request (see
// tracer.mayHaveLeft), no byte of it reached the vendor and the class is
// NotSent, whatever the error; otherwise it is Unknown, whatever the error
// (a dial error after an earlier written attempt is still Unknown). The
// typed error only sets Reason. ErrClientClosed is NotSent before any call
// is made.
//
// One exception: a handshake refusal (IsHandshakeRefusal) on a new
// connection is NotSent although the request was written. In TLS 1.3 the
// client sends its request right after its Finished, before the server has
// checked the client's certificate; a server that refuses the certificate
// answers with an alert and never reads that request (RFC 8446 4.4.2.4 and
// 6.2; docs/outcomes.md).
func classifyTransport(op string, err error, tr *tracer) *SendError {
	reason := reasonOf(err, tr)
	class := outcome.Unknown
	if errors.Is(err, ErrClientClosed) || tr == nil || !tr.mayHaveLeft() {
		class = outcome.NotSent
	}
	if IsHandshakeRefusal(err) && tr != nil && tr.newConn() {
		class, reason = outcome.NotSent, ReasonTLS
		err = fmt.Errorf("%w: %w", ErrHandshakeRefused, err)
	}
	return &SendError{Class: class, Op: op, Reason: reason, Err: err}
}

// ErrHandshakeRefused is in the chain of a NotSent *SendError when the
// server refused the TLS handshake with a certificate alert: most often a
// vendor that requires a client certificate (mutual TLS) and got none, or
// one it does not trust. Nothing reached the vendor's application.
var ErrHandshakeRefused = errors.New("tls handshake refused by the server (client certificate missing or not trusted?)")

// handshakeAlerts are the TLS alerts a server sends only while it checks a
// handshake (RFC 8446 6.2; RFC 5246 7.2.2): handshake_failure (40),
// bad_certificate (42), unsupported_certificate (43), certificate_revoked
// (44), certificate_expired (45), certificate_unknown (46), unknown_ca
// (48), access_denied (49) and certificate_required (116).
var handshakeAlerts = []tls.AlertError{40, 42, 43, 44, 45, 46, 48, 49, 116}

// IsHandshakeRefusal reports whether err holds a TLS alert received from
// the server that refuses the handshake (handshakeAlerts). crypto/tls
// returns a received alert as a *net.OpError with Op "remote error" whose
// Err prints like the tls.AlertError of the same number (crypto/tls
// conn.go, readRecordOrCCS; alert.go).
func IsHandshakeRefusal(err error) bool {
	op, ok := errors.AsType[*net.OpError](err)
	if !ok || op.Op != "remote error" || op.Err == nil {
		return false
	}
	text := op.Err.Error()
	for _, a := range handshakeAlerts {
		if text == a.Error() {
			return true
		}
	}
	return false
}

// reasonOf labels err from its types, in the order a call fails: closed,
// canceled, DNS, TLS, reset, EOF, dial, then timeouts. tr may be nil.
func reasonOf(err error, tr *tracer) Reason {
	switch {
	case err == nil:
		return ReasonNone
	case errors.Is(err, ErrClientClosed):
		return ReasonClosed
	case errors.Is(err, context.Canceled):
		return ReasonCanceled
	}
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return ReasonDNS
	}
	if isTLSError(err) {
		return ReasonTLS
	}
	// A reset is named as such even when it ends the dial itself (Linux
	// reports a RST that beats the connect as "dial tcp: connect:
	// connection reset by peer").
	switch {
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return ReasonReset
	case errors.Is(err, ErrReplayRefused): // an HTTP/2 stream reset
		return ReasonReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ReasonEOF
	}
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "dial" {
		return ReasonDial
	}
	// A handshake that failed without a typed TLS error (the transport's
	// TLSHandshakeTimeout, a deadline during the handshake) shows in the
	// trace.
	if tr != nil && tr.tlsHandshakeErr() != nil {
		return ReasonTLS
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ReasonTimeout
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return ReasonTimeout
	}
	return ReasonTransport
}

// isTLSError reports whether err is one of crypto/tls's or crypto/x509's
// typed handshake errors.
func isTLSError(err error) bool {
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return true // the peer does not speak TLS
	}
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return true // chain or name did not verify
	}
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return true
	}
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return true
	}
	if _, ok := errors.AsType[x509.CertificateInvalidError](err); ok {
		return true
	}
	if _, ok := errors.AsType[tls.AlertError](err); ok {
		return true // an alert we sent
	}
	// An alert received from the server (for example protocol_version
	// when no version overlaps): crypto/tls returns it as a *net.OpError
	// whose Op is "remote error" (crypto/tls conn.go, readRecordOrCCS).
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "remote error" {
		return true
	}
	return false
}
