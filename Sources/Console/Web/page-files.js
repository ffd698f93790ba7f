// The file store: upload, a grid of thumbnails with type, size and
// dimensions, open the original, delete. Thumbnails and originals are
// fetched with the bearer token and shown through blob: URLs (raster
// images only; other uploads download as bytes).
import { h, clear, alertBox, say, field, fmt } from './dom.js';
import { api, get, qs, seg } from './api.js';

const PAGE = 24;

export function mount(main) {
  const state = { skip: 0, total: 0 };
  let stopped = false;
  let urls = [];
  let refresh = null;

  const input = h('input', { id: 'upload-input', type: 'file' });
  const upload = h('button', { type: 'button', class: 'primary', id: 'upload-button' }, 'Upload');
  const status = alertBox('ok', { id: 'files-status' });
  const error = alertBox('error', { id: 'files-error' });
  const grid = h('div', { class: 'grid', id: 'file-grid' });
  const prev = h('button', { type: 'button', id: 'files-prev' }, 'Previous');
  const next = h('button', { type: 'button', id: 'files-next' }, 'Next');
  const range = h('span', { 'aria-live': 'polite', id: 'files-range' });
  main.append(h('h1', {}, 'Files'), h('div', { class: 'toolbar' }, field('File to upload', input), upload), status, error, grid,
    h('div', { class: 'pager' }, prev, range, next));

  function release() { for (const u of urls) URL.revokeObjectURL(u); urls = []; }

  // Raster images the browser shows as pixels only; anything else (HTML,
  // SVG, PDF, text...) is never rendered at the console's origin.
  const VIEWABLE = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

  async function blobURL(path, type) {
    const r = await api('GET', path, { raw: true, headers: { Accept: '*/*' } });
    const bytes = await r.blob();
    const url = URL.createObjectURL(type ? new Blob([bytes], { type }) : bytes);
    urls.push(url);
    return url;
  }

  function tile(f) {
    const isImage = typeof f.width === 'number';
    const thumb = h('div', { class: 'thumb' }, h('span', { class: 'muted' }, isImage ? 'loading…' : (f.contentType || 'file')));
    const deleteButton = h('button', { type: 'button', class: 'danger', 'data-delete': f._id }, 'Delete');
    const openButton = h('button', { type: 'button', 'data-open': f._id }, 'Open');
    openButton.addEventListener('click', async () => {
      try {
        // An upload opens as what it is only when that is a raster image; any
        // other type is downloaded as bytes (no script of a user's runs here).
        const viewable = VIEWABLE.includes(String(f.contentType || '').toLowerCase());
        const url = await blobURL('/files/' + seg(f._id), viewable ? f.contentType.toLowerCase() : 'application/octet-stream');
        const a = viewable ? h('a', { href: url, target: '_blank', rel: 'noopener' })
                           : h('a', { href: url, download: f.name || f._id, 'data-download': f._id });
        document.body.append(a); a.click(); a.remove();
      } catch (e) { say(error, 'Cannot open ' + f._id + ': ' + e.message); }
    });
    deleteButton.addEventListener('click', async () => {
      if (deleteButton.textContent === 'Delete') { deleteButton.textContent = 'Confirm delete'; return; }
      try {
        await api('DELETE', '/files/' + seg(f._id));
        say(status, 'Deleted ' + (f.name || f._id) + '.', 'ok');
        load();
      } catch (e) { say(error, 'Cannot delete: ' + e.message); }
    });
    const el = h('article', { class: 'tile', 'data-file': f._id, 'aria-label': f.name || f._id }, thumb,
      h('div', { class: 'meta' },
        h('span', { class: 'name', title: f.name || f._id }, f.name || f._id),
        h('span', {}, f.contentType || '?'),
        h('span', {}, fmt.bytes(f.size) + (isImage ? ` · ${f.width}×${f.height}` : ''))),
      h('div', { class: 'actions' }, openButton, deleteButton));
    if (isImage) {
      blobURL('/files/' + seg(f._id) + '/thumbnail?size=128').then((url) => {
        if (!stopped) clear(thumb, h('img', { src: url, alt: 'Thumbnail of ' + (f.name || f._id), 'data-thumb': f._id }));
      }).catch((e) => { if (!stopped) clear(thumb, h('span', { class: 'muted' }, 'no thumbnail (' + e.status + ')')); });
    }
    return el;
  }

  async function load() {
    try {
      const data = await get('/admin/files' + qs({ limit: PAGE, skip: state.skip }));
      if (stopped) return;
      release();
      state.total = data.total;
      clear(grid, data.files.length ? data.files.map(tile) : h('p', { class: 'muted empty', id: 'files-empty' }, state.skip > 0
        ? 'No files on this page: the files before it are all there are.'
        : 'No files yet. This page lists every upload (the app\u2019s users send them with POST /files), newest first, '
          + 'with thumbnails of images. Upload one above to begin.'));
      range.textContent = `Files ${data.files.length ? state.skip + 1 : 0}–${state.skip + data.files.length} of ${state.total}`;
      prev.disabled = state.skip === 0;
      next.disabled = state.skip + data.files.length >= state.total;
    } catch (e) {
      if (!stopped) say(error, 'Cannot list the files: ' + e.message);
    }
  }

  upload.addEventListener('click', async () => {
    const file = input.files && input.files[0];
    if (!file) { say(error, 'Choose a file first.'); return; }
    upload.disabled = true;
    say(error, ''); say(status, 'Uploading ' + file.name + '…', 'ok');
    try {
      const form = new FormData();
      form.append('file', file, file.name);
      const r = await api('POST', '/files', { form });
      say(status, 'Uploaded ' + file.name + ' (' + r.data._id + ').', 'ok');
      input.value = '';
      state.skip = 0;
      await load();
    } catch (e) {
      say(status, '');
      say(error, 'Upload refused: ' + (e.code ? e.code + ': ' : '') + e.message);
    } finally {
      upload.disabled = false;
    }
  });
  prev.addEventListener('click', () => { state.skip = Math.max(0, state.skip - PAGE); load(); });
  next.addEventListener('click', () => { state.skip += PAGE; load(); });

  load();
  return () => { stopped = true; clearTimeout(refresh); release(); };
}
