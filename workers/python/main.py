"""notifier-lab contract worker in Python (docs/worker-contract.md): pika and
one third-party HTTP client (CLIENT_MODE: requests | session | httpx).
Exit status: 0 done (MAX_MESSAGES or SIGTERM), 2 bad environment, 1 error."""
import os
import sys

from notifier.config import load


def main():
    try:
        cfg = load(os.environ)
    except ValueError as e:
        sys.stderr.write("notifier-worker-python: %s\n" % e)
        return 2
    from notifier.worker import Worker
    try:
        Worker(cfg).run()
    except Exception as e:  # a lost broker ends the process (no reconnect)
        sys.stderr.write("notifier-worker-python: %s: %s\n" % (type(e).__name__, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
