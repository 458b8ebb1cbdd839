package notifierlab;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The delivery rules of one message (docs/outcomes.md), without the broker:
 * decode, the send window, the ledger, the send and where the message goes.
 * An ad is checked against the send window before the ledger's begin and
 * again right before the request. Worker feeds it deliveries; SelfTest
 * drives it with a fake sender and clock.
 */
final class Handler {
    /** The vendor call: Vendor.send in the worker. */
    interface Sender {
        SendResult send(Map<String, Object> msg) throws Exception;
    }

    private final Config cfg;
    private final Ledger ledger;
    private final SendWindow window;
    private final Sender sender;
    private final Supplier<Instant> clock;
    private int seq;

    /** clock is the lab clock (CLOCK_START applied). */
    Handler(Config cfg, Ledger ledger, SendWindow window, Sender sender, Supplier<Instant> clock) {
        this.cfg = cfg;
        this.ledger = ledger;
        this.window = window;
        this.sender = sender;
        this.clock = clock;
    }

    /** Fills h as held when msg is an ad and the window is closed at now. */
    private boolean heldIfClosed(Handled h, Map<String, Object> msg, Instant now) {
        if (!"ad".equals(msg.get("category"))) return false;
        long wait = window.untilOpenMs(now);
        if (wait <= 0) return false;
        h.rec.put("clock", now.toString());
        h.rec.put("outcome", Classify.OUTSIDE_SEND_WINDOW);
        h.rec.put("held_until", now.plusMillis(wait).toString());
        h.queue = cfg.queue + ".held";
        h.reason = Classify.OUTSIDE_SEND_WINDOW;
        h.expirationMs = wait;
        return true;
    }

    /** Where a message goes: queue null = ack only. */
    static final class Handled {
        Map<String, Object> rec;
        String queue, reason, vendorCode;
        int attempt;
        long expirationMs = -1;
    }

    Handled handle(Instant start, boolean redelivered, Map<String, Object> headers, byte[] body) throws Exception {
        Instant now = clock.get();
        Handled h = new Handled();
        Map<String, Object> msg = Json.object(new String(body, StandardCharsets.UTF_8));
        String refkey = msg != null && msg.get("refkey") instanceof String ? (String) msg.get("refkey") : "";
        String invalid = Message.validate(msg);
        h.rec = Records.record(++seq, refkey, Classify.INVALID, start, start);
        h.rec.put("redelivered", redelivered);
        h.rec.put("replica", cfg.workerID);
        h.rec.put("clock", now.toString());
        if (invalid != null) {
            h.rec.put("error", invalid);
            h.queue = cfg.queue + ".dead";
            h.reason = invalid;
            return h;
        }
        h.rec.put("category", msg.get("category"));
        if (heldIfClosed(h, msg, now)) return h;
        String hash = Ledger.hashOf(body);
        String[] prior = ledger.decide(refkey, hash);
        if (prior != null) {
            h.rec.put("outcome", prior[0]);
            h.rec.put("error", prior[1]);
            h.reason = prior[1];
            if (prior[0].equals(Classify.UNKNOWN)) {
                ledger.finish(refkey, hash, Classify.UNKNOWN);
                h.queue = cfg.queue + ".unknown";
                h.rec.put("no_call", true); // decided from the ledger: the client was not called
            } else if (prior[0].equals(Classify.INVALID)) {
                h.queue = cfg.queue + ".dead";
            }
            return h;
        }
        ledger.begin(refkey, hash); // forced to disk before the request goes out
        // The last look before the request: the begin (a forced write) may
        // have taken the clock past the window's end. A hold then closes the
        // attempt as OUTSIDE_SEND_WINDOW, which the ledger lets send again.
        if (heldIfClosed(h, msg, clock.get())) {
            ledger.finish(refkey, hash, Classify.OUTSIDE_SEND_WINDOW);
            return h;
        }
        int attempt = Classify.attemptOf(headers.get("x-notifier-attempt")) + 1;
        double cpu0 = Records.cpuMs();
        SendResult r = sender.send(msg);
        h.rec.put("send_cpu_ms", Records.cpuMs() - cpu0);
        ledger.finish(refkey, hash, r.outcome);
        h.rec.putAll(r.trace);
        h.rec.put("outcome", r.outcome);
        h.rec.put("attempt", attempt);
        if (!r.code.isEmpty()) h.rec.put("code", r.code);
        if (!r.error.isEmpty()) h.rec.put("error", r.error);
        if (r.tokenFetched) h.rec.put("token_fetched", true);
        h.attempt = attempt;
        h.reason = r.outcome;
        switch (r.outcome) {
            case Classify.SENT:
                break;
            case Classify.REJECTED:
                h.queue = cfg.queue + ".failed";
                h.vendorCode = r.code;
                break;
            case Classify.UNKNOWN:
                h.queue = cfg.queue + ".unknown";
                break;
            default: // NOT_SENT
                if (attempt >= cfg.maxAttempts) {
                    h.queue = cfg.queue + ".dead";
                    h.reason = "MAX_ATTEMPTS";
                } else {
                    h.queue = cfg.queue + ".retry";
                    h.expirationMs = Math.min(Math.max(cfg.retryDelayMs, r.retryAfterMs), cfg.retryMaxDelayMs);
                }
        }
        return h;
    }
}
