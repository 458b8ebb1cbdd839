'use strict';
// The message contract (worker/message, notification.schema.json), the
// fields a send needs. Throws an Error whose message is the reason.

function decode(body) {
  let m;
  try {
    m = JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw Object.assign(new Error('body is not JSON'), { refkey: '' });
  }
  if (m === null || typeof m !== 'object' || Array.isArray(m)) throw Object.assign(new Error('body is not a JSON object'), { refkey: '' });
  const refkey = typeof m.refkey === 'string' ? m.refkey : '';
  const bad = (reason) => { throw Object.assign(new Error(reason), { refkey }); };
  if (!refkey) bad('refkey: empty');
  if (m.category !== 'info' && m.category !== 'ad') bad(`category ${JSON.stringify(m.category)}: want info or ad`);
  for (const f of ['recipient', 'template_code', 'text']) {
    if (typeof m[f] !== 'string' || m[f] === '') bad(`${f}: empty`);
  }
  return m;
}

module.exports = { decode };
