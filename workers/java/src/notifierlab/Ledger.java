package notifierlab;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The attempt ledger: an append-only JSON Lines file forced to disk after
 * every line, so an attempt is durable before its request goes out
 * (docs/outcomes.md#at-least-once-and-the-ledger). The last line of a refkey
 * wins when the file is read back.
 */
final class Ledger implements AutoCloseable {
    /** One refkey's state; outcome null = attempted, no outcome yet. */
    static final class Entry {
        String hash, outcome;
        int attempts;
    }

    private final Map<String, Entry> entries = new HashMap<>();
    private final FileChannel ch;

    /** Opens (or creates) the ledger at path; null = in memory only. */
    Ledger(Path path) throws IOException {
        if (path == null) {
            ch = null;
            return;
        }
        if (Files.exists(path)) {
            for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
                Map<String, Object> m = Json.object(line);
                if (m == null) continue; // a torn last line: the attempt before it stands
                Entry e = new Entry();
                e.hash = (String) m.get("hash");
                e.outcome = (String) m.get("outcome");
                e.attempts = m.get("attempts") instanceof Double ? ((Double) m.get("attempts")).intValue() : 0;
                entries.put((String) m.get("refkey"), e);
            }
        }
        ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    }

    static String hashOf(byte[] body) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * null when refkey may be sent, else {outcome, reason}: another body
     * (INVALID, REFKEY_CONFLICT), a final outcome (DUPLICATE), an attempt
     * without outcome (UNKNOWN: it may have reached the vendor).
     */
    String[] decide(String refkey, String hash) {
        Entry e = entries.get(refkey);
        if (e == null) return null;
        if (!e.hash.equals(hash)) return new String[] {Classify.INVALID, "REFKEY_CONFLICT"};
        if (e.outcome == null) return new String[] {Classify.UNKNOWN, "ATTEMPT_WITHOUT_OUTCOME"};
        if (e.outcome.equals(Classify.NOT_SENT) || e.outcome.equals(Classify.OUTSIDE_SEND_WINDOW)) return null;
        return new String[] {Classify.DUPLICATE, "ALREADY_" + e.outcome};
    }

    /** Writes an attempt without outcome and forces it to disk. */
    void begin(String refkey, String hash) throws IOException {
        Entry prev = entries.get(refkey);
        put(refkey, hash, null, (prev == null ? 0 : prev.attempts) + 1);
    }

    /** Writes the attempt's outcome and forces it to disk. */
    void finish(String refkey, String hash, String outcome) throws IOException {
        Entry prev = entries.get(refkey);
        put(refkey, hash, outcome, prev == null ? 0 : prev.attempts);
    }

    private void put(String refkey, String hash, String outcome, int attempts) throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("refkey", refkey);
        m.put("hash", hash);
        m.put("outcome", outcome);
        m.put("attempts", attempts);
        m.put("at", Instant.now().toString());
        if (ch != null) {
            ch.write(ByteBuffer.wrap((Json.write(m) + "\n").getBytes(StandardCharsets.UTF_8)));
            ch.force(false);
        }
        Entry e = new Entry();
        e.hash = hash;
        e.outcome = outcome;
        e.attempts = attempts;
        entries.put(refkey, e);
    }

    @Override
    public void close() throws IOException {
        if (ch != null) ch.close();
    }
}
