package notifierlab;

/**
 * Whether the worker still handles deliveries, and how many it handled:
 * it closes when maxMessages (MAX_MESSAGES, when above 0) messages were
 * handled or stop() was called (SIGTERM). A delivery that arrives once it
 * is closed is not handled: the broker had pushed it before the worker
 * cancelled its consumer (prefetch 1 lets one through right after the last
 * ack); it is left unacked, and the broker requeues it when the connection
 * closes (docs/worker-contract.md, MAX_MESSAGES). Handling it would send it
 * after the worker decided to stop, and the process may exit before the
 * ack and the record. Thread-safe: the consumer's thread counts, the
 * shutdown hook stops.
 */
final class Intake {
    private final int maxMessages;
    private int handled;
    private boolean closed;

    Intake(int maxMessages) {
        this.maxMessages = maxMessages;
    }

    /** Whether a delivery that arrived now is handled (sent, routed, recorded). */
    synchronized boolean admits() {
        return !closed;
    }

    /** Counts one handled message; returns true once the intake is closed. */
    synchronized boolean handledOne() {
        handled++;
        if (maxMessages > 0 && handled >= maxMessages) closed = true;
        return closed;
    }

    /** Closes the intake (SIGTERM). */
    synchronized void stop() {
        closed = true;
    }

    /** The number of messages handled so far. */
    synchronized int handled() {
        return handled;
    }
}
