#!/bin/sh
# Unbuffered so the log reaches `docker logs` as it happens.
exec python3 -u /app/main.py "$@"
