package notifierlab;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The vendor API over one HTTP client (CLIENT_MODE): the token call (Basic
 * or OAuth2 client credentials) and the send, judged with the status table.
 * shared keeps one JDK java.net.http.HttpClient (the case's fix); per-send
 * builds one per send (the case's old code, docs/case.md#production-worker);
 * okhttp and apache are third-party clients with their defaults
 * (OkHttpTransport, ApacheTransport; workers/java/README.md). The JDK's
 * idle keep-alive timeout is the system property
 * jdk.httpclient.keepalive.timeout (seconds). Nothing here retries a POST;
 * what a library re-sends on its own shows in WireMock's journal.
 */
final class Vendor {
    /** One HTTP answer, read whole. */
    static final class Answer {
        int status;
        String body = "", retryAfter, tlsVersion;
    }

    /**
     * One client under test: POSTs body to the vendor's path and reads the
     * whole answer, adding what it sees of the call to trace (records
     * keys). Every transport sends Content-Type and Accept: application/json
     * besides headers, as the JDK one does. A failure before the request started to be written is thrown
     * as (or caused by) one of the exceptions Classify.classifyFailure
     * takes for NOT_SENT.
     */
    interface Transport {
        Answer post(String path, String contentType, String body, Map<String, String> headers, Map<String, Object> trace)
                throws IOException, InterruptedException;
    }

    private static final long REFRESH_MARGIN_MS = 60_000;
    private final Config cfg;
    private final Classify.Table table;
    private final SSLContext ssl;
    private Transport shared;
    private String token;
    private long refreshAt;

    Vendor(Config cfg, Classify.Table table) throws Exception {
        this.cfg = cfg;
        this.table = table;
        this.ssl = sslContext(cfg);
        switch (cfg.clientMode) {
            case "shared": shared = jdk(newClient()); break;
            case "okhttp": case "okhttp-fixed": shared = new OkHttpTransport(cfg, ssl, trustManager(cfg)); break;
            case "apache": case "apache-fixed": shared = new ApacheTransport(cfg, ssl); break;
            default: break; // per-send: a new JDK client per send
        }
    }

    /** The X.509 trust manager of VENDOR_CA_FILE alone (OkHttp asks for it beside the socket factory). */
    static javax.net.ssl.X509TrustManager trustManager(Config cfg) throws Exception {
        for (javax.net.ssl.TrustManager t : trust(cfg).getTrustManagers()) {
            if (t instanceof javax.net.ssl.X509TrustManager) return (javax.net.ssl.X509TrustManager) t;
        }
        throw new IllegalStateException("no X509TrustManager for " + cfg.caFile);
    }

    /** TLS verified against VENDOR_CA_FILE only; a client certificate when mTLS is asked for. */
    static SSLContext sslContext(Config cfg) throws Exception {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        TrustManagerFactory tmf = trust(cfg);
        KeyManagerFactory kmf = null;
        if (!cfg.clientCert.isEmpty()) {
            Certificate[] chain = cf.generateCertificates(new ByteArrayInputStream(Files.readAllBytes(Path.of(cfg.clientCert)))).toArray(new Certificate[0]);
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            ks.setKeyEntry("client", pkcs8(Files.readString(Path.of(cfg.clientKey))), new char[0], chain);
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, new char[0]);
        }
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return ctx;
    }

    private static TrustManagerFactory trust(Config cfg) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        int n = 0;
        for (Certificate c : cf.generateCertificates(new ByteArrayInputStream(Files.readAllBytes(Path.of(cfg.caFile))))) {
            trust.setCertificateEntry("ca" + n++, c);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        return tmf;
    }

    /** A PKCS#8 PEM private key ("BEGIN PRIVATE KEY"), EC or RSA. */
    private static PrivateKey pkcs8(String pem) throws Exception {
        String b64 = pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(Base64.getDecoder().decode(b64));
        try {
            return KeyFactory.getInstance("EC").generatePrivate(spec);
        } catch (Exception e) {
            return KeyFactory.getInstance("RSA").generatePrivate(spec);
        }
    }

    private HttpClient newClient() {
        return HttpClient.newBuilder().sslContext(ssl).version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofMillis(cfg.responseTimeoutMs)).build();
    }

    /** The JDK client as a Transport. */
    private Transport jdk(HttpClient c) {
        return (path, contentType, body, headers, trace) -> {
            HttpResponse<String> res = post(c, path, contentType, body, headers);
            Answer a = new Answer();
            a.status = res.statusCode();
            a.body = res.body();
            a.retryAfter = res.headers().firstValue("Retry-After").orElse(null);
            a.tlsVersion = res.sslSession().map(x -> x.getProtocol().replace("TLSv", "")).orElse(null);
            return a;
        };
    }

    private HttpResponse<String> post(HttpClient c, String path, String contentType, String body, Map<String, String> headers)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(cfg.vendorURL.replaceAll("/$", "") + path))
                .timeout(Duration.ofMillis(cfg.responseTimeoutMs))
                .header("Content-Type", contentType).header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(b::header);
        return c.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private void fetchToken(Transport c, Map<String, Object> trace) throws Exception {
        Answer res;
        if (cfg.tokenAuth.equals("form")) {
            String form = "grant_type=client_credentials&client_id=" + URLEncoder.encode(cfg.clientID, StandardCharsets.UTF_8)
                    + "&client_secret=" + URLEncoder.encode(cfg.clientSecret, StandardCharsets.UTF_8);
            res = c.post(cfg.tokenPath, "application/x-www-form-urlencoded", form, Map.of(), trace);
        } else {
            String basic = Base64.getEncoder().encodeToString((cfg.clientID + ":" + cfg.clientSecret).getBytes(StandardCharsets.UTF_8));
            res = c.post(cfg.tokenPath, "application/json", "", Map.of("Authorization", "Basic " + basic), trace);
        }
        Map<String, Object> m = res.status == 200 ? Json.object(res.body) : null;
        Object tok = m == null ? null : m.getOrDefault("accesstoken", m.get("access_token"));
        if (!(tok instanceof String) || ((String) tok).isEmpty()) throw new IOException("token call answered " + res.status);
        long now = System.currentTimeMillis(), expires = now + 3_600_000;
        if (m.get("expired") instanceof String) expires = OffsetDateTime.parse((String) m.get("expired")).toInstant().toEpochMilli();
        else if (m.get("expires_in") instanceof Double) expires = now + (long) (((Double) m.get("expires_in")) * 1000);
        token = (String) tok;
        refreshAt = expires - Math.min(REFRESH_MARGIN_MS, (expires - now) / 10);
    }

    /** Sends one message; never throws for a vendor failure: every failure is an outcome. */
    SendResult send(Map<String, Object> msg) throws InterruptedException {
        SendResult r = new SendResult();
        Transport c = shared != null ? shared : jdk(newClient());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put(cfg.refkeyField, msg.get("refkey"));
        for (String k : new String[] {"recipient", "template_code", "text", "category"}) body.put(k, msg.get(k));
        String json = Json.write(body);
        long t0 = System.nanoTime();
        try {
            for (int tries = 0; ; tries++) {
                if (token == null || System.currentTimeMillis() >= refreshAt) {
                    try {
                        r.tokenFetched = true;
                        fetchToken(c, r.trace);
                    } catch (InterruptedException e) {
                        throw e;
                    } catch (Exception e) {
                        r.outcome = Classify.NOT_SENT; // no send was attempted
                        r.error = "token: " + e;
                        return r;
                    }
                }
                Map<String, String> h = new LinkedHashMap<>();
                h.put("Authorization", "Bearer " + token);
                if (!cfg.correlationHeader.isEmpty()) h.put(cfg.correlationHeader, (String) msg.get("refkey"));
                Answer res;
                try {
                    res = c.post(cfg.sendPath, "application/json", json, h, r.trace);
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    r.outcome = Classify.classifyFailure(e);
                    r.error = e.toString();
                    return r;
                }
                if (res.tlsVersion != null) r.trace.put("tls_version", res.tlsVersion);
                if (res.status == 401 && tries == 0) {
                    token = null; // refused before processing: one new token, one more try
                    continue;
                }
                String[] j = Classify.classifyAnswer(table, res.status, res.body, cfg.codeField);
                r.outcome = res.status == 401 ? Classify.REJECTED : j[0];
                r.code = j[1];
                if (!r.outcome.equals(Classify.SENT)) r.error = "status " + res.status;
                r.retryAfterMs = Classify.retryAfterMs(res.retryAfter, System.currentTimeMillis());
                return r;
            }
        } finally {
            r.trace.put("total_ms", (System.nanoTime() - t0) / 1e6);
        }
    }
}
