package notifierlab;

import java.io.IOException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.apache.http.client.config.RequestConfig;
import org.apache.http.client.methods.CloseableHttpResponse;
import org.apache.http.client.methods.HttpPost;
import org.apache.http.client.protocol.HttpClientContext;
import org.apache.http.config.Registry;
import org.apache.http.config.RegistryBuilder;
import org.apache.http.conn.ConnectTimeoutException;
import org.apache.http.conn.socket.ConnectionSocketFactory;
import org.apache.http.conn.ssl.SSLConnectionSocketFactory;
import org.apache.http.entity.ContentType;
import org.apache.http.entity.StringEntity;
import org.apache.http.impl.client.CloseableHttpClient;
import org.apache.http.impl.client.HttpClients;
import org.apache.http.impl.conn.PoolingHttpClientConnectionManager;
import org.apache.http.util.EntityUtils;

/**
 * CLIENT_MODE apache: Apache HttpClient 4.5.14 (Debian's libhttpclient-java)
 * with a PoolingHttpClientConnectionManager as its tutorial shows it
 * (setMaxTotal(200), setDefaultMaxPerRoute(20)), everything else the
 * library's default: DefaultConnectionKeepAliveStrategy (the server's
 * Keep-Alive header, else no limit), no idle eviction, validateAfterInactivity
 * 2 s, DefaultHttpRequestRetryHandler (3 retries of a request not yet sent
 * or idempotent). The harness sets only the contract's TLS and
 * VENDOR_RESPONSE_TIMEOUT_MS as connect, socket and pool timeouts. A
 * failure the context says happened before a connection was bound (or a
 * connect timeout) is thrown as a ConnectException (NOT_SENT).
 * CLIENT_MODE apache-fixed adds the documented fix and nothing else
 * (README.md, "Fixed variants"):
 * evictIdleConnections(CLIENT_IDLE_TIMEOUT_MS, MILLISECONDS).
 */
final class ApacheTransport implements Vendor.Transport {
    private final CloseableHttpClient client;
    private final PoolingHttpClientConnectionManager cm;
    private final RequestConfig rc;
    private final String base;

    ApacheTransport(Config cfg, SSLContext ssl) {
        base = cfg.vendorURL.replaceAll("/$", "");
        Registry<ConnectionSocketFactory> reg = RegistryBuilder.<ConnectionSocketFactory>create()
                .register("https", new SSLConnectionSocketFactory(ssl)).build();
        cm = new PoolingHttpClientConnectionManager(reg);
        cm.setMaxTotal(200);
        cm.setDefaultMaxPerRoute(20);
        int t = (int) cfg.responseTimeoutMs;
        rc = RequestConfig.custom().setConnectTimeout(t).setSocketTimeout(t).setConnectionRequestTimeout(t).build();
        org.apache.http.impl.client.HttpClientBuilder b = HttpClients.custom().setConnectionManager(cm).setDefaultRequestConfig(rc);
        if (cfg.clientMode.equals("apache-fixed")) b.evictIdleConnections(cfg.clientIdleTimeoutMs, TimeUnit.MILLISECONDS);
        client = b.build();
    }

    @Override
    public Vendor.Answer post(String path, String contentType, String body, Map<String, String> headers, Map<String, Object> trace)
            throws IOException {
        HttpPost p = new HttpPost(base + path);
        p.setHeader("Accept", "application/json");
        p.setEntity(new StringEntity(body, ContentType.create(contentType.split(";")[0], StandardCharsets.UTF_8)));
        headers.forEach(p::setHeader);
        HttpClientContext ctx = HttpClientContext.create();
        long t0 = System.nanoTime();
        try (CloseableHttpResponse res = client.execute(p, ctx)) {
            Vendor.Answer a = new Vendor.Answer();
            a.status = res.getStatusLine().getStatusCode();
            a.body = res.getEntity() == null ? "" : EntityUtils.toString(res.getEntity(), StandardCharsets.UTF_8);
            a.retryAfter = res.getFirstHeader("Retry-After") == null ? null : res.getFirstHeader("Retry-After").getValue();
            return a;
        } catch (ConnectTimeoutException e) {
            throw (IOException) new ConnectException("connect timeout: " + e).initCause(e);
        } finally {
            trace.put("ttfb_ms", (System.nanoTime() - t0) / 1e6);
            if (ctx.isRequestSent()) trace.put("wrote_request", true);
        }
    }
}
