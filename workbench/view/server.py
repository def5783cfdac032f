"""`workbench view`: a small web server on 127.0.0.1 over a directory of runs (standard library only).

Routes (GET)::

    /                                   the run list (polls /fragment/runs while open)
    /api/runs                           the same as JSON
    /run/RUN/report                     the run's report (RUN/report.html), when `workbench report` wrote one
    /run/RUN/compare?a=T&b=T            two trials of one task side by side (or ?task=&config=: a grid cell)
    /run/RUN/trial/T                    a trial's page
    /api/run/RUN/trial/T                its summary and leaves as JSON
    /run/RUN/trial/T/fragment/summary   its summary (polled while the trial runs)
    /run/RUN/trial/T/preview?path=P     one evidence file's preview, read in the confined reader
    /run/RUN/trial/T/file/PATH          a file of the trial as text (images as images)
    /run/RUN/trial/T/notebook/NAME      an executed stage notebook rendered to HTML
    /run/RUN/trial/T/terminal/output?from=N   a person's session, attached from the browser: output from
                                        offset N (long poll; :mod:`.terminal`)
    /discovery/RUN                      a discovery run: sessions, the score over time, the ranked history
    /discovery/RUN/fragment             the same, polled while the run goes on
    /static/view.css  /static/view.js   /static/xterm.js  /static/xterm.css  /static/terminal.js (a person's
                                        session played back: xterm.js, vendored, and the player)

Routes (POST, JSON body)::

    /discovery/RUN/message              {"session": ID, "text": ...}: a person's message to a running session
                                        (or the answer to the preparation's questions)
    /run/RUN/trial/T/terminal/keys      {"data": ...}: keys typed into a person's session from the browser

Runs and trials are found by name among what is on disk, never by joining a requested name to a path;
files are served only from inside the trial (:mod:`.files`). Pages may run only the view's own script
(Content-Security-Policy), and a request whose Host is not this loopback address is refused (a web
page elsewhere cannot reach the view by DNS rebinding).

**Only whoever holds the token is served.** The view shows leaf rationales that quote hidden targets and
evidence the scoring service withholds, and any process on the machine can reach 127.0.0.1 (a CLI agent on
host networking included). So every request needs the view's token, generated at start and printed in its
URL (``?token=``): the first page sets it as a cookie (HttpOnly, SameSite=Strict, so other sites' pages
never send it), and an ``Authorization: Bearer`` header works for scripts. A request from another origin
(its ``Origin`` header) is refused too. The one write, a message to a discovery session, also needs a JSON
body (a cross-site form cannot send one) of at most 16 KB.
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import threading
from functools import lru_cache
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from ..discovery.records import find_runs
from ..evidence import read_manifest
from . import compare, discovery, frame, pages, summary, terminal
from .files import Refused, contained, content_type

log = logging.getLogger(__name__)

PREVIEW_MEMORY_MB = 1024
APP_CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
           "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
FILE_CSP = "default-src 'none'; img-src 'self'; sandbox"
NOTEBOOK_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"
MAX_POST_BYTES = 16 * 1024
# a report runs its own (embedded) plotly script, in a sandbox of its own origin: it reaches nothing of the view's
REPORT_CSP = ("sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
              "img-src data:; font-src data:")


STATIC_DIR = Path(__file__).with_name("static")
# the files of static/ the view serves, by the one name each is asked for (nothing else of the folder is reachable)
STATIC = {"xterm.js": "xterm/xterm.js", "xterm.css": "xterm/xterm.css", "terminal.js": "terminal.js"}


class NotFound(Exception):
    pass


@lru_cache(maxsize=32)
def _render_notebook(path: str, mtime_ns: int) -> str:
    """An executed stage notebook as offline HTML, code shown (cached until the file changes)."""
    from ..analysis.report import notebook_html

    return notebook_html(Path(path), Path(path).stem, code=True)


class View:
    """What the handler serves: the runs under ``root``, with links into the reviewer at ``review_url``."""

    def __init__(self, root: Path, review_url: str | None = None, poll_seconds: float = 3.0):
        self.root, self.review_url, self.poll_seconds = Path(root).resolve(), review_url, poll_seconds
        self._bridges: dict[Path, terminal.Bridge] = {}  # a person's session, attached from a browser
        self._bridges_lock = threading.Lock()

    def bridge(self, tp) -> terminal.Bridge:
        """The browser's attachment to the trial's person's session (made on first use)."""
        with self._bridges_lock:
            b = self._bridges.get(tp.root)
            if b is None or not b.open:
                if not tp.terminal_door.is_file():
                    raise NotFound(f"no person's session waits or runs in {tp.root.name}")
                try:
                    b = self._bridges[tp.root] = terminal.Bridge(tp.terminal_door)
                except (OSError, ValueError, KeyError) as exc:
                    raise NotFound(f"the session of {tp.root.name} cannot be attached: {exc}") from None
            return b

    def trial(self, run_name: str, tid: str):
        run = summary.find_run(self.root, run_name)
        tp = summary.find_trial(run, tid) if run else None
        if tp is None:
            raise NotFound(f"no trial {tid!r} in run {run_name!r}")
        return run, tp

    def preview(self, run, tp, rel: str) -> str:
        from ..reader.client import Reader

        hashes = read_manifest(tp.evidence)
        if rel not in hashes:
            raise NotFound(f"{rel!r} is not a file of the evidence manifest")
        try:
            prov = json.loads(tp.provenance.read_text()) if tp.provenance.is_file() else {}
        except ValueError:
            prov = {}
        # the preview parses what the submission wrote: in the confined reader, never in the view
        return Reader(tp.evidence, prov, memory_mb=PREVIEW_MEMORY_MB).previews([rel], hashes)

    def get(self, path: str, query: dict[str, list[str]]) -> tuple[int, str, bytes, str]:
        """(status, content type, body, CSP) for a GET of ``path``."""
        parts = [unquote(p) for p in path.split("/")[1:]]
        if parts in ([""], []):
            return self._html(pages.runs_page(summary.runs(self.root), self.root, self.poll_seconds))
        if parts == ["fragment", "runs"]:
            return self._html(pages.runs_fragment(summary.runs(self.root), self.root))
        if parts == ["api", "runs"]:
            return self._json(summary.runs(self.root))
        if parts[0] == "discovery" and len(parts) in (2, 3):
            out = find_runs(self.root).get(parts[1])
            if out is None or (len(parts) == 3 and parts[2] != "fragment"):
                raise NotFound(path)
            return self._html(discovery.fragment(out) if len(parts) == 3
                              else discovery.discovery_page(parts[1], out, self.poll_seconds))
        if parts[0] == "static" and len(parts) == 2 and (parts[1] in STATIC or parts[1] in ("view.css", "view.js")):
            css = parts[1].endswith(".css")
            data = ((STATIC_DIR / STATIC[parts[1]]).read_bytes() if parts[1] in STATIC
                    else (frame.CSS if css else frame.JS).encode())
            return 200, "text/css; charset=utf-8" if css else "text/javascript; charset=utf-8", data, APP_CSP
        if parts[0] == "run" and len(parts) == 3 and parts[2] == "report":
            run = summary.find_run(self.root, parts[1])
            if run is None or not (run.root / pages.REPORT).is_file():
                raise NotFound(path)
            with open(contained(run.root, [pages.REPORT]), "rb") as fh:
                return 200, "text/html; charset=utf-8", fh.read(), REPORT_CSP
        if parts[0] == "run" and len(parts) == 3 and parts[2] == "compare":
            run = summary.find_run(self.root, parts[1])
            a, b, candidates = compare.pick(run, query) if run else (None, None, [])
            if a is None or b is None:
                raise NotFound(f"nothing to compare in run {parts[1]!r} for {query}")
            return self._html(compare.compare_page(run, a, b, candidates, self.poll_seconds))
        api = parts[0] == "api"
        rest = parts[1:] if api else parts
        if len(rest) < 4 or rest[0] != "run" or rest[2] != "trial":
            raise NotFound(path)
        run, tp = self.trial(rest[1], rest[3])
        sub = rest[4:]
        if api and not sub:
            scores = summary.shown_scores(tp)
            return self._json({**summary.trial_summary(run, tp.root.name),
                               "leaves": [lf.model_dump() for lf in scores.leaves] if scores else []})
        if api:
            raise NotFound(path)
        if not sub:
            return self._html(pages.trial_page(run, tp, review_url=self.review_url, poll_seconds=self.poll_seconds))
        if sub == ["fragment", "summary"]:
            return self._html(pages.summary_fragment(run, tp))
        if sub == ["preview"]:
            return self._html(self.preview(run, tp, (query.get("path") or [""])[0]))
        if sub == ["terminal", "output"]:
            try:
                offset = int((query.get("from") or ["0"])[0])
            except ValueError:
                offset = 0
            return self._json(self.bridge(tp).output(offset))
        if sub[0] == "file":
            file = contained(tp.root, sub[1:])
            with open(file, "rb") as fh:
                return 200, content_type(file), fh.read(), FILE_CSP
        if sub[0] == "notebook" and len(sub) == 2 and sub[1].endswith(".ipynb"):
            nb = contained(tp.notebooks, sub[1:])
            return 200, "text/html; charset=utf-8", _render_notebook(str(nb), nb.stat().st_mtime_ns).encode(), \
                NOTEBOOK_CSP
        raise NotFound(path)

    def post(self, path: str, body: dict) -> tuple[int, str, bytes, str]:
        """(status, content type, body, CSP) for a POST of ``path`` with a JSON ``body``."""
        from ..discovery import send_message
        from ..errors import WorkbenchError

        parts = [unquote(p) for p in path.split("/")[1:]]
        if len(parts) == 6 and parts[0] == "run" and parts[2] == "trial" and parts[4:] == ["terminal", "keys"]:
            _, tp = self.trial(parts[1], parts[3])
            text = body.get("data")
            if not isinstance(text, str):
                return 400, "application/json", json.dumps({"error": "keys are a string"}).encode(), APP_CSP
            return self._json({"typed": self.bridge(tp).keys(text)})
        if len(parts) != 3 or parts[0] != "discovery" or parts[2] != "message":
            raise NotFound(path)
        out = find_runs(self.root).get(parts[1])
        if out is None:
            raise NotFound(path)
        session, text = body.get("session"), body.get("text")
        if not isinstance(session, str) or not isinstance(text, str) or not text.strip():
            return 400, "application/json", json.dumps({"error": "a session id and a text are needed"}).encode(), \
                APP_CSP
        try:
            sent = send_message(out, session, text)
        except WorkbenchError as exc:
            return 400, "application/json", json.dumps({"error": str(exc)}).encode(), APP_CSP
        what = "answer" if sent.name == "answer.txt" else "message"
        return self._json({"sent": what, "session": session})

    @staticmethod
    def _html(text: str) -> tuple[int, str, bytes, str]:
        return 200, "text/html; charset=utf-8", text.encode(), APP_CSP

    @staticmethod
    def _json(data) -> tuple[int, str, bytes, str]:
        return 200, "application/json", json.dumps(data, default=str).encode(), APP_CSP


def _handler(view: View, hosts: set[str], token: str, cookie: str):
    class Handler(BaseHTTPRequestHandler):
        server_version = "workbench-view"

        def _authorized(self, query: dict[str, list[str]]) -> bool:
            offered = [*query.get("token", [])]
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Bearer "):
                offered.append(auth[7:].strip())
            jar = SimpleCookie()
            try:
                jar.load(self.headers.get("Cookie", ""))
            except Exception:
                pass
            if cookie in jar:
                offered.append(jar[cookie].value)
            return any(hmac.compare_digest(t.encode(), token.encode()) for t in offered)

        def _refused(self, query: dict[str, list[str]]) -> bytes | None:
            """Why a request is refused (its Host, its Origin, no token), or None."""
            if self.headers.get("Host", "") not in hosts:
                return b"refused: unexpected Host header"
            origin = self.headers.get("Origin")
            if origin is not None and origin.removeprefix("http://") not in hosts:
                return b"refused: a request from another origin"
            if not self._authorized(query):
                return b"refused: open the URL `workbench view` printed (it holds the view's token)"
            return None

        def _answer(self, call) -> None:
            try:
                self._send(*call())
            except Refused as exc:
                self._send(403, "text/plain; charset=utf-8", f"refused: {exc}".encode(), FILE_CSP)
            except (NotFound, FileNotFoundError, NotADirectoryError) as exc:
                self._send(404, "text/plain; charset=utf-8", f"not found: {exc}".encode(), FILE_CSP)
            except Exception as exc:  # a bug or a broken run: say it, keep serving
                log.exception("view: %s failed", self.path)
                self._send(500, "text/plain; charset=utf-8", f"error: {type(exc).__name__}: {exc}".encode(),
                           FILE_CSP)

        def do_GET(self):  # noqa: N802 (the standard library's name)
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            refused = self._refused(query)
            if refused:
                return self._send(403, "text/plain; charset=utf-8", refused, FILE_CSP)
            self._set_cookie = query.get("token") is not None
            self._answer(lambda: view.get(url.path, query))

        def do_POST(self):  # noqa: N802
            url = urlsplit(self.path)
            refused = self._refused(parse_qs(url.query))
            if refused:
                return self._send(403, "text/plain; charset=utf-8", refused, FILE_CSP)
            size = int(self.headers.get("Content-Length") or 0)
            if not self.headers.get("Content-Type", "").startswith("application/json") or size > MAX_POST_BYTES:
                return self._send(415 if size <= MAX_POST_BYTES else 413, "text/plain; charset=utf-8",
                                  b"refused: a JSON body of at most 16 KB", FILE_CSP)
            try:
                body = json.loads(self.rfile.read(size) or b"{}")
            except ValueError:
                body = None
            if not isinstance(body, dict):
                return self._send(400, "text/plain; charset=utf-8", b"refused: not a JSON object", FILE_CSP)
            self._answer(lambda: view.post(url.path, body))

        def _send(self, status: int, ctype: str, body: bytes, csp: str) -> None:
            self.send_response(status)
            if getattr(self, "_set_cookie", False):
                self.send_header("Set-Cookie", f"{cookie}={token}; Path=/; HttpOnly; SameSite=Strict")
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", csp)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Referrer-Policy", "no-referrer")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *args):
            log.info("view: " + fmt, *args)

    return Handler


class ViewServer:
    """The view on 127.0.0.1:``port`` (0: any free port; :attr:`url` says which it bound, with the token
    every request needs; ``token`` None generates one)."""

    def __init__(self, root: Path | str, *, port: int = 0, review_url: str | None = None,
                 poll_seconds: float = 3.0, token: str | None = None):
        self.view = View(Path(root), review_url, poll_seconds)
        self.token = token or secrets.token_urlsafe(32)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self.view, set(), self.token, ""))
        self.port = self.httpd.server_address[1]
        hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        self.httpd.RequestHandlerClass = _handler(self.view, hosts, self.token, f"workbench-view-{self.port}")
        self.httpd.daemon_threads = True

    @property
    def base(self) -> str:
        """The view's address, without its token."""
        return f"http://127.0.0.1:{self.port}/"

    @property
    def url(self) -> str:
        """The address to open: the first page sets the token as a cookie."""
        return f"{self.base}?token={self.token}"

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> threading.Thread:
        """Serve in a background thread (tests, notebooks); :meth:`stop` ends it."""
        t = threading.Thread(target=self.serve_forever, daemon=True, name="workbench-view")
        t.start()
        return t

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
