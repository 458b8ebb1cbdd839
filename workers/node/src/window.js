'use strict';
// The send window of advertising messages (docs/case.md#delivery-rules):
// [start, end) local time in zone; zones without daylight saving assumed
// for the wait (Asia/Seoul has none).

function parseHM(s, name) {
  const m = /^(\d\d):(\d\d)$/.exec(s || '');
  if (!m || Number(m[1]) > 23 || Number(m[2]) > 59) throw new Error(`${name} ${JSON.stringify(s)}: want HH:MM`);
  return Number(m[1]) * 60 + Number(m[2]);
}

// localParts returns minutes since local midnight and ms into the minute.
function localParts(date, zone) {
  const f = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour12: false, hour: '2-digit', minute: '2-digit' });
  const [h, m] = f.format(date).split(':').map(Number);
  return { minutes: (h % 24) * 60 + m, msIntoMinute: date.getTime() % 60000 };
}

// untilOpen returns 0 when date is inside the window, else ms until it opens.
function untilOpen(date, win) {
  const start = parseHM(win.start, 'window start');
  const end = parseHM(win.end, 'window end');
  const { minutes, msIntoMinute } = localParts(date, win.zone);
  const inside = start <= end ? minutes >= start && minutes < end : minutes >= start || minutes < end;
  if (inside) return 0;
  const wait = ((start - minutes + 1440) % 1440) || 1440;
  return wait * 60000 - msIntoMinute;
}

module.exports = { untilOpen, parseHM };
