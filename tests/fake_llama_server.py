#!/usr/bin/env python3
"""A FAKE llama-server (no model): takes llama-server's flags, binds --port (0: any), prints
llama.cpp's "listening on" line, answers /health (503 for LOAD_S seconds, then 200) and
/v1/chat/completions with a fixed JSON answer. For tests of process handling only.

FAKE_LLAMA_MODE=crash exits 1 at once; FAKE_LLAMA_ARGS=FILE writes the command line there.
"""

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

if os.environ.get("FAKE_LLAMA_MODE") == "crash":
    print("error: illegal instruction (fake)", file=sys.stderr)
    sys.exit(1)
if os.environ.get("FAKE_LLAMA_ARGS"):
    with open(os.environ["FAKE_LLAMA_ARGS"], "w") as f:
        json.dump(sys.argv[1:], f)
argv = sys.argv[1:]
port = int(argv[argv.index("--port") + 1]) if "--port" in argv else 8080
started = time.monotonic()
load_s = float(os.environ.get("FAKE_LLAMA_LOAD_S", "0.3"))


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            ready = time.monotonic() - started >= load_s
            self._send(200 if ready else 503, {"status": "ok" if ready else "loading model"})
        else:
            self._send(404, {})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        json.loads(self.rfile.read(length) or b"{}")
        message = {"role": "assistant", "content": '{"answer": "fake"}'}
        self._send(
            200,
            {
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                "timings": {
                    "prompt_n": 10,
                    "prompt_ms": 100.0,
                    "predicted_n": 5,
                    "predicted_ms": 50.0,
                    "cache_n": 0,
                },
            },
        )


server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
print(f"main: server is listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
