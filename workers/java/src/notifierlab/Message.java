package notifierlab;

import java.util.Map;

/** The message contract (worker/message): the fields a send needs. */
final class Message {
    private Message() {}

    /** null when m is a valid message, else the reason naming the field. */
    static String validate(Map<String, Object> m) {
        if (m == null) return "body is not a JSON object";
        if (!(m.get("refkey") instanceof String) || ((String) m.get("refkey")).isEmpty()) return "refkey: empty";
        Object c = m.get("category");
        if (!"info".equals(c) && !"ad".equals(c)) return "category " + c + ": want info or ad";
        for (String f : new String[] {"recipient", "template_code", "text"}) {
            if (!(m.get(f) instanceof String) || ((String) m.get(f)).isEmpty()) return f + ": empty";
        }
        return null;
    }
}
