"""HTTP client of kiln serve over one or more servers."""

import json
import os
import threading
import time
import urllib.error
import urllib.request
import uuid


class KilnError(Exception):
    """The server refused the request (400, 401, 404, 413): the caller's mistake."""

    def __init__(self, status, message):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class InfrastructureError(Exception):
    """No server answered in time (down, overloaded past the timeout, 5xx): not the candidate's fault."""


def _read_token(token, token_file):
    if token:
        return token.strip()
    token_file = token_file or os.environ.get("KILN_SERVE_TOKEN_FILE")
    if token_file:
        with open(token_file, encoding="utf-8") as f:
            return f.read().strip()
    return os.environ.get("KILN_SERVE_TOKEN", "").strip() or None


class KilnClient:
    """urls: one URL, a list, or a comma-separated string (default $KILN_SERVE_URLS, else
    http://127.0.0.1:8080). timeout: seconds for a whole call (submission, retries, polling)."""

    def __init__(self, urls=None, token=None, token_file=None, timeout=600.0, poll_s=0.5):
        urls = urls or os.environ.get("KILN_SERVE_URLS") or "http://127.0.0.1:8080"
        if isinstance(urls, str):
            urls = [u.strip() for u in urls.split(",") if u.strip()]
        if not urls:
            raise ValueError("no kiln serve URL")
        self.urls = [u.rstrip("/") for u in urls]
        self.token = _read_token(token, token_file)
        self.timeout = float(timeout)
        self.poll_s = poll_s
        self._lock = threading.Lock()
        self._outstanding = {u: 0 for u in self.urls}
        self._next = 0

    # -- transport ---------------------------------------------------------------------------------
    def _pick(self, avoid=()):
        with self._lock:
            order = self.urls[self._next:] + self.urls[: self._next]
            self._next = (self._next + 1) % len(self.urls)
            live = [u for u in order if u not in avoid] or order
            url = min(live, key=lambda u: self._outstanding[u])
            self._outstanding[url] += 1
            return url

    def _release(self, url):
        with self._lock:
            self._outstanding[url] -= 1

    def outstanding(self):
        with self._lock:
            return dict(self._outstanding)

    def _call(self, url, method, path, body=None, headers=None, timeout=30.0):
        data = None if body is None else json.dumps(body).encode()
        h = {"Content-Type": "application/json"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        h.update(headers or {})
        req = urllib.request.Request(url + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=max(0.1, timeout)) as r:
                return r.status, json.loads(r.read() or b"null"), dict(r.headers)
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                payload = json.loads(raw or b"null")
            except ValueError:
                payload = {"error": raw.decode(errors="replace")}
            return e.code, payload, dict(e.headers or {})

    # -- API ---------------------------------------------------------------------------------------
    def rewards(self, items, reward=None, advantages=False, mode=None, idempotency_key=None, timeout=None):
        """Rewards for `items` ({task, response | code, id?, group?, mode?, reward?}); returns the
        server's job response (status done). Raises KilnError for a refused request and
        InfrastructureError when no server answers within the timeout."""
        deadline = time.monotonic() + (self.timeout if timeout is None else float(timeout))
        body = {"items": list(items), "advantages": bool(advantages)}
        if reward is not None:
            body["reward"] = reward
        if mode is not None:
            body["mode"] = mode
        key = idempotency_key or uuid.uuid4().hex
        failed = set()
        last = "no attempt"
        while time.monotonic() < deadline:
            url = self._pick(avoid=failed)
            try:
                left = deadline - time.monotonic()
                body["deadline_s"] = max(1.0, left - 1.0)
                status, payload, headers = self._call(url, "POST", "/v1/rewards", body,
                                                      {"Idempotency-Key": key}, timeout=left)
                if status == 200:
                    return payload
                if status == 202:
                    return self._poll(url, payload["job"], deadline)
                if status == 429:
                    last = f"{url}: queue full"
                    time.sleep(min(float(headers.get("Retry-After", 1)), max(0.0, deadline - time.monotonic())))
                    continue
                if status in (400, 401, 404, 413):
                    raise KilnError(status, (payload or {}).get("error", ""))
                last = f"{url}: HTTP {status}: {(payload or {}).get('error', '')}"
                failed.add(url)
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as e:
                last = f"{url}: {e}"
                failed.add(url)
                time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
            finally:
                self._release(url)
            if len(failed) == len(self.urls):
                failed.clear()  # every server failed once: try them all again until the deadline
        raise InfrastructureError(f"no kiln server answered in time ({last})")

    def _poll(self, url, job, deadline):
        while time.monotonic() < deadline:
            try:
                status, payload, _ = self._call(url, "GET", f"/v1/jobs/{job}",
                                                timeout=max(0.1, deadline - time.monotonic()))
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                status, payload = 0, None  # the server restarts: its journal keeps the job
            if status == 200 and payload and payload.get("status") == "done":
                return payload
            if status == 404:
                raise InfrastructureError(f"{url}: job {job} is unknown to the server")
            time.sleep(min(self.poll_s, max(0.0, deadline - time.monotonic())))
        raise InfrastructureError(f"{url}: job {job} not finished within the client's timeout")

    def job(self, job_id, url=None):
        status, payload, _ = self._call(url or self.urls[0], "GET", f"/v1/jobs/{job_id}")
        if status != 200:
            raise KilnError(status, (payload or {}).get("error", ""))
        return payload

    def health(self, url=None):
        return self._call(url or self.urls[0], "GET", "/v1/health")[1]
