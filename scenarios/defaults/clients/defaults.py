"""defaults.py: Python requests at its defaults, for ./run.sh client-defaults
(scenarios/defaults). Usage: python3 defaults.py MODE, MODE requests-post
(requests.post per call: a new Session, so a new connection, each time) or
session (one requests.Session for every call). The environment gives URL,
TOKEN, PREFIX and CALLS; the lab CA comes from REQUESTS_CA_BUNDLE (requests
reads it). Every call POSTs a small JSON body with refkey PREFIX-<n> (also
in X-Refkey, which nginx logs). Prints one JSON line: per-call ms, wall ms,
errors, versions."""
import json
import os
import sys
import time

import requests
import urllib3

mode = sys.argv[1]
url, token, prefix = os.environ["URL"], os.environ["TOKEN"], os.environ["PREFIX"]
calls = int(os.environ["CALLS"])
if mode not in ("requests-post", "session"):
    sys.exit("unknown mode " + mode)

session = requests.Session() if mode == "session" else None
post = session.post if session else requests.post
ms, errors, first_error = [], 0, ""
t0 = time.perf_counter()
for n in range(1, calls + 1):
    ref = "%s-%d" % (prefix, n)
    s = time.perf_counter()
    try:
        r = post(url, json={"refkey": ref, "to": "01000000000", "template": "defaults", "text": "client defaults"},
                 headers={"Authorization": "Bearer " + token, "X-Refkey": ref})
        if r.status_code != 200:
            raise RuntimeError("status %d" % r.status_code)
        ms.append((time.perf_counter() - s) * 1000)
    except Exception as e:  # a failed call is data, not a reason to stop
        errors += 1
        first_error = first_error or repr(e)
wall = (time.perf_counter() - t0) * 1000
print(json.dumps({"ms": ms, "wall_ms": wall, "errors": errors, "first_error": first_error,
                  "version": "python %s, requests %s, urllib3 %s" % (sys.version.split()[0], requests.__version__, urllib3.__version__)}))
