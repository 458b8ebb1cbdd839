'use strict';
// notifier-lab reference worker in Node.js: the lab's worker contract
// (docs/worker-contract.md) with amqplib and one of Node's own HTTP clients
// (CLIENT_MODE: fetch | agent-nokeepalive | agent-keepalive).
// Exit status: 0 done (MAX_MESSAGES or SIGTERM), 2 bad environment, 1 error.
const { load } = require('./src/config');
const { run } = require('./src/worker');

let cfg;
try {
  cfg = load(process.env);
} catch (e) {
  process.stderr.write(`notifier-worker-node: ${e.message}\n`);
  process.exit(2);
}
let stop;
const stopped = new Promise((resolve) => { stop = resolve; });
process.on('SIGTERM', () => stop());
process.on('SIGINT', () => stop());
run(cfg, stopped).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`notifier-worker-node: ${e.message}\n`);
    process.exit(1);
  },
);
