package notifierlab;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
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
    private final Handler handler;
    private Channel ch;
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
        long clockOffsetMs = cfg.clockStart.isEmpty() ? 0 : java.time.OffsetDateTime.parse(cfg.clockStart).toInstant().toEpochMilli() - System.currentTimeMillis();
        this.handler = new Handler(cfg, ledger, new SendWindow(cfg.windowStart, cfg.windowEnd, cfg.windowZone), vendor::send,
                () -> Instant.ofEpochMilli(System.currentTimeMillis() + clockOffsetMs));
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
        Handler.Handled h;
        try {
            h = handler.handle(start, env.isRedeliver(), headers, body);
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
