// Webhook endpoints (add, disable, enable, delete; a new secret is shown
// once) and deliveries by status with their attempts (retry a dead one).
import { h, clear, alertBox, say, field } from './dom.js';
import { api, get, qs, seg } from './api.js';

export function mount(main) {
  let stopped = false;
  const error = alertBox('error', { id: 'webhooks-error' });
  const status = alertBox('ok', { id: 'webhooks-status' });
  const secretBox = h('div', { id: 'new-secret', class: 'hidden', role: 'status' });
  const endpoints = h('tbody');
  const name = h('input', { id: 'endpoint-name', type: 'text', autocomplete: 'off', required: true });
  const url = h('input', { id: 'endpoint-url', type: 'url', autocomplete: 'off', required: true, placeholder: 'https://example.com/hook' });
  const events = h('input', { id: 'endpoint-events', type: 'text', autocomplete: 'off', required: true, placeholder: 'message.created, items.created' });
  const format = h('select', { id: 'endpoint-format' }, h('option', { value: 'standard' }, 'standard'), h('option', { value: 'gorush' }, 'gorush'));
  const add = h('button', { type: 'submit', class: 'primary', id: 'add-endpoint' }, 'Add endpoint');
  const form = h('form', { class: 'toolbar', id: 'endpoint-form', 'aria-label': 'Add a webhook endpoint' },
    field('Name', name), field('URL', url, 'grow'), field('Events', events, 'grow'), field('Format', format), add);

  const statusFilter = h('select', { id: 'delivery-status' },
    [['', 'all'], ['pending', 'pending'], ['delivered', 'delivered'], ['dead', 'dead']].map(([v, t]) => h('option', { value: v }, t)));
  const refreshButton = h('button', { type: 'button', id: 'refresh-deliveries' }, 'Refresh');
  const deliveries = h('tbody');
  const detail = h('section', { class: 'panel hidden', id: 'delivery-detail', 'aria-labelledby': 'delivery-title' });

  main.append(h('h1', {}, 'Webhooks'), error, status, secretBox,
    h('h2', {}, 'Endpoints'),
    h('div', { class: 'table-wrap' }, h('table', { id: 'endpoints-table' },
      h('thead', {}, h('tr', {}, ['Name', 'URL', 'Events', 'Format', 'State', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))), endpoints)),
    h('h2', { class: 'spaced' }, 'Add an endpoint'), form,
    h('h2', {}, 'Deliveries'),
    h('div', { class: 'toolbar' }, field('Status', statusFilter), refreshButton),
    h('div', { class: 'split' },
      h('div', { class: 'table-wrap' }, h('table', { id: 'deliveries-table' },
        h('thead', {}, h('tr', {}, ['Id', 'Endpoint', 'Event', 'Status', 'Attempts', 'Last result', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
        deliveries)),
      detail));

  async function act(method, path, message) {
    try { await api(method, path); say(status, message, 'ok'); say(error, ''); return true; } catch (e) { say(error, e.message); return false; }
  }

  async function loadEndpoints() {
    try {
      const list = await get('/admin/webhooks/endpoints');
      if (stopped) return;
      clear(endpoints, list.length ? list.map((e) => {
        const base = '/admin/webhooks/endpoints/' + seg(e.name);
        const toggle = e.enabled
          ? h('button', { type: 'button', 'data-disable': e.name, onclick: async () => { if (await act('POST', base + '/disable', 'Disabled ' + e.name + '.')) loadEndpoints(); } }, 'Disable')
          : h('button', { type: 'button', 'data-enable': e.name, onclick: async () => { if (await act('POST', base + '/enable', 'Enabled ' + e.name + '.')) loadEndpoints(); } }, 'Enable');
        const del = h('button', { type: 'button', class: 'danger', 'data-delete': e.name }, 'Delete');
        del.addEventListener('click', async () => {
          if (del.textContent === 'Delete') { del.textContent = 'Confirm delete'; return; }
          if (await act('DELETE', base, 'Deleted ' + e.name + '.')) loadEndpoints();
        });
        return h('tr', { 'data-endpoint': e.name }, h('td', {}, e.name), h('td', { class: 'cell mono', title: e.url }, e.url),
          h('td', {}, e.events.join(', ')), h('td', {}, e.format),
          h('td', {}, e.enabled ? 'enabled' : 'disabled' + (e.disabledReason ? ' (' + e.disabledReason + ')' : '')),
          h('td', {}, h('div', { class: 'actions' }, toggle, del)));
      }) : h('tr', { class: 'empty' }, h('td', { colspan: 6, class: 'muted', id: 'endpoints-empty' },
        'No endpoints yet. An endpoint gets a signed POST for each event it subscribes to (such as notes.created or users.created); '
        + 'add one below, or declare it under webhooks.endpoints in roost.yaml.')));
    } catch (e) { if (!stopped) say(error, 'Cannot list the endpoints: ' + e.message); }
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    add.disabled = true;
    try {
      const r = await api('POST', '/admin/webhooks/endpoints', { json: {
        name: name.value.trim(), url: url.value.trim(), format: format.value,
        events: events.value.split(',').map((x) => x.trim()).filter(Boolean),
      } });
      say(error, '');
      say(status, 'Added ' + r.data.name + '.', 'ok');
      clear(secretBox, h('p', {}, 'Its signing secret, shown only this once: copy it now.'), h('p', { class: 'secret', id: 'secret-value' }, r.data.secret));
      secretBox.className = 'alert warn';
      form.reset();
      loadEndpoints();
    } catch (e) {
      say(error, 'Cannot add the endpoint: ' + e.message);
    } finally { add.disabled = false; }
  });

  async function showDelivery(id) {
    try {
      const d = await get('/admin/webhooks/deliveries/' + seg(id));
      detail.classList.remove('hidden');
      clear(detail, h('h3', { id: 'delivery-title' }, `Delivery ${d.id} · ${d.type} → ${d.endpoint}`),
        h('p', {}, `${d.status}, ${d.attempts} attempt(s)` + (d.nextAttemptAt ? ', next at ' + d.nextAttemptAt : '')),
        h('div', { class: 'table-wrap' }, h('table', { id: 'attempts-table' },
          h('thead', {}, h('tr', {}, ['#', 'At', 'Status', 'Error', 'Time'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, d.attemptLog.length ? d.attemptLog.map((a) => h('tr', {}, h('td', {}, a.attempt), h('td', {}, a.at),
            h('td', {}, a.status ?? '–'), h('td', {}, a.error ?? ''), h('td', {}, a.durationMs + ' ms')))
            : h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No attempts yet.'))))),
        h('details', {}, h('summary', {}, 'Event data'), h('pre', {}, JSON.stringify(d.data, null, 2))));
    } catch (e) { say(error, 'Cannot read delivery ' + id + ': ' + e.message); }
  }

  async function loadDeliveries() {
    try {
      const list = await get('/admin/webhooks/deliveries' + qs({ status: statusFilter.value, limit: 100 }));
      if (stopped) return;
      clear(deliveries, list.length ? list.map((d) => h('tr', { 'data-delivery': d.id, 'data-status': d.status },
        h('td', {}, d.id), h('td', {}, d.endpoint), h('td', {}, d.type), h('td', {}, d.status), h('td', {}, d.attempts),
        h('td', { class: 'cell' }, d.lastStatus ?? d.lastError ?? '–'),
        h('td', {}, h('div', { class: 'actions' },
          h('button', { type: 'button', 'data-details': d.id, onclick: () => showDelivery(d.id) }, 'Attempts'),
          d.status === 'dead' ? h('button', { type: 'button', 'data-retry': d.id, onclick: async () => {
            if (await act('POST', '/admin/webhooks/deliveries/' + seg(d.id) + '/retry', 'Delivery ' + d.id + ' queued again.')) loadDeliveries();
          } }, 'Retry') : null))))
        : h('tr', { class: 'empty' }, h('td', { colspan: 7, class: 'muted', id: 'deliveries-empty' }, statusFilter.value
          ? `No ${statusFilter.value} deliveries. Choose \u201call\u201d to see every delivery.`
          : 'No deliveries yet. Each event an enabled endpoint subscribes to becomes a delivery here, with its attempts.')));
    } catch (e) { if (!stopped) say(error, 'Cannot list the deliveries: ' + e.message); }
  }

  statusFilter.addEventListener('change', loadDeliveries);
  refreshButton.addEventListener('click', loadDeliveries);
  loadEndpoints();
  loadDeliveries();
  return () => { stopped = true; };
}
