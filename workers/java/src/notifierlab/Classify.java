package notifierlab;

import java.net.ConnectException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLHandshakeException;

/**
 * Outcome classification of one send (docs/outcomes.md) with the vendor's
 * status table (docs/vendor-api.md#status-table). Outcome names are the
 * project's vocabulary (worker/outcome), spelled here as strings.
 */
final class Classify {
    static final String SENT = "SENT", REJECTED = "REJECTED", NOT_SENT = "NOT_SENT", UNKNOWN = "UNKNOWN",
            OUTSIDE_SEND_WINDOW = "OUTSIDE_SEND_WINDOW", INVALID = "INVALID", DUPLICATE = "DUPLICATE";
    static final List<String> ALL = List.of(SENT, REJECTED, NOT_SENT, UNKNOWN, OUTSIDE_SEND_WINDOW, INVALID, DUPLICATE);
    static final List<String> TABLE_OUTCOMES = List.of(REJECTED, NOT_SENT, UNKNOWN);

    /** A status table: success code, statuses ("429", "4xx") and codes to outcomes. */
    static final class Table {
        String successCode;
        final Map<String, String> statuses = new HashMap<>();
        final Map<String, String> codes = new HashMap<>();
    }

    /** The default table: 429/408 NOT_SENT, other 4xx REJECTED, 5xx UNKNOWN. */
    static Table defaultTable() {
        Table t = new Table();
        t.successCode = "1000";
        t.statuses.put("429", NOT_SENT);
        t.statuses.put("408", NOT_SENT);
        t.statuses.put("4xx", REJECTED);
        t.statuses.put("5xx", UNKNOWN);
        return t;
    }

    /** Parses the table's JSON ("" = default); throws naming the bad key and what is allowed. */
    static Table parseTable(String json) {
        if (json == null || json.isEmpty()) return defaultTable();
        Object v;
        try {
            v = Json.parse(json);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("status table: not JSON: " + e.getMessage());
        }
        if (!(v instanceof Map)) throw new IllegalArgumentException("status table: not a JSON object");
        Map<?, ?> m = (Map<?, ?>) v;
        Table t = new Table();
        Object sc = m.get("success_code");
        t.successCode = sc == null ? "" : codeString(sc);
        if (t.successCode.isEmpty()) throw new IllegalArgumentException("status table: success_code is empty");
        for (String where : List.of("statuses", "codes")) {
            Object sub = m.get(where);
            if (sub == null) continue;
            if (!(sub instanceof Map)) throw new IllegalArgumentException("status table: " + where + " is not an object");
            for (Map.Entry<?, ?> e : ((Map<?, ?>) sub).entrySet()) {
                String k = String.valueOf(e.getKey()), o = String.valueOf(e.getValue());
                if (!TABLE_OUTCOMES.contains(o))
                    throw new IllegalArgumentException("status table: " + where + "." + k + " = " + o + "; allowed: " + String.join(", ", TABLE_OUTCOMES));
                if (where.equals("statuses") && !k.matches("[1-5](\\d\\d|xx)"))
                    throw new IllegalArgumentException("status table: statuses key " + k + "; allowed: NNN or Nxx");
                (where.equals("statuses") ? t.statuses : t.codes).put(k, o);
            }
        }
        return t;
    }

    private static String codeString(Object v) {
        if (v instanceof Double) {
            double d = (Double) v;
            if (d == Math.rint(d)) return Long.toString((long) d);
        }
        return String.valueOf(v);
    }

    /** The business code at field of a JSON body, or null. */
    static String codeOf(String body, String field) {
        Map<String, Object> m = Json.object(body == null ? "" : body);
        if (m == null) return null;
        Object v = m.get(field);
        return (v instanceof String || v instanceof Double) ? codeString(v) : null;
    }

    /** {outcome, code} of an HTTP answer, in the status table's order. */
    static String[] classifyAnswer(Table t, int status, String body, String codeField) {
        String code = codeOf(body, codeField);
        if (code != null && t.codes.containsKey(code)) return new String[] {t.codes.get(code), code};
        if (status >= 200 && status < 300) {
            if (code == null) return new String[] {UNKNOWN, Integer.toString(status)};
            return new String[] {code.equals(t.successCode) ? SENT : REJECTED, code};
        }
        String o = t.statuses.get(Integer.toString(status));
        if (o == null) o = t.statuses.get((status / 100) + "xx");
        return new String[] {o == null ? UNKNOWN : o, code != null ? code : Integer.toString(status)};
    }

    /**
     * The outcome of a send that got no answer: NOT_SENT only for failures
     * that happen before the request is written (DNS, connect, connect
     * timeout, TLS handshake); every other failure, a response timeout
     * included, is UNKNOWN (docs/outcomes.md#reasons).
     */
    static String classifyFailure(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof ConnectException || c instanceof HttpConnectTimeoutException
                    || c instanceof SSLHandshakeException || c instanceof UnknownHostException
                    || c instanceof UnresolvedAddressException) {
                return NOT_SENT;
            }
        }
        return UNKNOWN;
    }

    /** Retry-After (seconds or an HTTP date) as ms from nowMs; -1 when absent or unreadable. */
    static long retryAfterMs(String v, long nowMs) {
        if (v == null || v.isBlank()) return -1;
        String s = v.trim();
        if (s.matches("\\d+")) return Long.parseLong(s) * 1000;
        try {
            return Math.max(0, ZonedDateTime.parse(s, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli() - nowMs);
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** The x-notifier-attempt header as any publisher sends it; 0 when missing or bad. */
    static int attemptOf(Object v) {
        if (v == null) return 0;
        try {
            long n = v instanceof Number ? ((Number) v).longValue() : Long.parseLong(v.toString().trim());
            return n < 0 ? 0 : (int) Math.min(n, Integer.MAX_VALUE);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
