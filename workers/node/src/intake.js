'use strict';
// Intake: whether the worker still handles deliveries, and how many it
// handled. It closes when maxMessages (MAX_MESSAGES, when above 0)
// messages were handled or stop() was called (SIGTERM). A delivery that
// arrives once it is closed is not handled: the broker pushed it before
// the consumer was cancelled (prefetch 1 lets one through right after the
// last ack); it is left unacked and the broker requeues it when the
// connection closes (docs/worker-contract.md, MAX_MESSAGES).
class Intake {
  constructor(maxMessages) {
    this.maxMessages = maxMessages;
    this.handled = 0;
    this.closed = false;
  }

  // admits says whether a delivery that arrived now is handled (sent, routed, recorded).
  admits() {
    return !this.closed;
  }

  // handledOne counts one handled message and returns true once the intake is closed.
  handledOne() {
    this.handled++;
    if (this.maxMessages > 0 && this.handled >= this.maxMessages) this.closed = true;
    return this.closed;
  }

  // stop closes the intake (SIGTERM).
  stop() {
    this.closed = true;
  }
}

module.exports = { Intake };
