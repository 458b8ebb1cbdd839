package notifierlab;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The Java reference worker (docs/worker-contract.md): the RabbitMQ Java
 * client, one message at a time (prefetch 1), the delivery rules of
 * docs/outcomes.md, routing and headers of docs/worker-contract.md#queues.
 * Exit status: 0 done (MAX_MESSAGES or SIGTERM), 2 bad environment, 1 error.
 */
public final class Worker {
    private final Config cfg;
    private final Vendor vendor;
    private final Ledger ledger;
    private final Records records;
    private final SendWindow window;
    private final long clockOffsetMs;
    private Channel ch;
    private int seq;
    private final Intake intake;
    private final CountDownLatch done = new CountDownLatch(1);
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Object busy = new Object();

    Worker(Config cfg) throws Exception {
        this.cfg = cfg;
        this.vendor = new Vendor(cfg, Classify.parseTable(cfg.statusTable));
        this.ledger = new Ledger(Path.of(cfg.ledger));
        this.records = new Records(cfg.records.isEmpty() ? null : Path.of(cfg.records));
        this.intake = new Intake(cfg.maxMessages);
        this.window = new SendWindow(cfg.windowStart, cfg.windowEnd, cfg.windowZone);
        this.clockOffsetMs = cfg.clockStart.isEmpty() ? 0 : java.time.OffsetDateTime.parse(cfg.clockStart).toInstant().toEpochMilli() - System.currentTimeMillis();
    }

    /** The six queues and their arguments, as the lab's driver declares them (worker/queues). */
    static List<Map.Entry<String, Map<String, Object>>> queues(Config c) {
        Map<String, Object> main = to(c, c.queue + ".dead");
        if (c.singleActiveConsumer) main.put("x-single-active-consumer", true);
        if (c.queueType.equals("quorum")) main.put("x-delivery-limit", c.deliveryLimit);
        Map<String, Object> retry = to(c, c.queue);
        retry.put("x-message-ttl", c.retryMaxDelayMs);
        return List.of(Map.entry(c.queue, main), Map.entry(c.queue + ".retry", retry), Map.entry(c.queue + ".unknown", plain(c)),
                Map.entry(c.queue + ".held", to(c, c.queue)), Map.entry(c.queue + ".failed", plain(c)), Map.entry(c.queue + ".dead", plain(c)));
    }

    private static Map<String, Object> plain(Config c) {
        Map<String, Object> m = new HashMap<>();
        m.put("x-queue-type", c.queueType);
        return m;
    }

    private static Map<String, Object> to(Config c, String target) {
        Map<String, Object> m = plain(c);
        m.put("x-dead-letter-exchange", "");
        m.put("x-dead-letter-routing-key", target);
        if (c.queueType.equals("quorum")) { // at-least-once dead-lettering (RabbitMQ 3.10+) needs reject-publish
            m.put("x-dead-letter-strategy", "at-least-once");
            m.put("x-overflow", "reject-publish");
        }
        return m;
    }

    static void log(String level, String msg) {
        System.err.println(Json.write(Map.of("time", Instant.now().toString(), "level", level, "msg", msg)));
    }

    void run() throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setUri(cfg.amqpURL);
        // "amqp://host:5672/" names the vhost "" for the Java client, "/"
        // for the Go and Node clients: follow them, as the lab's URL means "/".
        if (f.getVirtualHost().isEmpty()) f.setVirtualHost("/");
        f.setRequestedHeartbeat(10);
        Connection conn = f.newConnection();
        ch = conn.createChannel();
        ch.confirmSelect();
        for (var q : queues(cfg)) ch.queueDeclare(q.getKey(), true, false, false, q.getValue());
        ch.basicQos(1);
        log("INFO", "worker started: mode " + cfg.clientMode + ", amqp " + Config.redact(cfg.amqpURL) + ", vendor " + cfg.vendorURL);
        String tag = ch.basicConsume(cfg.queue, false, new DefaultConsumer(ch) {
            @Override
            public void handleDelivery(String consumerTag, Envelope env, AMQP.BasicProperties props, byte[] body) {
                synchronized (busy) {
                    // Closed (MAX_MESSAGES, SIGTERM): left unacked, requeued at close (Intake).
                    if (intake.admits()) deliver(env, props, body);
                }
            }
        });
        // SIGTERM: stop consuming, let the in-flight message end in its
        // place, close; the hook waits for that (the lab's grace is longer).
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            intake.stop();
            done.countDown();
            try {
                stopped.await(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        }));
        done.await();
        synchronized (busy) {
            try {
                ch.basicCancel(tag);
            } catch (Exception ignored) {
                // closed already
            }
        }
        try {
            conn.close();
        } catch (Exception ignored) {
            // closed already
        }
        ledger.close();
        records.close();
        log("INFO", "worker stopped: " + intake.handled() + " messages handled");
        stopped.countDown();
    }

    /** Handles one delivery: decide, route, ack, record; a failed re-publish requeues. */
    private void deliver(Envelope env, AMQP.BasicProperties props, byte[] body) {
        Instant start = Instant.now();
        Map<String, Object> headers = props.getHeaders() == null ? Map.of() : props.getHeaders();
        Handled h;
        try {
            h = handle(start, env.isRedeliver(), headers, body);
            if (h.queue != null) {
                Map<String, Object> out = new HashMap<>();
                out.put("x-notifier-outcome", h.rec.get("outcome"));
                out.put("x-notifier-reason", h.reason);
                if (h.attempt > 0) out.put("x-notifier-attempt", h.attempt);
                if (h.rec.get("error") != null) out.put("x-notifier-error", h.rec.get("error"));
                if (h.vendorCode != null) out.put("x-notifier-vendor-code", h.vendorCode);
                AMQP.BasicProperties.Builder p = new AMQP.BasicProperties.Builder().deliveryMode(2).headers(out);
                if (h.expirationMs >= 0) p.expiration(Long.toString(Math.max(1, h.expirationMs)));
                ch.basicPublish("", h.queue, p.build(), body);
                ch.waitForConfirmsOrDie(10_000);
            }
            ch.basicAck(env.getDeliveryTag(), false);
        } catch (Exception e) {
            log("WARN", "message requeued: " + e);
            try {
                ch.basicNack(env.getDeliveryTag(), false, true);
            } catch (Exception ignored) {
                // channel gone: the broker redelivers
            }
            return;
        }
        h.rec.put("queue", h.queue == null ? "" : h.queue);
        h.rec.put("end", Instant.now().toString());
        h.rec.put("cpu_ms", Records.cpuMs());
        try {
            records.write(h.rec);
        } catch (Exception e) {
            log("WARN", "records: " + e);
        }
        if (intake.handledOne()) done.countDown();
    }

    /** Where a message goes: queue null = ack only. */
    private static final class Handled {
        Map<String, Object> rec;
        String queue, reason, vendorCode;
        int attempt;
        long expirationMs = -1;
    }

    private Handled handle(Instant start, boolean redelivered, Map<String, Object> headers, byte[] body) throws Exception {
        Instant now = Instant.ofEpochMilli(System.currentTimeMillis() + clockOffsetMs);
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
        if ("ad".equals(msg.get("category"))) {
            long wait = window.untilOpenMs(now);
            if (wait > 0) {
                h.rec.put("outcome", Classify.OUTSIDE_SEND_WINDOW);
                h.rec.put("held_until", now.plusMillis(wait).toString());
                h.queue = cfg.queue + ".held";
                h.reason = Classify.OUTSIDE_SEND_WINDOW;
                h.expirationMs = wait;
                return h;
            }
        }
        String hash = Ledger.hashOf(body);
        String[] prior = ledger.decide(refkey, hash);
        if (prior != null) {
            h.rec.put("outcome", prior[0]);
            h.rec.put("error", prior[1]);
            h.reason = prior[1];
            if (prior[0].equals(Classify.UNKNOWN)) {
                ledger.finish(refkey, hash, Classify.UNKNOWN);
                h.queue = cfg.queue + ".unknown";
            } else if (prior[0].equals(Classify.INVALID)) {
                h.queue = cfg.queue + ".dead";
            }
            return h;
        }
        ledger.begin(refkey, hash); // forced to disk before the request goes out
        int attempt = Classify.attemptOf(headers.get("x-notifier-attempt")) + 1;
        double cpu0 = Records.cpuMs();
        Vendor.Result r = vendor.send(msg);
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

    public static void main(String[] args) {
        Config cfg;
        try {
            cfg = Config.load(System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println("notifier-worker-java: " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            new Worker(cfg).run();
        } catch (Exception e) {
            StringBuilder b = new StringBuilder(e.toString());
            for (Throwable c = e.getCause(); c != null; c = c.getCause()) b.append(": ").append(c);
            System.err.println("notifier-worker-java: " + b);
            System.exit(1);
        }
        System.exit(0);
    }
}
