'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { Intake } = require('../src/intake');

// After MAX_MESSAGES (or SIGTERM) no new send starts: a delivery the broker
// had pushed before the consumer was cancelled is left unacked.
test('Intake refuses a delivery after MAX_MESSAGES', () => {
  const in2 = new Intake(2);
  assert.equal(in2.admits(), true);
  assert.equal(in2.handledOne(), false);
  assert.equal(in2.admits(), true);
  assert.equal(in2.handledOne(), true, 'closes at MAX_MESSAGES');
  assert.equal(in2.admits(), false, 'a delivery after the last one is not handled');
  assert.equal(in2.handled, 2);
});

test('Intake without MAX_MESSAGES stays open until SIGTERM', () => {
  const open = new Intake(0); // negative control: no count closes it
  for (let i = 0; i < 3; i++) assert.equal(open.handledOne(), false);
  assert.equal(open.admits(), true);
  open.stop();
  assert.equal(open.admits(), false, 'a delivery after SIGTERM is not handled');
});
