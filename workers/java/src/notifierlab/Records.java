package notifierlab;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The records file: one JSON line per handled message with the keys of
 * worker/records.Record (docs/worker-contract.md#records).
 */
final class Records implements AutoCloseable {
    private final OutputStream out;

    /** Appends to path; null = no records. */
    Records(Path path) throws IOException {
        out = path == null ? null : Files.newOutputStream(path, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /**
     * A record with the required keys and zero phase times; callers add
     * optional ones. "reused" and "got_conns" are left out: the JDK client
     * does not expose connection reuse, so nginx's log is the source.
     */
    static Map<String, Object> record(int seq, String refkey, String outcome, Instant start, Instant end) {
        if (outcome == null || start == null || end == null) throw new IllegalArgumentException("record: outcome, start and end are required");
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("seq", seq);
        r.put("refkey", refkey == null ? "" : refkey);
        r.put("outcome", outcome);
        r.put("queue", "");
        r.put("redelivered", false);
        r.put("start", start.toString());
        r.put("end", end.toString());
        r.put("total_ms", 0.0);
        r.put("connect_ms", 0.0);
        r.put("tls_handshake_ms", 0.0);
        r.put("ttfb_ms", 0.0);
        r.put("tls_version", "");
        r.put("cpu_ms", 0.0);
        r.put("send_cpu_ms", 0.0);
        return r;
    }

    /** Writes one line in one write and flushes it. */
    void write(Map<String, Object> r) throws IOException {
        if (out == null) return;
        out.write((Json.write(r) + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /**
     * The JVM process's cumulative CPU time (user+sys, every thread: JIT
     * and GC included), ms, from com.sun.management.OperatingSystemMXBean;
     * 0 when the JVM does not offer it.
     */
    static double cpuMs() {
        var os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() / 1e6;
        }
        return 0;
    }

    @Override
    public void close() throws IOException {
        if (out != null) out.close();
    }
}
