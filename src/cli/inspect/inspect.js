// The inspector's page: plain DOM, no framework, no build step. Every text shown is set as text (never as
// HTML), and every request carries the page's token.
const token = document.body.dataset.token;
const $ = (selector) => document.querySelector(selector);

const state = { name: '', session: undefined, operation: undefined, version: -1 };

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child !== undefined && child !== null) node.append(child);
  return node;
}

function apiUrl(path, params = {}) {
  const url = new URL(path, location.origin);
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value);
  return url;
}

async function api(path, params) {
  const response = await fetch(apiUrl(path, params), { headers: { 'x-sessionfs-token': token } });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error?.message ?? response.statusText);
  return body;
}

async function act(path, body) {
  const response = await fetch(apiUrl(path), {
    method: 'POST',
    headers: { 'x-sessionfs-token': token, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error?.message ?? response.statusText);
  return answer;
}

function patchLink(op) {
  return apiUrl('/api/patch', { name: state.name, op, token }).href;
}

async function loadSessions() {
  const sessions = await api('/api/sessions');
  const select = $('#sessions');
  select.replaceChildren(...sessions.map((session) => element('option', { value: session.name, text: session.name })));
  const wanted = decodeURIComponent(location.hash.slice(1)) || document.body.dataset.session || sessions[0]?.name || '';
  if (wanted !== '') select.value = wanted;
  return select.value;
}

async function openSession(name, { keepSelection = false } = {}) {
  state.name = name;
  if (location.hash.slice(1) !== encodeURIComponent(name)) history.replaceState(null, '', `#${encodeURIComponent(name)}`);
  const session = await api('/api/session', { name });
  state.session = session;
  state.version = session.version;
  $('#session-patch').href = patchLink(undefined);
  renderStatus(session);
  renderTimeline(session);
  performance.mark('timeline-rendered');
  if (!keepSelection) {
    state.operation = undefined;
    $('#detail').replaceChildren(
      element('p', { class: 'empty', text: 'Pick a call in the timeline to see its diff, restore to it or fork from it.' }),
    );
  } else if (state.operation !== undefined) markSelected(state.operation.id);
}

function renderStatus(session) {
  const status = $('#status');
  const turns = session.history?.turns ?? [];
  const calls = turns.reduce((sum, turn) => sum + turn.operations.length, 0);
  status.replaceChildren(
    `version ${session.version} · ${turns.length} turns · ${calls} operations `,
    session.open ? element('span', { class: 'badge open', text: 'open in a running server (read-only here; restore refused)' }) : '',
  );
}

function renderTimeline(session) {
  const nav = $('#timeline');
  if (session.history === null) {
    nav.replaceChildren(element('p', { class: 'empty', text: 'No history was published with this session.' }));
    return;
  }
  const fragment = document.createDocumentFragment();
  fragment.append(element('h2', { text: 'Timeline' }));
  for (const turn of [...session.history.turns].reverse()) {
    const title = element('h3', {
      text: `${turn.id}${turn.label ? ` · ${turn.label}` : ''}${turn.kind !== 'turn' ? ` · ${turn.kind}` : ''} `,
    });
    if (turn.undone) title.append(element('span', { class: 'badge undone', text: 'undone' }));
    const block = element('div', { class: 'turn', 'data-turn': turn.id }, title);
    for (const operation of turn.operations) {
      const button = element(
        'button',
        { class: 'op', 'data-op': operation.id, onclick: () => selectOperation(operation) },
        element('span', { class: 'id', text: operation.id }),
        element('span', { class: 'tool', text: operation.tool }),
        ` · ${operation.actor} · ${operation.changed.length} changed `,
        operation.outcome === 'failed' ? element('span', { class: 'badge failed', text: operation.code ?? 'failed' }) : undefined,
        element('span', { class: 'summary', text: operation.summary }),
      );
      block.append(button);
    }
    fragment.append(block);
  }
  nav.replaceChildren(fragment);
}

function markSelected(id) {
  for (const node of document.querySelectorAll('.op.selected')) node.classList.remove('selected');
  document.querySelector(`.op[data-op="${CSS.escape(id)}"]`)?.classList.add('selected');
}

async function selectOperation(operation) {
  state.operation = operation;
  markSelected(operation.id);
  const detail = $('#detail');
  const fields = [
    ['operation', `${operation.id} in ${operation.turnId}`],
    ['actor', operation.actor],
    ['kind', operation.kind],
    ['tool', operation.tool],
    ['arguments', operation.summary || '(none)'],
    ['outcome', operation.outcome + (operation.code ? ` (${operation.code})` : '')],
    ['call id', operation.callId ?? '—'],
    ['started', operation.startedAt],
    ['finished', operation.finishedAt],
  ];
  const list = element('dl');
  for (const [term, value] of fields) list.append(element('dt', { text: term }), element('dd', { text: value }));
  const actions = element('div', { class: 'actions' });
  if (operation.before !== undefined)
    actions.append(
      element('button', {
        'data-action': 'preview-before',
        text: 'Restore to before…',
        onclick: () => preview(operation.before, 'before'),
      }),
    );
  if (operation.after !== undefined)
    actions.append(
      element('button', { 'data-action': 'preview-after', text: 'Restore to after…', onclick: () => preview(operation.after, 'after') }),
    );
  if (operation.after !== undefined) {
    const input = element('input', { id: 'fork-name', placeholder: 'new session name', 'aria-label': 'New session name' });
    actions.append(
      input,
      element('button', { 'data-action': 'fork', text: 'Fork here', onclick: () => fork(operation.after, input.value) }),
    );
  }
  if (operation.before !== undefined && operation.after !== undefined)
    actions.append(
      element('a', { class: 'button', 'data-action': 'patch', href: patchLink(operation.id), download: '', text: 'Export patch' }),
    );
  const files = element('div', { id: 'diff' }, element('p', { class: 'empty', text: 'Loading the diff…' }));
  detail.replaceChildren(
    element('h2', { text: `${operation.tool} (${operation.id})` }),
    list,
    actions,
    element('div', { id: 'outcome' }),
    renderAudit(operation),
    files,
  );
  try {
    const { files: changed } = await api('/api/diff', { name: state.name, op: operation.id });
    files.replaceChildren(
      ...(changed.length === 0 ? [element('p', { class: 'empty', text: 'This operation changed no file.' })] : changed.map(renderFile)),
    );
  } catch (error) {
    files.replaceChildren(element('p', { class: 'message error', text: error.message }));
  }
}

/** The audit events the operation caused (a stored session records them), as a table; nothing when none were recorded. */
function renderAudit(operation) {
  if (operation.audit === undefined) return undefined;
  const box = element(
    'div',
    { id: 'audit' },
    element('h3', { text: `Audit events (${operation.audit.length + (operation.auditOmitted ?? 0)})` }),
  );
  if (operation.audit.length === 0) {
    box.append(element('p', { class: 'empty', text: 'This operation caused no audit event.' }));
    return box;
  }
  const head = element('tr', {}, ...['op', 'path', 'to', 'outcome', 'bytes', 'ms'].map((name) => element('th', { text: name })));
  const table = element('table', { class: 'audit' }, head);
  for (const event of operation.audit)
    table.append(
      element(
        'tr',
        { class: event.outcome },
        element('td', { text: event.op }),
        element('td', { text: event.path ?? '' }),
        element('td', { text: event.to ?? '' }),
        element('td', { text: event.outcome === 'ok' ? 'ok' : (event.code ?? 'failed') }),
        element('td', { class: 'n', text: event.bytes === undefined ? '' : String(event.bytes) }),
        element('td', { class: 'n', text: event.durationMs.toFixed(1) }),
      ),
    );
  box.append(table);
  if (operation.auditOmitted !== undefined)
    box.append(element('p', { class: 'empty', text: `… ${operation.auditOmitted} more events not kept` }));
  return box;
}

function renderFile(file) {
  const box = element('div', { class: 'file', 'data-path': file.path }, element('h3', { text: `${file.status} ${file.path}` }));
  if (file.note !== undefined) {
    box.append(element('p', { class: 'empty', text: file.note }));
    return box;
  }
  const table = element('table', { class: 'diff' });
  for (const row of file.rows) {
    if (row[0] === 'skip') {
      table.append(element('tr', { class: 'skip' }, element('td', { colspan: '4', text: `… ${row[1]} unchanged lines` })));
      continue;
    }
    const [kind, left, leftText, right, rightText] = row;
    table.append(
      element(
        'tr',
        { class: kind },
        element('td', { class: 'n', text: left ? String(left) : '' }),
        element('td', { class: 'l', text: left ? leftText : '' }),
        element('td', { class: 'n', text: right ? String(right) : '' }),
        element('td', { class: 'r', text: right ? rightText : '' }),
      ),
    );
  }
  box.append(table);
  return box;
}

function say(text, error = false) {
  $('#outcome').replaceChildren(element('p', { class: error ? 'message error' : 'message', text }));
}

async function preview(snapshot, side) {
  try {
    const plan = await act('/api/restore-preview', { name: state.name, snapshot });
    const list = (label, paths) =>
      paths.length === 0
        ? undefined
        : element(
            'div',
            {},
            element('strong', { text: `${label} (${paths.length})` }),
            element('ul', {}, ...paths.map((path) => element('li', { text: path }))),
          );
    const changes = plan.created.length + plan.modified.length + plan.deleted.length;
    const box = element(
      'div',
      { class: 'preview', id: 'restore-preview' },
      element('h3', { text: `Dry run: restoring to ${side} ${state.operation.id} would change ${changes} paths` }),
      list('created', plan.created),
      list('modified', plan.modified),
      list('deleted', plan.deleted),
      list(
        'left alone',
        plan.blocked.map((entry) => `${entry.path} (${entry.reason})`),
      ),
      element('button', { class: 'danger', 'data-action': 'restore', text: 'Restore', onclick: () => restore(snapshot) }),
    );
    $('#outcome').replaceChildren(box);
  } catch (error) {
    say(error.message, true);
  }
}

async function restore(snapshot) {
  try {
    const done = await act('/api/restore', { name: state.name, snapshot });
    say(
      `Restored: version ${done.version}; tree ${done.receipt?.treeHash ?? '?'} ${done.receipt?.matches ? 'matches the snapshot' : 'differs from the snapshot'}`,
    );
    await openSession(state.name, { keepSelection: true });
  } catch (error) {
    say(error.message, true);
  }
}

async function fork(snapshot, to) {
  try {
    const done = await act('/api/fork', { name: state.name, snapshot, to: to.trim() });
    await loadSessions();
    say(`Forked into session ${done.name} (version ${done.version})`);
  } catch (error) {
    say(error.message, true);
  }
}

async function blame(event) {
  event.preventDefault();
  const result = $('#blame-result');
  try {
    const { lines } = await api('/api/blame', { name: state.name, path: $('#blame-path').value.trim() });
    const table = element('table', { class: 'blame' });
    const operations = new Map(
      (state.session.history?.turns ?? []).flatMap((turn) => turn.operations).map((operation) => [operation.id, operation]),
    );
    for (const line of lines) {
      const owner = line.operationId === undefined ? undefined : operations.get(line.operationId);
      table.append(
        element(
          'tr',
          {},
          element('td', {
            class: 'who',
            title: owner ? `${owner.tool} by ${owner.actor}` : 'older than the history',
            text: line.operationId ?? '—',
            onclick: () => owner && selectOperation(owner),
          }),
          element('td', { text: line.text }),
        ),
      );
    }
    result.replaceChildren(table);
  } catch (error) {
    result.replaceChildren(element('p', { class: 'message error', text: error.message }));
  }
}

// A session a server is serving moves on: look again every two seconds, redraw when its version moved.
async function poll() {
  if (state.name === '' || document.hidden) return;
  try {
    const sessions = await api('/api/sessions');
    const current = sessions.find((session) => session.name === state.name);
    if (current !== undefined && current.version !== state.version) await openSession(state.name, { keepSelection: true });
  } catch {
    // the next poll tries again
  }
}

$('#blame-form').addEventListener('submit', blame);
$('#sessions').addEventListener('change', (event) => void openSession(event.target.value));
const first = await loadSessions();
if (first !== '') await openSession(first);
else $('#timeline').replaceChildren(element('p', { class: 'empty', text: 'This store holds no session.' }));
setInterval(poll, 2000);
