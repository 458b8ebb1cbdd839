package notifierlab;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Java worker's unit checks without a test framework (the image is
 * built with javac only): classification, the status table, the ledger,
 * the send window, the records shape and the intake (MAX_MESSAGES,
 * SIGTERM). Needs no broker and no network.
 * Prints one line per failed check and exits 1 when any failed.
 * Run: java -cp DIR notifierlab.SelfTest
 */
public final class SelfTest {
    private static final List<String> failures = new ArrayList<>();
    private static int checks;

    /** A handler's configuration for the checks: queue "q", 5 attempts. */
    private static Config handlerConfig() {
        Config cfg = new Config();
        cfg.queue = "q";
        cfg.workerID = "t";
        cfg.maxAttempts = 5;
        return cfg;
    }

    /** A sender that answers SENT and adds each refkey to sent. */
    private static Handler.Sender recordingSender(List<String> sent) {
        return msg -> {
            sent.add((String) msg.get("refkey"));
            SendResult r = new SendResult();
            r.outcome = Classify.SENT;
            r.code = "1000";
            return r;
        };
    }

    private static void check(String name, Object got, Object want) {
        checks++;
        if (!String.valueOf(got).equals(String.valueOf(want))) failures.add(name + ": got " + got + ", want " + want);
    }

    public static void main(String[] args) throws Exception {
        Classify.Table t = Classify.parseTable("{\"success_code\":\"1000\",\"statuses\":{\"429\":\"NOT_SENT\",\"408\":\"NOT_SENT\",\"4xx\":\"REJECTED\",\"5xx\":\"UNKNOWN\"},\"codes\":{\"4290\":\"NOT_SENT\"}}");
        Object[][] answers = {
            {"2xx success", 200, "{\"code\":\"1000\"}", "SENT"},
            {"2xx numeric success", 200, "{\"code\":1000}", "SENT"},
            {"2xx other code", 200, "{\"code\":\"3018\"}", "REJECTED"},
            {"2xx unparsable", 200, "oops", "UNKNOWN"},
            {"429", 429, "{\"code\":\"4290\"}", "NOT_SENT"},
            {"code wins over status", 500, "{\"code\":\"4290\"}", "NOT_SENT"},
            {"408", 408, "", "NOT_SENT"},
            {"400", 400, "{\"code\":\"3001\"}", "REJECTED"},
            {"502", 502, "<html>", "UNKNOWN"},
            {"503 undocumented", 503, "", "UNKNOWN"},
        };
        for (Object[] a : answers) check("answer " + a[0], Classify.classifyAnswer(t, (Integer) a[1], (String) a[2], "code")[0], a[3]);
        Classify.Table sms = Classify.parseTable("{\"success_code\":\"0\",\"statuses\":{\"4xx\":\"REJECTED\"}}");
        check("profile code field", Classify.classifyAnswer(sms, 202, "{\"result_code\":\"0\"}", "result_code")[0], "SENT");
        check("wrong code field (negative control)", Classify.classifyAnswer(sms, 202, "{\"result_code\":\"0\"}", "code")[0], "UNKNOWN");

        check("connect refused", Classify.classifyFailure(new java.net.ConnectException("refused")), "NOT_SENT");
        check("connect timeout", Classify.classifyFailure(new java.net.http.HttpConnectTimeoutException("t")), "NOT_SENT");
        check("handshake", Classify.classifyFailure(new java.io.IOException("x", new javax.net.ssl.SSLHandshakeException("bad cert"))), "NOT_SENT");
        check("response timeout", Classify.classifyFailure(new java.net.http.HttpTimeoutException("request timed out")), "UNKNOWN");
        check("reset", Classify.classifyFailure(new java.io.IOException("Connection reset")), "UNKNOWN");
        check("eof", Classify.classifyFailure(new java.io.EOFException("EOF reached while reading")), "UNKNOWN");

        for (String bad : new String[] {"{\"success_code\":\"1\",\"statuses\":{\"429\":\"SENT\"}}", "{\"success_code\":\"1\",\"statuses\":{\"4x\":\"REJECTED\"}}", "{\"statuses\":{}}", "{"}) {
            checks++;
            try {
                Classify.parseTable(bad);
                failures.add("parseTable accepted " + bad);
            } catch (IllegalArgumentException expected) {
                // refused, as it must be
            }
        }
        check("retry-after seconds", Classify.retryAfterMs("2", 0), 2000);
        check("retry-after date", Classify.retryAfterMs("Thu, 01 Jan 1970 00:00:10 GMT", 4000), 6000);
        check("retry-after bad", Classify.retryAfterMs("soon", 0), -1);
        check("attempt int", Classify.attemptOf(4), 4);
        check("attempt string", Classify.attemptOf("3"), 3);
        check("attempt negative", Classify.attemptOf(-1), 0);

        Path dir = Files.createTempDirectory("selftest");
        Path lp = dir.resolve("ledger.jsonl");
        String h = Ledger.hashOf("body".getBytes());
        try (Ledger l = new Ledger(lp)) {
            check("ledger fresh", l.decide("k", h), null);
            l.begin("k", h);
        }
        try (Ledger l = new Ledger(lp)) { // a crash between begin and finish
            check("ledger attempt without outcome", l.decide("k", h)[0], "UNKNOWN");
            l.finish("k", h, "SENT");
            check("ledger duplicate", l.decide("k", h)[0], "DUPLICATE");
            check("ledger conflict", l.decide("k", Ledger.hashOf("other".getBytes()))[1], "REFKEY_CONFLICT");
            l.begin("n", h);
            l.finish("n", h, "NOT_SENT");
            check("ledger resend after NOT_SENT", l.decide("n", h), null);
        }

        SendWindow w = new SendWindow("08:00", "20:50", "Asia/Seoul");
        check("window inside", w.untilOpenMs(Instant.parse("2026-11-30T03:00:00Z")), 0);
        check("window closing", w.untilOpenMs(Instant.parse("2026-11-30T11:50:00Z")), (11 * 60 + 10) * 60_000L);
        check("window before", w.untilOpenMs(Instant.parse("2026-11-29T22:59:30Z")), 30_000);

        // The handler checks an ad against the window again after the
        // ledger's begin: the clock's second reading is the one after the
        // begin (5 ms across 20:50 KST, then 1 ms inside the window).
        for (long beginMs : new long[] {5, 1}) {
            Instant[] readings = {Instant.parse("2026-11-30T11:49:59.998Z"), Instant.parse("2026-11-30T11:49:59.998Z").plusMillis(beginMs)};
            int[] reads = {0};
            List<String> sent = new ArrayList<>();
            Config cfg = handlerConfig();
            Handler.Sender sender = recordingSender(sent);
            byte[] ad = "{\"refkey\":\"ad-1\",\"category\":\"ad\",\"recipient\":\"+821000005678\",\"template_code\":\"t\",\"text\":\"x\",\"created_at\":\"2026-11-30T20:00:00+09:00\"}".getBytes();
            try (Ledger l = new Ledger(dir.resolve("window-" + beginMs + ".jsonl"))) {
                Handler hd = new Handler(cfg, l, w, sender, () -> readings[Math.min(reads[0]++, 1)]);
                Handler.Handled got = hd.handle(Instant.EPOCH, false, Map.of(), ad);
                if (beginMs == 5) {
                    check("ad begun across 20:50 not sent", sent, List.of());
                    check("ad begun across 20:50 held", got.rec.get("outcome") + " " + got.queue, "OUTSIDE_SEND_WINDOW q.held");
                    check("ad begun across 20:50 records the re-check's clock", got.rec.get("clock"), "2026-11-30T11:50:00.003Z");
                    check("ad begun across 20:50 sent later", l.decide("ad-1", Ledger.hashOf(ad)), null);
                } else {
                    check("ad begun inside the window sent", sent, List.of("ad-1"));
                    check("ad begun inside the window acked", got.rec.get("outcome") + " " + got.queue, "SENT null");
                    check("a sent record has no no_call", got.rec.containsKey("no_call"), false);
                }
            }
        }
        // A delivery whose refkey has an attempt without outcome ends
        // UNKNOWN without a call, and its record says no_call.
        {
            List<String> sent = new ArrayList<>();
            Config cfg = handlerConfig();
            Handler.Sender sender = recordingSender(sent);
            byte[] info = "{\"refkey\":\"k-1\",\"category\":\"info\",\"recipient\":\"+821000005678\",\"template_code\":\"t\",\"text\":\"x\"}".getBytes();
            try (Ledger l = new Ledger(dir.resolve("nocall.jsonl"))) {
                l.begin("k-1", Ledger.hashOf(info)); // an attempt that never finished
                Handler hd = new Handler(cfg, l, w, sender, () -> Instant.parse("2026-11-30T03:00:00Z"));
                Handler.Handled got = hd.handle(Instant.EPOCH, true, Map.of(), info);
                check("attempt without outcome: UNKNOWN, not sent", got.rec.get("outcome") + " " + sent, "UNKNOWN []");
                check("attempt without outcome: record says no_call", got.rec.get("no_call"), true);
            }
        }

        Path rp = dir.resolve("records.jsonl");
        try (Records r = new Records(rp)) {
            Map<String, Object> rec = Records.record(1, "a", "SENT", Instant.EPOCH, Instant.ofEpochMilli(25));
            rec.put("tls_version", "1.3");
            r.write(rec);
        }
        Map<String, Object> line = Json.object(Files.readAllLines(rp).get(0));
        for (String k : new String[] {"refkey", "outcome", "start", "end"}) check("record has " + k, line != null && line.containsKey(k), true);
        check("record start", line.get("start"), "1970-01-01T00:00:00Z");
        check("record json round trip", Json.write(Json.parse("{\"a\":[1,\"x\\\"y\",true,null]}")), "{\"a\":[1,\"x\\\"y\",true,null]}");

        // MAX_MESSAGES: once the last message was handled, a delivery the
        // broker had already pushed (a retried message, prefetch 1) is not
        // sent: the java-okhttp audit's NOT_SENT with a 200 in the journal.
        Intake in = new Intake(2);
        check("intake open", in.admits(), true);
        check("intake first handled", in.handledOne(), false);
        check("intake still open", in.admits(), true);
        check("intake closes at MAX_MESSAGES", in.handledOne(), true);
        check("intake refuses a delivery after MAX_MESSAGES", in.admits(), false);
        check("intake count", in.handled(), 2);
        Intake unbounded = new Intake(0); // negative control: no MAX_MESSAGES, never closes by count
        for (int i = 0; i < 3; i++) unbounded.handledOne();
        check("intake without MAX_MESSAGES stays open", unbounded.admits(), true);
        unbounded.stop();
        check("intake refuses a delivery after SIGTERM", unbounded.admits(), false);

        for (String o : Classify.ALL) check("outcome " + o + " known", List.of("SENT", "REJECTED", "NOT_SENT", "UNKNOWN", "OUTSIDE_SEND_WINDOW", "INVALID", "DUPLICATE").contains(o), true);

        for (String f : failures) System.out.println("FAIL " + f);
        System.out.println(checks + " checks, " + failures.size() + " failed");
        System.exit(failures.isEmpty() ? 0 : 1);
    }
}
