#!/bin/bash
# Same behaviour as the official wiremock/wiremock image's entrypoint:
# arguments that start with "-" (or none) are WireMock options.
set -euo pipefail
if [ "$#" -eq 0 ] || [ "${1:0:1}" = "-" ]; then
  set -- java ${JAVA_OPTS:-} -cp "/var/wiremock/lib/*:/var/wiremock/extensions/*" wiremock.Run "$@"
fi
exec "$@" ${WIREMOCK_OPTIONS:-}
