"""JSON-lines server (stdin -> stdout), one-shot mode, and the isolation levels shared / fork / fresh.

The protocol stream is a private duplicate of the original fd 1; fd 1 itself is pointed at stderr at start,
so nothing printed by a library or a candidate can ever reach the protocol stream.
"""
from __future__ import annotations

import errno
import json
import os
import select
import signal
import sys
import time
import traceback

from . import PROTOCOL
from . import platform as plat

_proto_out = None


def log(*a):
    print("[kiln_worker]", *a, file=sys.stderr, flush=True)


def _json_default(o):
    try:
        import torch
        if isinstance(o, torch.Size):
            return list(o)
        if isinstance(o, torch.dtype):
            return str(o).replace("torch.", "")
    except Exception:
        pass
    if isinstance(o, (set, tuple)):
        return list(o)
    return repr(o)


def _sanitize(o):
    """NaN/Inf are not JSON: they become null."""
    if isinstance(o, float):
        return o if o == o and o not in (float("inf"), float("-inf")) else None
    if isinstance(o, dict):
        return {str(k): _sanitize(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_sanitize(v) for v in o]
    return o


def dumps(obj) -> str:
    return json.dumps(_sanitize(obj), default=_json_default, allow_nan=False)


def send(obj):
    _proto_out.write(dumps(obj) + "\n")
    _proto_out.flush()


# ----------------------------------------------------------------------------------------------
# ops
# ----------------------------------------------------------------------------------------------

class Worker:
    def __init__(self, isolation: str):
        self.isolation = isolation
        self._versions = None
        self._devices = None

    def versions(self):
        if self._versions is None:
            self._versions = plat.versions()
        return self._versions

    def hello(self, req):
        devices = self._devices
        if devices is None:
            if self.isolation == "fork" and not plat.INTERPRET:
                r = run_forked(lambda: {"devices": plat.device_info()}, 60)
                devices = r.get("devices", [])
            else:
                devices = plat.device_info()
            self._devices = devices
        return {"ok": True, "protocol": PROTOCOL, "interpreter": plat.INTERPRET, "isolation": self.isolation,
                "versions": self.versions(), "devices": devices, "pid": os.getpid()}

    def eval(self, req):
        timeout = float((req.get("limits") or {}).get("timeout_s") or 60)
        if self.isolation == "fork":
            resp = run_forked(lambda: eval_in_process(req, self), timeout + 2.0)
        else:
            resp = eval_in_process(req, self)
        return resp

    def device_peaks(self, req):
        from . import peaks
        if self.isolation == "fork" and not plat.INTERPRET:
            return run_forked(lambda: peaks.measure(req), 300)
        return peaks.measure(req)

    def handle(self, req):
        op = req.get("op")
        rid = req.get("id")
        try:
            if op == "hello":
                resp = self.hello(req)
            elif op == "eval":
                resp = self.eval(req)
            elif op == "device_peaks":
                resp = self.device_peaks(req)
            elif op == "shutdown":
                resp = {"ok": True}
            else:
                resp = {"ok": False, "error": f"unknown op {op!r}"}
        except Exception as e:  # a worker bug: report, keep serving
            resp = {"ok": False, "error": f"worker error: {type(e).__name__}: {e}",
                    "trace": traceback.format_exc()[-2000:]}
        resp = dict(resp)
        resp["id"] = rid
        return resp


def _child_pids() -> set:
    """Live child processes of this process (/proc/<pid>/task/*/children; else a scan of /proc/*/stat)."""
    me = os.getpid()
    out = set()
    try:
        for tid in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{tid}/children") as f:
                out.update(int(x) for x in f.read().split())
        return out
    except OSError:
        pass
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == me:   # fields: state, ppid, ...
                    out.add(int(name))
            except (OSError, IndexError, ValueError):
                pass
    return out


def _leftovers(threads_before, children_before) -> str:
    """What an evaluation left running in this process: Python threads and child processes that were not
    there before it ('' when none). Such a thread could rewrite memory or patch functions during the next
    evaluation; the worker exits after answering instead (shared/fresh isolation)."""
    import threading
    threads = [t for t in threading.enumerate() if t.is_alive() and t.ident not in threads_before]
    children = sorted(_child_pids() - children_before)
    what = []
    if threads:
        what.append(f"{len(threads)} thread(s) ({', '.join(t.name for t in threads[:3])})")
    if children:
        what.append(f"{len(children)} child process(es) ({', '.join(map(str, children[:3]))})")
    return " and ".join(what)


def _profiler():
    """A cProfile.Profile when KILN_WORKER_PROFILE names a folder (a developer's view of where an evaluation's
    time goes: docs/eval.md), else None."""
    if not os.environ.get("KILN_WORKER_PROFILE"):
        return None
    import cProfile
    return cProfile.Profile()


def _dump_profile(prof, req):
    """Writes the request's profile into $KILN_WORKER_PROFILE: <id>.pstats and <id>.txt (the 40 functions of most
    cumulative time, then the 25 of most own time). A failure to write is logged, never raised."""
    import io
    import pstats
    d = os.environ["KILN_WORKER_PROFILE"]
    name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(req.get("id") or "request"))[:80]
    name = f"{name}.{os.getpid()}.{int(time.time() * 1000) % 100000000}"
    try:
        os.makedirs(d, exist_ok=True)
        prof.dump_stats(os.path.join(d, name + ".pstats"))
        buf = io.StringIO()
        st = pstats.Stats(prof, stream=buf)
        st.sort_stats("cumulative").print_stats(40)
        st.sort_stats("tottime").print_stats(25)
        with open(os.path.join(d, name + ".txt"), "w") as f:
            f.write(buf.getvalue())
    except Exception as e:  # noqa: BLE001 - a developer's aid: the evaluation's result stands
        log(f"KILN_WORKER_PROFILE: could not write the profile into {d}: {e}")


def eval_in_process(req, worker) -> dict:
    import threading
    from . import guards
    from .evaluate import Evaluator
    guards.reset_flags()
    plat.LAUNCHES.reset()
    plat.LAUNCHES.kernels.clear()
    shared = worker.isolation != "fork"
    if shared:
        threads_before = {t.ident for t in threading.enumerate()}
        children_before = _child_pids()
    ev = Evaluator(req)
    prof = _profiler()
    try:
        if prof is not None:
            prof.enable()
        resp = ev.run()
    finally:
        if prof is not None:
            prof.disable()
            _dump_profile(prof, req)
        ev.release()
        if shared:
            n = guards.restore_pristine()
            if n:
                log(f"restored {n} attribute(s) a candidate had replaced")
    if shared:
        left = _leftovers(threads_before, children_before)
        if left:
            # the C++ runner replaces a worker whose response has restart_worker (docs/verdicts.md)
            log(f"the evaluation left {left} running; exiting after this response so the runner restarts "
                "the worker")
            resp["restart_worker"] = True
        elif ev.ran_legacy_scripts:
            # TritonBench's legacy check ran whole test scripts as __main__ in this process (the gold's without
            # the candidate guards): on an H100 the next request in the same worker read a dirty allocator
            # (illegal memory accesses, mismatches in modules that pass in a fresh worker), so it gets a fresh one
            log("the legacy stdout scripts ran in this process; exiting after this response so the runner "
                "restarts the worker")
            resp["restart_worker"] = True
    if resp.get("ok"):
        resp["clocks"] = getattr(ev, "clocks", None)
        resp["versions"] = worker.versions()
        if not plat.INTERPRET:
            try:
                import torch
                p = torch.cuda.get_device_properties(plat.DEVICE_INDEX)
                resp["device"] = {"index": plat.DEVICE_INDEX, "name": p.name,
                                  "uuid": ("GPU-" + str(p.uuid)) if getattr(p, "uuid", None) else None}
            except Exception:
                resp["device"] = None
            mem = plat.gpu_memory()
            if mem:  # the device's memory after this evaluation (kiln serve's /v1/metrics)
                resp["gpu_memory"] = dict(mem, uuid=(resp.get("device") or {}).get("uuid"))
        else:
            resp["device"] = {"index": 0, "name": "triton-interpreter (cpu)", "uuid": None}
        resp["mode"] = req.get("mode", "check")
    return resp


# ----------------------------------------------------------------------------------------------
# fork isolation
# ----------------------------------------------------------------------------------------------

def die_with_parent(parent: int):
    """PR_SET_PDEATHSIG: SIGKILL this process when its parent dies (a candidate's fork child with its zygote,
    which kiln's own PR_SET_PDEATHSIG kills with kiln, `kill -9` included). Linux; a no-op elsewhere."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the call
        os._exit(70)


def run_forked(fn, timeout_s: float) -> dict:
    """Runs fn() in a forked child in its own process group; returns its dict, or a crash/timeout verdict.

    The child answers over a private pipe as one length-prefixed frame carrying a random nonce; more than one
    frame, or a frame with another nonce, is `protocol_tamper`."""
    nonce = os.urandom(8).hex()
    import tempfile
    from . import capture
    out_file = tempfile.TemporaryFile(mode="w+b")
    r, w = os.pipe()
    t0 = time.monotonic()
    zygote = os.getpid()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(r)
            os.setpgid(0, 0)
            die_with_parent(zygote)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)          # the protocol input is not the candidate's to read
            os.close(devnull)
            if _proto_out is not None:
                try:
                    os.close(_proto_out.fileno())
                except OSError:
                    pass
            capture.CHILD_FILE[0] = out_file
            os.dup2(out_file.fileno(), 1)   # anything printed before the eval's own capture
            os.dup2(out_file.fileno(), 2)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            try:
                result = fn()
            except BaseException as e:  # noqa: BLE001
                result = {"ok": False, "error": f"worker error in child: {type(e).__name__}: {e}"}
            data = (nonce + dumps(result)).encode()
            payload = len(data).to_bytes(8, "little") + data
            view = memoryview(payload)
            while view:
                n = os.write(w, view)
                view = view[n:]
        except BaseException:  # noqa: BLE001
            code = 70
        finally:
            os._exit(code)
    # zygote
    os.close(w)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    buf = bytearray()
    deadline = t0 + timeout_s
    timed_out = False
    child_status = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        try:
            ready, _, _ = select.select([r], [], [], min(left, 0.5))
        except InterruptedError:
            continue
        if ready:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break  # EOF: child (and any descendant holding the pipe) closed it
            buf += chunk
        else:
            wp, st = os.waitpid(pid, os.WNOHANG)
            if wp == pid:
                child_status = st
                # drain whatever is left, briefly (a grandchild may still hold the pipe)
                end = time.monotonic() + 0.5
                while time.monotonic() < end:
                    ready, _, _ = select.select([r], [], [], 0.1)
                    if not ready:
                        break
                    chunk = os.read(r, 1 << 16)
                    if not chunk:
                        break
                    buf += chunk
                break
    os.close(r)
    _kill_group(pid)
    if child_status is None:
        try:
            _, child_status = os.waitpid(pid, 0)
        except ChildProcessError:
            child_status = 0
    elapsed = round(time.monotonic() - t0, 3)
    try:
        out_file.seek(0, os.SEEK_END)
        size = out_file.tell()
        out_file.seek(max(0, size - 2000))
        tail = out_file.read().decode("utf-8", "replace")
        out_file.close()
    except Exception:
        tail = ""
    if timed_out:
        return _verdict("timeout", "timeout", f"killed after {timeout_s:g} s (process group of pid {pid})", elapsed,
                        tail)
    frames = []
    b = bytes(buf)
    while len(b) >= 8:
        n = int.from_bytes(b[:8], "little")
        if n > len(b) - 8:
            break
        frames.append(b[8:8 + n])
        b = b[8 + n:]
    good = [f for f in frames if f.startswith(nonce.encode())]
    if len(frames) == 1 and len(good) == 1 and not b:
        try:
            return json.loads(good[0][len(nonce):].decode())
        except Exception:
            pass
    if frames or b:
        if good and len(frames) > 1 or (frames and not good):
            return _verdict("rejected", "protocol_tamper",
                            "the child wrote extra or forged data to the response pipe", elapsed, tail)
    # no response: the child died
    if os.WIFSIGNALED(child_status):
        sig = os.WTERMSIG(child_status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return _verdict("crash", "signal", f"the candidate's process died of {name}", elapsed, tail, signal=name)
    code = os.WEXITSTATUS(child_status) if os.WIFEXITED(child_status) else -1
    return _verdict("crash", "exit", f"the candidate's process exited with status {code} before answering",
                    elapsed, tail, exit_code=code)


def _verdict(verdict, code, message, elapsed, tail="", **extra):
    reason = {"code": code, "message": message, "severity": "error"}
    reason.update(extra)
    return {"ok": True, "verdict": verdict, "reasons": [reason], "message": message, "cases": [], "kernels": [],
            "aten_ops": {}, "runtime_checks": {}, "elapsed_s": elapsed, "stderr_tail": tail}


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError as e:
        if e.errno not in (errno.ESRCH, errno.EPERM):
            raise


# ----------------------------------------------------------------------------------------------
# entry points
# ----------------------------------------------------------------------------------------------

def _setup_streams():
    """Protocol on a private dup of fd 1; fd 1 -> stderr for everyone else."""
    global _proto_out
    fd = os.dup(1)
    os.set_inheritable(fd, False)
    _proto_out = os.fdopen(fd, "w", buffering=1, encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, 1)


def _prepare():
    import torch._dynamo  # noqa: F401  (its import rebinds torch.manual_seed & co: do it before any snapshot)
    plat.install_interpreter_shims()
    plat.install_launch_instrumentation()
    from . import guards
    guards.install_audit_hook()
    if not plat.INTERPRET:
        from . import timing  # noqa: F401  (captures pristine timer functions before any candidate)
    from . import compare, evaluate, tasks  # noqa: F401  (all worker modules loaded before the snapshot)
    guards.save_pristine()


def serve(isolation: str):
    _setup_streams()
    _prepare()
    worker = Worker(isolation)
    log(f"ready (isolation={isolation}, interpreter={plat.INTERPRET}, pid={os.getpid()})")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("a request is a JSON object")
        except Exception as e:
            send({"id": None, "ok": False, "error": f"bad request: {e}"})
            continue
        resp = worker.handle(req)
        send(resp)
        if req.get("op") == "shutdown":
            break
        if (resp.get("fatal") or resp.get("restart_worker")) and isolation != "fork":
            log("CUDA context is poisoned; exiting so the runner restarts the worker" if resp.get("fatal") else
                "exiting so the runner restarts the worker (see above)")
            _proto_out.flush()
            os._exit(3)
    _proto_out.flush()
    return 0


def one_shot(request_path: str, out_path: str | None, isolation: str):
    _setup_streams()
    _prepare()
    with open(request_path) as f:
        req = json.load(f)
    worker = Worker(isolation)
    resp = worker.handle(req)
    text = dumps(resp)
    if out_path:
        with open(out_path, "w") as f:
            f.write(text + "\n")
    else:
        _proto_out.write(text + "\n")
        _proto_out.flush()
    return 0
