#!/bin/sh
# The global fetch has no CA option: Node reads the run's CA from
# NODE_EXTRA_CA_CERTS at start (added to its bundled roots). The agent modes
# pass VENDOR_CA_FILE as their only CA.
if [ -n "${VENDOR_CA_FILE:-}" ]; then
  NODE_EXTRA_CA_CERTS="$VENDOR_CA_FILE"
  export NODE_EXTRA_CA_CERTS
fi
exec node /app/main.js "$@"
