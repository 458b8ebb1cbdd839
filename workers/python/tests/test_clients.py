"""The clients against a plain local HTTP server: an answer, a refused
connect (NOT_SENT: never written) and a server that reads the request and
closes without an answer (UNKNOWN: written, and not re-sent by the
library). Skipped where requests or httpx is missing (the image build runs
them with Debian's packages)."""
import socket
import threading
import time
import unittest

from notifier import clients, config

try:
    import httpx  # noqa: F401
    import requests  # noqa: F401
    HAVE = True
except ImportError:
    HAVE = False


class Server:
    """Accepts connections; answer=False closes each after reading one request."""

    def __init__(self, answer):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.answer, self.requests = answer, 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = c.recv(65536)
                if not chunk:
                    break
                data += chunk
            if data:
                self.requests += 1
            if self.answer:
                body = b'{"code":"1000"}'
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                          b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            c.close()

    def close(self):
        self.sock.close()


class KeepAliveServer:
    """Answers every request on a kept connection; conns counts accepts."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.conns = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns += 1
            threading.Thread(target=self.conn, args=(c,), daemon=True).start()

    def conn(self, c):
        data = b""
        while True:
            while b"\r\n\r\n" not in data:
                chunk = c.recv(65536)
                if not chunk:
                    c.close()
                    return
                data += chunk
            head, data = data.split(b"\r\n\r\n", 1)
            n = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    n = int(line.split(b":")[1])
            while len(data) < n:
                data += c.recv(65536)
            data = data[n:]
            body = b'{"code":"1000"}'
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))

    def close(self):
        self.sock.close()


def client(mode, port, idle_ms=60000):
    cfg = config.load({"VENDOR_URL": "https://x", "VENDOR_CLIENT_ID": "i", "VENDOR_CLIENT_SECRET": "s",
                       "LEDGER": "l", "CLIENT_MODE": mode, "VENDOR_RESPONSE_TIMEOUT_MS": "3000",
                       "CLIENT_IDLE_TIMEOUT_MS": str(idle_ms)})
    cfg.vendor_url = "http://127.0.0.1:%d" % port
    return clients.new_client(cfg)


@unittest.skipUnless(HAVE, "requests or httpx not installed")
class ClientsTest(unittest.TestCase):
    def test_modes(self):
        for mode in config.MODES:
            with self.subTest(mode=mode):
                srv = Server(answer=True)
                c = client(mode, srv.port)
                a = c.request("POST", "/v3/message", {"Content-Type": "application/json"}, "{}")
                self.assertEqual((a.status, a.body), (200, '{"code":"1000"}'))
                self.assertGreater(a.trace["total_ms"], 0)
                c.close()
                srv.close()

                s = socket.socket()
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
                s.close()  # nothing listens: connect refused
                c = client(mode, port)
                with self.assertRaises(clients.SendError) as cm:
                    c.request("POST", "/v3/message", {}, "{}")
                self.assertFalse(cm.exception.wrote_request, str(cm.exception))
                c.close()

                srv = Server(answer=False)
                c = client(mode, srv.port)
                with self.assertRaises(clients.SendError) as cm:
                    c.request("POST", "/v3/message", {}, "{}")
                self.assertTrue(cm.exception.wrote_request, str(cm.exception))
                self.assertEqual(srv.requests, 1, "the library re-sent the POST")
                c.close()
                srv.close()

    def test_fixed_idle_timeout(self):
        """The fixed modes open a new connection after a pause of their
        idle timeout; the default ones reuse the kept one (the negative
        control: the pause alone does not make a new connection)."""
        for mode, want in (("session-fixed", 2), ("httpx-fixed", 2), ("session", 1), ("httpx", 1)):
            with self.subTest(mode=mode):
                srv = KeepAliveServer()
                c = client(mode, srv.port, idle_ms=200)
                for pause in (0, 0.05, 0.4):
                    time.sleep(pause)
                    a = c.request("POST", "/v3/message", {"Content-Type": "application/json"}, "{}")
                    self.assertEqual(a.status, 200)
                self.assertEqual(srv.conns, want, "connections for 3 sends, the last after a 0.4 s pause, idle timeout 0.2 s")
                c.close()
                srv.close()


if __name__ == "__main__":
    unittest.main()
