"""CORS in a real browser (issue #41): headless Chromium loads a page from a
second local HTTP server (another port, so another origin) whose script
signs up, writes with `If-Match`, reads exposed headers, uploads a file and
follows a live stream with `EventSource`, all against roostd. A page on an
origin roostd does not list is refused by the browser."""

import http.server
import threading

import pytest

from roost_harness import FAST_HASHING, Roostd, free_port
from console_support import browser, console_errors  # noqa: F401 (fixture); skips without chromium

PAGE = b"<!doctype html><html><head><meta charset=utf-8><title>web app</title></head><body>a web app</body></html>"


class PageHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def pages():
    """Two page servers: one on an origin roostd allows, one on an origin it does not."""
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), PageHandler) for _ in range(2)]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    try:
        yield [f"http://127.0.0.1:{s.server_address[1]}" for s in servers]
    finally:
        for s in servers:
            s.shutdown()
            s.server_close()


@pytest.fixture(scope="module")
def roost(tmp_path_factory, pages):
    cfg = FAST_HASHING + f'default_permission: shared\nfiles_permission: shared\ncors:\n  origins: ["{pages[0]}"]\n'
    with Roostd(tmp_path_factory.mktemp("cors-browser"), cfg).start() as d:
        yield d


# Runs in the page: every step's outcome goes into `out`, handed back to Selenium.
TOUR = """
const [base, done] = [arguments[0], arguments[arguments.length - 1]];
const out = {};
(async () => {
  const json = {'Content-Type': 'application/json'};
  let r = await fetch(base + '/users', {method: 'POST', headers: json,
                                        body: JSON.stringify({username: 'web' + Date.now(), password: 'a long enough password'})});
  out.signup = r.status;
  const {token, user} = await r.json();
  const auth = {...json, 'Authorization': 'Bearer ' + token, 'X-Request-Id': 'from-the-browser-1'};
  r = await fetch(base + '/notes', {method: 'POST', headers: auth, body: JSON.stringify({text: 'hello'})});
  out.create = r.status;
  out.requestId = r.headers.get('X-Request-Id');
  const note = await r.json();
  r = await fetch(base + '/notes/' + note._id, {headers: auth});
  out.etag = r.headers.get('ETag');
  r = await fetch(base + '/notes/' + note._id, {method: 'PATCH', headers: {...auth, 'If-Match': out.etag},
                                                body: JSON.stringify({text: 'edited'})});
  out.patch = r.status;
  r = await fetch(base + '/notes/' + note._id, {method: 'PATCH', headers: {...auth, 'If-Match': out.etag},
                                                body: JSON.stringify({text: 'stale'})});
  out.stalePatch = r.status;
  out.staleError = (await r.json()).error;
  r = await fetch(base + '/notes?limit=1', {headers: auth});
  out.next = r.headers.get('X-Roost-Next');
  r = await fetch(base + '/notes', {headers: {'Authorization': 'Bearer wrong-token-wrong-token-wrong'}});
  out.unauthorized = r.status;
  const png = Uint8Array.from(atob(arguments[1]), c => c.charCodeAt(0));
  r = await fetch(base + '/files', {method: 'POST', headers: {'Authorization': 'Bearer ' + token, 'Content-Type': 'image/png'},
                                    body: png});
  out.upload = r.status;
  const file = await r.json();
  r = await fetch(base + '/files/' + file._id, {headers: {'Authorization': 'Bearer ' + token}});
  out.download = r.status;
  out.downloadBytes = (await r.arrayBuffer()).byteLength;
  // EventSource cannot send headers: the token goes in access_token.
  const events = new EventSource(base + '/notes/_live?access_token=' + encodeURIComponent(token));
  const got = new Promise((resolve, reject) => {
    events.addEventListener('create', e => resolve([JSON.parse(e.data), e.lastEventId]));
    setTimeout(() => reject(new Error('no live event within 8 s')), 8000);
  });
  await new Promise(resolve => events.addEventListener('open', resolve));
  await fetch(base + '/notes', {method: 'POST', headers: auth, body: JSON.stringify({text: 'live'})});
  const [event, lastEventId] = await got;
  out.liveText = event.entity.text;
  out.liveLastEventId = lastEventId;
  events.close();
  return out;
})().then(done, e => done({error: String(e), partial: out}));
"""

REFUSED = """
const [base, done] = [arguments[0], arguments[arguments.length - 1]];
fetch(base + '/notes', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{}'})
  .then(r => done('answered ' + r.status), e => done('refused: ' + e.name));
"""


def test_a_page_on_an_allowed_origin_uses_the_api(browser, roost, pages):  # noqa: F811
    import base64
    from roost_harness import png
    browser.get(pages[0] + "/app.html")
    out = browser.execute_async_script(TOUR, roost.base, base64.b64encode(png(32, 24, 3)).decode())
    assert "error" not in out, out
    assert out["signup"] == 201 and out["create"] == 201
    assert out["requestId"] == "from-the-browser-1"          # an exposed header the page can read
    assert out["etag"] and out["etag"].startswith('"')      # ETag exposed, then sent back as If-Match
    assert out["patch"] == 200
    assert out["stalePatch"] == 412 and out["staleError"] == "PreconditionFailed"
    assert out["next"]                                      # the next page's link, exposed
    assert out["unauthorized"] == 401                       # an error's body reaches the page too
    assert out["upload"] == 201 and out["download"] == 200 and out["downloadBytes"] > 0
    assert out["liveText"] == "live" and out["liveLastEventId"]
    assert console_errors(browser, expected_statuses=(401, 412)) == []


def test_a_page_on_another_origin_is_refused_by_the_browser(browser, roost, pages):  # noqa: F811
    browser.get(pages[1] + "/app.html")
    assert browser.execute_async_script(REFUSED, roost.base) == "refused: TypeError"
    logs = " ".join(e["message"] for e in browser.get_log("browser"))
    assert "CORS" in logs or "Access-Control" in logs
