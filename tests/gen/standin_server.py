#!/usr/bin/env python3
"""A scripted stand-in for an OpenAI-compatible chat server (tests of kiln generate and optimize --llm).

usage: standin_server.py SCRIPT.json PORT_FILE LOG.jsonl [PORT [CERT.pem]]

Listens on 127.0.0.1 (PORT, else a free port (0); written to PORT_FILE once listening; with CERT.pem, a
certificate and its key, over TLS) and answers each
POST .../chat/completions with the next step of the script:

  {"steps": [{"content": "text"}                      a completion with this text
             {"file": "answers/x.py", "plan": "..."}  the file (relative to the script) in a ```python block
             {"status": 429, "headers": {"Retry-After": "1"}, "body": "..."}   an error reply
             {"delay_s": 30, ...}                     wait this long first (a hang, when longer than the
                                                      client's timeout)
            ],
   "idle_exit_s": 20, "max_lifetime_s": 300}

Every request body is appended to LOG.jsonl with the step index that answered it. Past the script's end
it answers 500. It stops by itself: `idle_exit_s` after the last request (or after starting, when none
comes) or `max_lifetime_s` after starting. Stdlib only.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    script_path, port_file, log_path = sys.argv[1:4]
    with open(script_path) as f:
        script = json.load(f)
    base = os.path.dirname(os.path.abspath(script_path))
    steps = script.get("steps", [])
    lock = threading.Lock()
    state = {"next": 0, "last": time.monotonic()}

    def completion(step):
        if "file" in step:
            with open(os.path.join(base, step["file"])) as f:
                code = f.read()
            if not code.endswith("\n"):
                code += "\n"
            text = step.get("plan", "Plan: one program per block of elements.") + "\n\n```python\n" + code + "```\n"
        else:
            text = step.get("content", "")
        return {
            "id": "standin",
            "object": "chat.completion",
            "model": "standin",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": step.get("prompt_tokens", 100), "completion_tokens": step.get("completion_tokens", 50)},
        }

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                index = state["next"]
                state["next"] += 1
                state["last"] = time.monotonic()
                with open(log_path, "a") as log:
                    try:
                        req = json.loads(body)
                    except ValueError:
                        req = {"unparsed": body.decode("utf-8", "replace")}
                    log.write(json.dumps({"step": index, "path": self.path,
                                          "auth": self.headers.get("Authorization"), "request": req}) + "\n")
            step = steps[index] if index < len(steps) else {"status": 500, "body": "the script has no more steps"}
            if step.get("delay_s"):
                time.sleep(step["delay_s"])
            status = step.get("status", 200)
            payload = (json.dumps(completion(step)) if status == 200 else step.get("body", "error")).encode()
            try:
                self.send_response(status)
                for k, v in step.get("headers", {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up (a hang step)

    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[4]) if len(sys.argv) > 4 else 0), Handler)
    server.daemon_threads = True
    if len(sys.argv) > 5:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[5])
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    started = time.monotonic()
    idle, lifetime = script.get("idle_exit_s", 20), script.get("max_lifetime_s", 300)
    while time.monotonic() - started < lifetime:
        with lock:
            if time.monotonic() - state["last"] > idle:
                break
        time.sleep(0.2)
    server.shutdown()


if __name__ == "__main__":
    main()
