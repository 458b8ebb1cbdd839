package notifierlab;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.X509TrustManager;
import okhttp3.Call;
import okhttp3.Connection;
import okhttp3.ConnectionPool;
import okhttp3.EventListener;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * CLIENT_MODE okhttp: one OkHttpClient (Debian's libokhttp-java 3.13.1)
 * with its defaults: a ConnectionPool of 5 idle connections kept 5 minutes,
 * retryOnConnectionFailure true, connect/read/write timeouts of 10 s. The
 * harness sets only the contract's TLS (the run's CA, a client certificate
 * under mTLS) and callTimeout = VENDOR_RESPONSE_TIMEOUT_MS. An
 * EventListener counts the connections a call acquires and whether the
 * request headers started to go out; a failure before that is thrown as a
 * ConnectException (NOT_SENT). One send at a time, so one listener state.
 * CLIENT_MODE okhttp-fixed adds the documented fix and nothing else
 * (README.md, "Fixed variants"): retryOnConnectionFailure(false) and
 * new ConnectionPool(5, CLIENT_IDLE_TIMEOUT_MS, MILLISECONDS).
 */
final class OkHttpTransport implements Vendor.Transport {
    private final OkHttpClient client;
    private final String base;
    private int conns;
    private boolean connected, wrote;

    OkHttpTransport(Config cfg, SSLContext ssl, X509TrustManager tm) {
        base = cfg.vendorURL.replaceAll("/$", "");
        OkHttpClient.Builder b = new OkHttpClient.Builder();
        if (cfg.clientMode.equals("okhttp-fixed")) {
            b.retryOnConnectionFailure(false)
                    .connectionPool(new ConnectionPool(5, cfg.clientIdleTimeoutMs, TimeUnit.MILLISECONDS));
        }
        client = b
                .sslSocketFactory(ssl.getSocketFactory(), tm)
                .callTimeout(cfg.responseTimeoutMs, TimeUnit.MILLISECONDS)
                .eventListener(new EventListener() {
                    @Override public void connectStart(Call call, InetSocketAddress a, Proxy p) { connected = true; }
                    @Override public void connectionAcquired(Call call, Connection c) { conns++; }
                    @Override public void requestHeadersStart(Call call) { wrote = true; }
                })
                .build();
    }

    @Override
    public Vendor.Answer post(String path, String contentType, String body, Map<String, String> headers, Map<String, Object> trace)
            throws IOException {
        conns = 0;
        connected = false;
        wrote = false;
        Request.Builder b = new Request.Builder().url(base + path)
                .header("Accept", "application/json")
                .post(RequestBody.create(MediaType.get(contentType), body));
        headers.forEach(b::header);
        long t0 = System.nanoTime();
        try (Response res = client.newCall(b.build()).execute()) {
            Vendor.Answer a = new Vendor.Answer();
            a.status = res.code();
            a.body = res.body() == null ? "" : res.body().string();
            a.retryAfter = res.header("Retry-After");
            if (res.handshake() != null) a.tlsVersion = res.handshake().tlsVersion().javaName().replace("TLSv", "");
            return a;
        } catch (IOException e) {
            if (!wrote) throw (IOException) new ConnectException("before the request was written: " + e).initCause(e);
            // Written at least once (OkHttp may have retried on a new connection
            // since): no cause chain, so that no connect failure of a later
            // try reads as NOT_SENT.
            throw new IOException("after the request was written: " + e);
        } finally {
            trace.put("ttfb_ms", (System.nanoTime() - t0) / 1e6);
            trace.put("got_conns", conns); // this call's own: the send's, not the token call's before it
            trace.put("reused", conns > 0 && !connected);
            if (wrote) trace.put("wrote_request", true);
        }
    }
}
