// The console's style.css: the text between the #""" lines is the file, served as is.
extension ConsoleAssets {
    static let styleCSS = #"""
:root {
  --bg: #f6f7f9; --panel: #fff; --ink: #1d2430; --muted: #5b6473; --line: #d8dde5;
  --accent: #1f4e79; --accent-ink: #fff; --danger: #a61b1b; --ok: #1d6b35; --warn: #8a5a00;
  --focus: #f5a623;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  font-size: 15px; color: var(--ink); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
.loading { padding: 2rem; color: var(--muted); }
.hidden { display: none !important; }
.muted { color: var(--muted); }
.mono, code, pre, textarea.json { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: 13px; }

/* Sign-in */
.signin { max-width: 24rem; margin: 12vh auto; background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 2rem; }
.signin label { display: block; margin-bottom: .4rem; font-weight: 600; }
.signin input { width: 100%; margin-bottom: 1rem; }

/* Shell */
.shell { display: grid; grid-template-columns: 13rem 1fr; min-height: 100vh; }
.sidebar { background: #15283d; color: #dfe7f1; padding: 1rem .75rem; display: flex; flex-direction: column; gap: 1rem; }
.brand { display: flex; align-items: center; gap: .5rem; font-weight: 700; font-size: 1.1rem; color: #fff; }
.brand img { width: 26px; height: 26px; }
.nav { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 2px; }
.nav a { display: block; padding: .5rem .75rem; color: #dfe7f1; text-decoration: none; border-radius: 6px; }
.nav a:hover { background: #223a55; }
.nav a[aria-current="page"] { background: #2d5a88; color: #fff; font-weight: 600; }
.sidebar .signout { margin-top: auto; background: transparent; color: #dfe7f1; border-color: #3b5878; }
main { padding: 1.25rem 1.5rem; min-width: 0; }
main:focus { outline: none; }

/* Controls */
button, .button, input, select, textarea {
  font: inherit; color: inherit; border: 1px solid var(--line); border-radius: 6px; padding: .4rem .65rem; background: #fff;
}
button, .button { cursor: pointer; background: #eef1f5; }
button.primary { background: var(--accent); color: var(--accent-ink); border-color: var(--accent); }
button.danger { background: #fff; color: var(--danger); border-color: #e3b4b4; }
button:disabled { opacity: .5; cursor: default; }
button.link { background: none; border: none; padding: 0; color: var(--accent); text-decoration: underline; }
.toolbar { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin-bottom: .75rem; }
.field { display: flex; flex-direction: column; gap: .2rem; }
.field label, .field .label { font-size: .8rem; font-weight: 600; color: var(--muted); }
.field.grow { flex: 1 1 18rem; }
.field.grow input { width: 100%; }
.alert { padding: .5rem .75rem; border-radius: 6px; margin: .5rem 0; }
.alert:empty { display: none; }
.alert.error { background: #fbeaea; color: var(--danger); border: 1px solid #efc2c2; }
.alert.ok { background: #e8f5ec; color: var(--ok); border: 1px solid #b9dfc4; }
.alert.warn { background: #fff5e0; color: var(--warn); border: 1px solid #f0d9a6; }
.secret { font-family: ui-monospace, monospace; word-break: break-all; background: #fffbe6; padding: .5rem; border: 1px dashed #d9b84a; }

/* Tables */
.table-wrap { overflow-x: auto; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid #eceff3; vertical-align: top; }
th { background: #f0f3f7; font-size: .85rem; white-space: nowrap; }
th button.sort { background: none; border: none; padding: 0; font-weight: 700; }
td.cell { max-width: 18rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
tr:last-child td { border-bottom: none; }
.pager { display: flex; gap: .5rem; align-items: center; margin: .75rem 0; flex-wrap: wrap; }

/* Records editor */
.split { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1rem; align-items: start; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; }
textarea.json { width: 100%; min-height: 18rem; resize: vertical; }
.acl { display: grid; grid-template-columns: 1fr 1fr; gap: .5rem; margin: .5rem 0; }
.acl input { width: 100%; }
.actions { display: flex; gap: .5rem; flex-wrap: wrap; margin-top: .5rem; }

/* Dashboard */
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: .75rem; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .75rem .9rem; }
.card h2 { font-size: .85rem; color: var(--muted); font-weight: 600; margin: 0; }
.card .value { font-size: 1.6rem; font-weight: 700; margin: .2rem 0; font-variant-numeric: tabular-nums; }
.card svg { width: 100%; height: 48px; display: block; }
.card svg .area { fill: #dce8f5; }
.card svg .line { fill: none; stroke: var(--accent); stroke-width: 1.5; vector-effect: non-scaling-stroke; }

/* Files */
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr)); gap: .75rem; }
.tile { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; display: flex; flex-direction: column; }
.tile .thumb { height: 128px; display: flex; align-items: center; justify-content: center; background: #eef1f5; }
.tile .thumb img { max-width: 100%; max-height: 128px; }
.tile .meta { padding: .5rem; font-size: .82rem; display: flex; flex-direction: column; gap: .15rem; }
.tile .meta .name { font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tile .actions { padding: 0 .5rem .5rem; margin: 0; }

/* Logs */
.logs td { font-family: ui-monospace, monospace; font-size: 12.5px; white-space: pre-wrap; word-break: break-word; }
.level-error, .level-critical { color: var(--danger); font-weight: 700; }
.level-warning { color: var(--warn); font-weight: 700; }
.level-notice { color: var(--accent); }

@media (max-width: 760px) {
  .shell { grid-template-columns: minmax(0, 1fr); grid-template-rows: auto 1fr; }
  .sidebar { flex-direction: row; flex-wrap: wrap; align-items: center; padding: .5rem; gap: .5rem; min-width: 0; }
  .sidebar nav { flex: 1 1 100%; order: 3; min-width: 0; overflow-x: auto; }
  .nav { flex-direction: row; }
  .nav a { white-space: nowrap; padding: .4rem .6rem; }
  .sidebar .signout { margin: 0 0 0 auto; }
  main { padding: .75rem; }
  .split { grid-template-columns: minmax(0, 1fr); }
  .toolbar > .field, .toolbar > .field select, .toolbar > .field input { max-width: 100%; min-width: 0; }
  .acl { grid-template-columns: 1fr; }
  .cards { grid-template-columns: repeat(auto-fill, minmax(10rem, 1fr)); }
}
"""#
}
