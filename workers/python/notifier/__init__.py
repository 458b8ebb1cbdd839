"""notifier-lab contract worker in Python (docs/worker-contract.md): pika
for AMQP and one third-party HTTP client chosen by CLIENT_MODE (clients.py).
The modules other than clients.py and worker.py import only the standard
library, so the unit tests (tests/) run without pika, requests or httpx."""
