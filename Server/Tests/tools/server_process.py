"""Starting `mapcluster serve` for the checks in Tests/tools: one place for how a check waits for the server."""

import re
import subprocess
import sys
import threading
import time


def start(binary, *options, name="check"):
    """`mapcluster serve --port 0` with `options`, once it says it serves: the process and its port. Exits with the
    server's last words if it stops at start, or if it doesn't serve within 120 s."""
    process = subprocess.Popen([binary, "serve", "--port", "0", *options], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            print(f"{name}: the server stopped at start: " + process.stderr.read()[-2000:], file=sys.stderr)
            sys.exit(1)
        found = re.search(r"serving the map on http://[^:]+:(\d+)/", line)
        if found:
            # The pipes are drained from now on, so that a chatty server never blocks on a full one.
            threading.Thread(target=process.stdout.read, daemon=True).start()
            threading.Thread(target=process.stderr.read, daemon=True).start()
            return process, int(found.group(1))
    print(f"{name}: the server did not start within 120 s", file=sys.stderr)
    sys.exit(1)
