"""The admin console's files (Sources/Console/Web) are compiled into roostd
by the EmbedFiles build plugin: the daemon serves each one byte for byte as
it is in the repository, under the version in the page's asset path, with
the cache and security headers of today; the scripts parse as ES modules."""

import pathlib
import shutil
import subprocess

import pytest

from roost_harness import running_roostd

WEB = pathlib.Path(__file__).resolve().parent / ".." / ".." / "Sources" / "Console" / "Web"
FILES = sorted(p.name for p in WEB.iterdir() if not p.name.startswith("."))
TYPES = {"js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8", "svg": "image/svg+xml"}
POLICY_PARTS = ("default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'")


@pytest.fixture(scope="module")
def daemon():
    with running_roostd("default_permission: shared\n") as d:
        yield d


@pytest.fixture(scope="module")
def asset_base(daemon):
    page = daemon.call("GET", "/_/")
    base = page.raw.decode().split('src="')[1].split('/app.js"')[0]
    assert base.startswith("/_/assets/") and len(base.split("/")[-1]) == 16, base
    return base


def secured(resp):
    policy = resp.headers["content-security-policy"]
    return (all(part in policy for part in POLICY_PARTS) and "unsafe-inline" not in policy
            and resp.headers["x-content-type-options"] == "nosniff" and resp.headers["x-frame-options"] == "DENY")


def test_the_web_folder_holds_the_page_its_scripts_style_and_icon():
    assert {"index.html", "app.js", "api.js", "dom.js", "style.css", "icon.svg"} <= set(FILES)
    assert len([f for f in FILES if f.startswith("page-")]) >= 9


@pytest.mark.parametrize("name", [f for f in FILES if f != "index.html"])
def test_every_file_is_served_as_it_is_in_the_repository(daemon, asset_base, name):
    for method in ("GET", "HEAD"):
        r = daemon.call(method, f"{asset_base}/{name}")
        assert r.status == 200, (method, name, r)
        assert r.headers["content-type"] == TYPES[name.rsplit(".", 1)[1]]
        assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert r.headers["etag"] == '"' + asset_base.split("/")[-1] + '"'
        assert secured(r)
    assert daemon.call("GET", f"{asset_base}/{name}").raw == (WEB / name).read_bytes()


def test_the_page_is_index_html_with_the_asset_path_filled_in(daemon, asset_base):
    for path in ("/_/", "/_/index.html"):
        r = daemon.call("GET", path)
        assert r.status == 200 and r.headers["cache-control"] == "no-cache" and secured(r)
        assert r.headers["content-type"] == "text/html; charset=utf-8"
        assert r.raw == (WEB / "index.html").read_bytes().replace(b"{{ASSETS}}", asset_base.encode())
        assert b"{{ASSETS}}" not in r.raw and f'src="{asset_base}/app.js"'.encode() in r.raw


@pytest.mark.parametrize("path", ["/_/assets/0000000000000000/app.js", "/_/assets/{version}/index.html",
                                  "/_/assets/{version}/missing.js", "/_/assets/{version}/.hidden.js", "/_/Web/app.js"])
def test_what_is_not_a_file_of_this_build_is_missing(daemon, asset_base, path):
    r = daemon.call("GET", path.format(version=asset_base.split("/")[-1]))
    assert r.status == 404 and r.body["error"] and secured(r)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node for a syntax check")
@pytest.mark.parametrize("name", [f for f in FILES if f.endswith(".js")])
def test_every_script_parses_as_a_module(tmp_path, name):
    module = tmp_path / (name[:-3] + ".mjs")  # .mjs: node parses it as an ES module
    module.write_bytes((WEB / name).read_bytes())
    check = subprocess.run(["node", "--check", str(module)], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node for a syntax check")
def test_the_syntax_check_catches_a_broken_script(tmp_path):
    broken = tmp_path / "broken.mjs"
    broken.write_text((WEB / "chart.js").read_text().replace("update(values) {", "update(values) {{", 1))
    check = subprocess.run(["node", "--check", str(broken)], capture_output=True, text=True, timeout=30)
    assert check.returncode != 0 and "SyntaxError" in check.stderr
