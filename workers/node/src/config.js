'use strict';
// The environment of docs/worker-contract.md, read once at start. Throws an
// Error listing every bad variable with what is allowed.

function load(env) {
  const errs = [];
  const str = (k, def) => (env[k] !== undefined && env[k] !== '' ? env[k] : def);
  const int = (k, def, min) => {
    const v = str(k, String(def));
    if (!/^\d+$/.test(v) || Number(v) < min) {
      errs.push(`${k}=${JSON.stringify(v)}: want a whole number >= ${min}`);
      return def;
    }
    return Number(v);
  };
  const c = {
    amqpURL: str('AMQP_URL', 'amqp://guest:guest@localhost:5672/'),
    queue: str('QUEUE', 'notifications'),
    queueType: str('QUEUE_TYPE', 'classic'),
    singleActiveConsumer: str('SINGLE_ACTIVE_CONSUMER', 'true') === 'true',
    deliveryLimit: int('DELIVERY_LIMIT', 5, 1),
    retryDelayMs: int('RETRY_DELAY_MS', 5000, 1),
    retryMaxDelayMs: int('RETRY_MAX_DELAY_MS', 300000, 1),
    maxAttempts: int('MAX_ATTEMPTS', 5, 1),
    vendorURL: str('VENDOR_URL', ''),
    caFile: str('VENDOR_CA_FILE', ''),
    clientCert: str('VENDOR_CLIENT_CERT', ''),
    clientKey: str('VENDOR_CLIENT_KEY', ''),
    clientID: str('VENDOR_CLIENT_ID', ''),
    clientSecret: str('VENDOR_CLIENT_SECRET', ''),
    tokenPath: str('VENDOR_TOKEN_PATH', '/v1/token'),
    tokenAuth: str('VENDOR_TOKEN_AUTH', 'basic'),
    sendPath: str('VENDOR_SEND_PATH', '/v3/message'),
    refkeyField: str('VENDOR_REFKEY_FIELD', 'refkey'),
    codeField: str('VENDOR_CODE_FIELD', 'code'),
    correlationHeader: str('VENDOR_CORRELATION_HEADER', 'X-Refkey'),
    statusTable: str('VENDOR_STATUS_TABLE', ''),
    responseTimeoutMs: int('VENDOR_RESPONSE_TIMEOUT_MS', 10000, 1),
    records: str('RECORDS', ''),
    ledger: str('LEDGER', ''),
    workerID: str('WORKER_ID', require('os').hostname()),
    maxMessages: int('MAX_MESSAGES', 0, 0),
    clockStart: str('CLOCK_START', ''),
    window: { start: str('WINDOW_START', '08:00'), end: str('WINDOW_END', '20:50'), zone: str('WINDOW_ZONE', 'Asia/Seoul') },
    clientMode: str('CLIENT_MODE', 'fetch'),
    idleTimeoutMs: int('IDLE_TIMEOUT_MS', 60000, 1),
    // The fixed modes' idle timeout (README.md, "Fixed variants"); the lab
    // sets it below the vendor's keep-alive. 0 = not set.
    clientIdleTimeoutMs: int('CLIENT_IDLE_TIMEOUT_MS', 0, 0),
  };
  if (/-fixed$/.test(c.clientMode) && c.clientIdleTimeoutMs < 1) errs.push(`CLIENT_IDLE_TIMEOUT_MS: CLIENT_MODE=${c.clientMode} needs the idle timeout in ms (the lab sets it below the vendor's keep-alive)`);
  if (!/^https:\/\/[^/]+/.test(c.vendorURL)) errs.push(`VENDOR_URL=${JSON.stringify(c.vendorURL)}: want https://host[:port]`);
  if (!c.clientID) errs.push('VENDOR_CLIENT_ID: empty');
  if (!c.clientSecret) errs.push('VENDOR_CLIENT_SECRET: empty');
  if (!['classic', 'quorum'].includes(c.queueType)) errs.push(`QUEUE_TYPE=${JSON.stringify(c.queueType)}: known types: classic, quorum`);
  if (!['basic', 'form'].includes(c.tokenAuth)) errs.push(`VENDOR_TOKEN_AUTH=${JSON.stringify(c.tokenAuth)}: known: basic, form`);
  if (!c.ledger) errs.push('LEDGER: empty (a file path in the state folder)');
  if (c.clockStart && Number.isNaN(Date.parse(c.clockStart))) errs.push(`CLOCK_START=${JSON.stringify(c.clockStart)}: want RFC 3339`);
  if (c.retryDelayMs > c.retryMaxDelayMs) errs.push('RETRY_DELAY_MS above RETRY_MAX_DELAY_MS');
  if (errs.length) throw new Error('bad environment: ' + errs.join('; '));
  return c;
}

// redact hides the password of a URL for logs.
function redact(u) {
  try {
    const x = new URL(u);
    if (x.password) x.password = 'xxxxx';
    return x.toString();
  } catch (_) {
    return '<unparsable url>';
  }
}

module.exports = { load, redact };
