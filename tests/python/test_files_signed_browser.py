"""Signed file URLs in a real browser (issue #40): headless Chromium, on a
page from another origin, shows a private image and its thumbnail with
`<img src>` (which sends no Authorization header) from URLs that
`POST /files/:id/url` made; the plain URL, a changed signature and another
size do not load."""

import http.server
import threading

import pytest

from roost_harness import FAST_HASHING, Roostd, free_port, png
from console_support import browser, console_errors  # noqa: F401 (fixture); skips without chromium

PAGE = b"<!doctype html><html><head><meta charset=utf-8><title>gallery</title></head><body>a gallery</body></html>"


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
def page():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), PageHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def roost(tmp_path_factory):
    cfg = FAST_HASHING + "default_permission: shared\nfiles_permission: private\nthumbnail_sizes: [32]\n"
    with Roostd(tmp_path_factory.mktemp("signed-browser"), cfg).start() as d:
        yield d


# Loads each URL in an <img>; hands back [naturalWidth, naturalHeight] or "error" for each.
LOAD = """
const done = arguments[arguments.length - 1];
Promise.all(arguments[0].map(src => new Promise(resolve => {
  const img = document.createElement('img');
  img.onload = () => resolve([img.naturalWidth, img.naturalHeight]);
  img.onerror = () => resolve('error');
  img.src = src;
  document.body.appendChild(img);
}))).then(done);
"""


def test_an_img_tag_shows_a_private_image_by_signed_url(browser, roost, page):  # noqa: F811
    _, token = roost.new_user("painter")
    r = roost.call("POST", "/files", token=token, raw_body=png(64, 48, 5), headers={"Content-Type": "image/png"})
    assert r.status == 201, r
    file_id = r.body["_id"]
    original = roost.call("POST", f"/files/{file_id}/url", token=token).body["url"]
    thumb = roost.call("POST", f"/files/{file_id}/url", {"thumbnail": True}, token=token).body["url"]
    sig = original.split("sig=")[1]
    tampered = original.replace("sig=" + sig, "sig=" + ("B" if sig[0] == "A" else "A") + sig[1:])
    browser.get(page + "/gallery.html")
    urls = [original, thumb, f"/files/{file_id}", tampered, thumb.replace("size=32", "size=31")]
    out = browser.execute_async_script(LOAD, [roost.base + u for u in urls])
    assert out[0] == [64, 48], out          # the original, whole
    assert out[1] == [32, 24], out          # the signed thumbnail size
    assert out[2:] == ["error"] * 3, out    # unsigned, changed, another size
    assert console_errors(browser, expected_statuses=(401, 403, 404)) == []
