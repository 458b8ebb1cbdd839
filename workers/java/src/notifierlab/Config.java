package notifierlab;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The environment of docs/worker-contract.md, read once at start. */
final class Config {
    String amqpURL, queue, queueType, vendorURL, caFile, clientCert, clientKey, clientID, clientSecret,
            tokenPath, tokenAuth, sendPath, refkeyField, codeField, correlationHeader, statusTable,
            records, ledger, workerID, clockStart, windowStart, windowEnd, windowZone, clientMode;
    boolean singleActiveConsumer;
    long retryDelayMs, retryMaxDelayMs, responseTimeoutMs, clientIdleTimeoutMs;
    int maxAttempts, maxMessages, deliveryLimit;

    static final List<String> MODES = List.of("shared", "per-send", "okhttp", "apache", "okhttp-fixed", "apache-fixed");

    /** Reads env; throws IllegalArgumentException listing every bad variable. */
    static Config load(Map<String, String> env) {
        List<String> errs = new ArrayList<>();
        Config c = new Config();
        java.util.function.BiFunction<String, String, String> str = (k, d) -> {
            String v = env.get(k);
            return v == null || v.isEmpty() ? d : v;
        };
        java.util.function.BiFunction<String, Long, Long> num = (k, d) -> {
            String v = str.apply(k, Long.toString(d));
            if (!v.matches("\\d+")) {
                errs.add(k + "=\"" + v + "\": want a whole number");
                return d;
            }
            return Long.parseLong(v);
        };
        c.amqpURL = str.apply("AMQP_URL", "amqp://guest:guest@localhost:5672/");
        c.queue = str.apply("QUEUE", "notifications");
        c.queueType = str.apply("QUEUE_TYPE", "classic");
        c.singleActiveConsumer = str.apply("SINGLE_ACTIVE_CONSUMER", "true").equals("true");
        c.deliveryLimit = num.apply("DELIVERY_LIMIT", 5L).intValue();
        c.retryDelayMs = num.apply("RETRY_DELAY_MS", 5000L);
        c.retryMaxDelayMs = num.apply("RETRY_MAX_DELAY_MS", 300000L);
        c.maxAttempts = num.apply("MAX_ATTEMPTS", 5L).intValue();
        c.vendorURL = str.apply("VENDOR_URL", "");
        c.caFile = str.apply("VENDOR_CA_FILE", "");
        c.clientCert = str.apply("VENDOR_CLIENT_CERT", "");
        c.clientKey = str.apply("VENDOR_CLIENT_KEY", "");
        c.clientID = str.apply("VENDOR_CLIENT_ID", "");
        c.clientSecret = str.apply("VENDOR_CLIENT_SECRET", "");
        c.tokenPath = str.apply("VENDOR_TOKEN_PATH", "/v1/token");
        c.tokenAuth = str.apply("VENDOR_TOKEN_AUTH", "basic");
        c.sendPath = str.apply("VENDOR_SEND_PATH", "/v3/message");
        c.refkeyField = str.apply("VENDOR_REFKEY_FIELD", "refkey");
        c.codeField = str.apply("VENDOR_CODE_FIELD", "code");
        c.correlationHeader = str.apply("VENDOR_CORRELATION_HEADER", "X-Refkey");
        c.statusTable = str.apply("VENDOR_STATUS_TABLE", "");
        c.responseTimeoutMs = num.apply("VENDOR_RESPONSE_TIMEOUT_MS", 10000L);
        c.records = str.apply("RECORDS", "");
        c.ledger = str.apply("LEDGER", "");
        c.workerID = str.apply("WORKER_ID", str.apply("HOSTNAME", "worker"));
        c.maxMessages = num.apply("MAX_MESSAGES", 0L).intValue();
        c.clockStart = str.apply("CLOCK_START", "");
        c.windowStart = str.apply("WINDOW_START", "08:00");
        c.windowEnd = str.apply("WINDOW_END", "20:50");
        c.windowZone = str.apply("WINDOW_ZONE", "Asia/Seoul");
        c.clientMode = str.apply("CLIENT_MODE", "shared");
        // The fixed modes' idle timeout (README.md, "Fixed variants"), set by
        // the lab below the vendor's keep-alive; 0 = not set.
        c.clientIdleTimeoutMs = num.apply("CLIENT_IDLE_TIMEOUT_MS", 0L);
        if (c.clientMode.endsWith("-fixed") && c.clientIdleTimeoutMs < 1)
            errs.add("CLIENT_IDLE_TIMEOUT_MS: CLIENT_MODE=" + c.clientMode + " needs the idle timeout in ms (the lab sets it below the vendor's keep-alive)");
        if (!c.vendorURL.matches("https://[^/]+/?")) errs.add("VENDOR_URL=\"" + c.vendorURL + "\": want https://host[:port]");
        if (c.clientID.isEmpty()) errs.add("VENDOR_CLIENT_ID: empty");
        if (c.clientSecret.isEmpty()) errs.add("VENDOR_CLIENT_SECRET: empty");
        if (!List.of("classic", "quorum").contains(c.queueType)) errs.add("QUEUE_TYPE=\"" + c.queueType + "\": known types: classic, quorum");
        if (!List.of("basic", "form").contains(c.tokenAuth)) errs.add("VENDOR_TOKEN_AUTH=\"" + c.tokenAuth + "\": known: basic, form");
        if (!MODES.contains(c.clientMode)) errs.add("CLIENT_MODE=\"" + c.clientMode + "\": known modes: " + String.join(", ", MODES));
        if (c.ledger.isEmpty()) errs.add("LEDGER: empty (a file path in the state folder)");
        if (c.retryDelayMs > c.retryMaxDelayMs) errs.add("RETRY_DELAY_MS above RETRY_MAX_DELAY_MS");
        if (!errs.isEmpty()) throw new IllegalArgumentException("bad environment: " + String.join("; ", errs));
        return c;
    }

    /** url with its password hidden, for logs. */
    static String redact(String url) {
        return url.replaceAll("(//[^:/@]*:)[^@]*@", "$1xxxxx@");
    }
}
