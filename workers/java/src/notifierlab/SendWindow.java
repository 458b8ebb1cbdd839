package notifierlab;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;

/** The send window of advertising messages, [start, end) in zone (docs/case.md#delivery-rules). */
final class SendWindow {
    final LocalTime start, end;
    final ZoneId zone;

    SendWindow(String start, String end, String zone) {
        this.start = LocalTime.parse(start);
        this.end = LocalTime.parse(end);
        this.zone = ZoneId.of(zone);
    }

    /** 0 when now is inside the window, else ms until it opens. */
    long untilOpenMs(Instant now) {
        ZonedDateTime t = now.atZone(zone);
        LocalTime lt = t.toLocalTime();
        boolean inside = start.isBefore(end) || start.equals(end)
                ? !lt.isBefore(start) && lt.isBefore(end)
                : !lt.isBefore(start) || lt.isBefore(end);
        if (inside) return 0;
        ZonedDateTime open = t.with(start).withNano(0);
        if (!open.isAfter(t)) open = open.plusDays(1);
        return Duration.between(t, open).toMillis();
    }
}
