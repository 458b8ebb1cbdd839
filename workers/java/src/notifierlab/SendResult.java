package notifierlab;

import java.util.LinkedHashMap;
import java.util.Map;

/** One send's outcome (Classify), the vendor's code and error, its Retry-After and trace. */
final class SendResult {
    String outcome, code = "", error = "";
    long retryAfterMs = -1;
    boolean tokenFetched;
    final Map<String, Object> trace = new LinkedHashMap<>();
}
