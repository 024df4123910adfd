// The operator console's page: plain browser JavaScript, no build step, nothing from elsewhere
// (the Content-Security-Policy allows only this node's files). It polls the console's API once a
// second. Every value from the API is written with textContent, never as HTML: a tool's status
// message or a subject is text, whatever it contains.
'use strict';

const REFRESH_MS = 1000;
const STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'];
const LIVE = new Set(['working', 'input_required']);

const state = {
  csrfToken: '',
  filter: new URLSearchParams({ limit: '25' }),
  // The cursors of the pages before this one; the last is this page's ('' for the first).
  cursors: [''],
  next: null,
  detailId: null,
  busy: false,
  subject: '',
};

const $ = (id) => document.getElementById(id);

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) tr.append(cell instanceof Node ? cell : element('td', cell));
  return tr;
}

function emptyRow(columns) {
  const td = element('td', 'none', 'empty');
  td.colSpan = columns;
  return row([td]);
}

/** A status cell; a task that completed with a tool error (isError) reads as the failure it is. */
function statusCell(status, toolError, tag = 'td') {
  return toolError ? element(tag, 'completed: tool error', 'status tool-error') : element(tag, status, `status ${status}`);
}

/** A failure as the operator is shown it: code and message (the data only as keys and size). */
function failure(error) {
  if (error === null || error === undefined) return 'none';
  return `code ${error.code}: ${error.message}${error.data === undefined ? '' : `; data ${redacted(error.data)}`}`;
}

/** The question an input request asks, as the form its owner sees: message, then each field. */
function questionNode(question) {
  const cell = document.createElement('td');
  cell.className = 'question';
  if (question.message) cell.append(element('p', question.message, 'question-message'));
  if (question.mode && question.mode !== 'form') cell.append(element('p', `(${question.mode} elicitation)`));
  if (question.fields) {
    const list = element('ul', undefined, 'question-fields');
    for (const field of question.fields) {
      const label = `${field.title ? `${field.title} (${field.name})` : field.name}: ${field.type}${field.required ? ', required' : ''}`;
      const choices = field.choices ? ` — one of ${field.choices.join(', ')}` : '';
      const item = element('li', `${label}${choices}`);
      if (field.description) item.title = field.description;
      list.append(item);
    }
    if (question.fields.length === 0) list.append(element('li', 'no fields (accept or decline)'));
    cell.append(list);
  }
  if (!question.message && !question.fields) cell.textContent = question.method;
  return cell;
}

function age(ms) {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60000) return `${Math.floor(ms / 1000)}s`;
  if (ms < 3600000) return `${Math.floor(ms / 60000)}m`;
  if (ms < 86400000) return `${Math.floor(ms / 3600000)}h`;
  return `${Math.floor(ms / 86400000)}d`;
}

function since(iso) {
  return iso ? age(Date.now() - new Date(iso).getTime()) : '-';
}

/** A value the API gave as keys and size (the owner's data is never shown). */
function redacted(value) {
  if (value === null || value === undefined) return 'none';
  const keys = value.keys ? `keys ${value.keys.join(', ') || '(none)'}; ` : '';
  return `${keys}${value.bytes} bytes`;
}

async function api(path, init) {
  const response = await fetch(path, { credentials: 'same-origin', ...init });
  if (response.status === 401) {
    location.assign('/console/login');
    throw new Error('signed out');
  }
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

function showError(error) {
  const box = $('error');
  box.hidden = !error;
  box.textContent = error ? String(error.message || error) : '';
}

function renderSummary(summary) {
  const body = $('counts-body');
  const byNode = new Map();
  const stats = summary.stats;
  for (const count of stats ? stats.counts : []) {
    const key = count.nodeId ?? '(no node: queued or released)';
    if (!byNode.has(key)) byNode.set(key, {});
    byNode.get(key)[count.status] = count.count;
  }
  const rows = [...byNode.entries()].map(([node, counts]) => row([element('td', node, 'id'), ...STATUSES.map((status) => String(counts[status] ?? 0))]));
  if (stats) {
    const total = row([element('th', 'cluster'), ...STATUSES.map((status) => element('th', String(stats.byStatus[status])))]);
    rows.push(total);
  }
  body.replaceChildren(...rows);
  // The counts are the maintenance leader's (every MCP_TASKS_CLUSTER_STATS_MS), the list is live:
  // the table itself says how old its numbers are, so a count behind the list reads as such.
  $('counts-caption').textContent = stats
    ? `counted ${since(stats.computedAt)} ago by ${stats.computedBy} (the task list below is live)`
    : 'not counted yet (the task list below is live)';
  $('counts-age').textContent = stats ? `oldest live task ${stats.oldestLiveAgeMs === null ? 'none' : age(stats.oldestLiveAgeMs)}` : '';
  $('nodes-body').replaceChildren(
    ...summary.nodes.map((node) =>
      row([
        element('td', node.nodeId, 'id'),
        element('td', node.expired ? 'expired' : 'held', node.expired ? 'expired' : 'ok'),
        `${age(node.leaseAgeMs)} ago`,
        String(node.running),
        element('td', listenText(node.listening), node.listening === false ? 'expired' : 'ok'),
        since(node.startedAt),
      ]),
    ),
  );
}

/** Whether a node's LISTEN works, as its last renewal recorded (null: not known yet, or an earlier release). */
function listenText(listening) {
  return listening === true ? 'listening' : listening === false ? 'polling only' : 'unknown';
}

function cancelButton(taskId) {
  const button = element('button', 'Cancel', 'cancel');
  button.type = 'button';
  button.addEventListener('click', (event) => {
    event.stopPropagation();
    void cancel(taskId, button);
  });
  return button;
}

function cancelCell(taskId) {
  const td = document.createElement('td');
  td.append(cancelButton(taskId));
  return td;
}

function renderTasks(page) {
  state.next = page.next;
  $('tasks-body').replaceChildren(
    ...page.tasks.map((task) => {
      const tr = row([
        element('td', task.taskId, 'id'),
        statusCell(task.status, task.toolError),
        task.tool,
        task.ownerSubject,
        task.nodeId ?? '-',
        element('td', task.statusMessage ?? '', 'message'),
        `${since(task.createdAt)}${task.expired ? ' (expired)' : ''}`,
        LIVE.has(task.status) && !task.expired ? cancelCell(task.taskId) : '',
      ]);
      tr.dataset.taskId = task.taskId;
      tr.addEventListener('click', () => openDetail(task.taskId));
      return tr;
    }),
  );
  $('older').disabled = page.next === null;
  $('newer').disabled = state.cursors.length <= 1;
  $('page-label').textContent = `page ${state.cursors.length}`;
}

function field(list, name, value) {
  list.append(element('dt', name), element('dd', value));
}

function renderDetail(task) {
  $('detail').hidden = false;
  $('detail-id').textContent = task.taskId;
  const list = $('detail-fields');
  list.replaceChildren();
  list.append(element('dt', 'status'), statusCell(task.status, task.toolError, 'dd'));
  field(list, 'message', task.statusMessage ?? '-');
  field(list, 'tool', task.tool);
  field(list, 'owner', `${task.owner.subject} (server ${task.owner.server || '-'})`);
  field(list, 'node', task.nodeId ?? '-');
  field(list, 'created', `${task.createdAt} (${since(task.createdAt)} ago)`);
  field(list, 'last updated', `${task.lastUpdatedAt} (${since(task.lastUpdatedAt)} ago)`);
  field(list, 'expires', task.expiresAt ? `${task.expiresAt}${task.expired ? ' (expired: its owner no longer sees it)' : ''}` : 'never');
  field(list, 'poll interval', `${task.pollIntervalMs} ms`);
  field(list, 'attempt', `${task.attempt}${task.resumable ? ` of at most ${task.maxAttempts} (resumable)` : ''}${task.handovers > 0 ? `, ${task.handovers} hand-over(s)` : ''}`);
  field(list, 'arguments', redacted(task.args));
  field(list, 'result', redacted(task.result));
  field(list, 'error', failure(task.error));
  $('detail-inputs').replaceChildren(
    ...(task.inputs.length === 0 ? [emptyRow(4)] : task.inputs.map((input) => row([input.key, input.method, questionNode(input.question), input.answered ? redacted(input.response) : 'not answered']))),
  );
  $('steps-count').textContent = task.stepCount > task.steps.length ? `(the last ${task.steps.length} of ${task.stepCount})` : '';
  $('detail-steps').replaceChildren(...(task.steps.length === 0 ? [emptyRow(3)] : task.steps.map((step) => row([step.name, String(step.starts), step.done ? 'yes' : 'no']))));
  renderHistory(task.history);
  $('detail-cancel').hidden = !(LIVE.has(task.status) && !task.expired);
  $('detail-cancel').disabled = false;
  $('detail-retry').hidden = !((task.status === 'failed' || task.status === 'cancelled') && !task.expired);
  $('detail-retry').disabled = false;
}

/** One history event in words, as `tasks show` prints it. */
function eventText(event) {
  switch (event.kind) {
    case 'created': return event.nodeId === null ? 'created, queued for a node' : 'created';
    case 'claimed': return `claimed by ${event.nodeId ?? '-'} (attempt ${event.attempt})`;
    case 'released': return `released by ${event.from ?? '-'}${event.message ? `: ${event.message}` : ''}`;
    case 'input_requested': return `asked ${event.key}`;
    case 'input_answered': return `answered ${event.key}`;
    case 'failed': return `failed${event.error ? `: code ${event.error.code}: ${event.error.message}` : ''}`;
    case 'completed': return event.toolError ? 'completed with a tool error (isError)' : 'completed';
    case 'cancelled': return `cancelled${event.message ? ` (${event.message})` : ''}`;
    case 'operator':
      if (event.action === 'retry') return `operator ${event.actor}: retried as ${event.relatedTaskId}`;
      if (event.action === 'retry_of') return `operator ${event.actor}: a retry of ${event.relatedTaskId}`;
      return `operator ${event.actor}: cancel${event.filter ? ` (bulk, ${event.filter})` : ''}`;
    case 'upstream_cancel': {
      const up = event.upstream || {};
      return `cancel owed upstream ${up.name}: ${up.state}, ${up.attempts} tries${up.lastError ? `, last error: ${up.lastError}` : ''}`;
    }
    default: return event.status;
  }
}

function renderHistory(history) {
  const events = history ? history.events : [];
  const keys = new Set(events.filter((event) => event.key !== undefined).map((event) => event.key)).size;
  $('history-note').textContent = history && history.inputsAsked > keys && keys > 0 ? `(the input events of the first ${history.inputsAsked - keys} of ${history.inputsAsked} keys were coalesced)` : '';
  $('detail-history').replaceChildren(
    ...(events.length === 0
      ? [emptyRow(5)]
      : events.map((event) => {
          const cell = element('td', eventText(event), 'event');
          // An input request's question, as the form it is (the same cell as the input table's).
          if (event.question) cell.append(questionNode(event.question));
          // The other task of a retry is a link to its detail.
          if (event.relatedTaskId) {
            const link = element('a', ' open', 'related');
            link.href = `#task=${encodeURIComponent(event.relatedTaskId)}`;
            cell.append(link);
          }
          const tr = row([element('td', event.at), cell, statusCell(event.status, false), event.nodeId ?? '-', String(event.attempt)]);
          tr.className = event.kind;
          return tr;
        })),
  );
}

/**
 * Asks the operator to confirm an action in the page's dialog: what will happen, the tasks it
 * takes, and who will be recorded as having done it. Resolves true on Confirm.
 */
function confirmAction(text, items) {
  const dialog = $('confirm');
  $('confirm-text').textContent = text;
  $('confirm-list').replaceChildren(...items.map((item) => element('li', item)));
  $('confirm-who').textContent = `Recorded in each task's history as done by console:${state.subject}.`;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'yes'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
  });
}

function openDetail(taskId) {
  state.detailId = taskId;
  history.replaceState(null, '', `#task=${encodeURIComponent(taskId)}`);
  void refresh();
}

function closeDetail() {
  state.detailId = null;
  $('detail').hidden = true;
  history.replaceState(null, '', location.pathname);
}

async function cancel(taskId, button) {
  if (!(await confirmAction(`Cancel task ${taskId}? The node running it stops its run.`, []))) return;
  if (button) button.disabled = true;
  try {
    await api(`/console/api/tasks/${encodeURIComponent(taskId)}/cancel`, { method: 'POST', headers: { 'x-csrf-token': state.csrfToken } });
    showError(null);
  } catch (error) {
    showError(error);
  }
  await refresh();
}

async function retry(taskId, button) {
  if (!(await confirmAction(`Retry task ${taskId} as a new task with the same arguments and owner?`, []))) return;
  button.disabled = true;
  try {
    const outcome = await api(`/console/api/tasks/${encodeURIComponent(taskId)}/retry`, { method: 'POST', headers: { 'x-csrf-token': state.csrfToken } });
    showError(null);
    openDetail(outcome.newTaskId);
  } catch (error) {
    showError(error);
    button.disabled = false;
  }
}

/** Cancels every live task the filters match, after the dialog showed which. */
async function bulkCancel() {
  const filter = new URLSearchParams();
  for (const [name, value] of new FormData($('filters'))) if (value !== '' && name !== 'limit') filter.set(name, String(value));
  try {
    const preview = await api(`/console/api/cancel-preview?${filter}`);
    const words = [...filter].map(([name, value]) => `${name}=${value}`).join(' ') || 'no filter';
    if (preview.count === 0) {
      showError(new Error(`No live tasks match ${words}.`));
      return;
    }
    const items = preview.tasks.map((task) => `${task.taskId}  ${task.status}  ${task.tool}  ${task.ownerSubject}  ${task.nodeId ?? '-'}`);
    if (preview.count > preview.tasks.length) items.push(`… and ${preview.count - preview.tasks.length} more`);
    if (!(await confirmAction(`Cancel these ${preview.count} live tasks matching ${words}?`, items))) return;
    const outcome = await api('/console/api/cancel', {
      method: 'POST',
      headers: { 'x-csrf-token': state.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ taskIds: preview.taskIds, filter: words }),
    });
    showError(null);
    $('bulk-result').textContent = `Cancelled ${outcome.cancelled.length} of ${outcome.requested} tasks.`;
  } catch (error) {
    showError(error);
  }
  await refresh();
}

async function refresh() {
  if (state.busy) return;
  state.busy = true;
  try {
    const query = new URLSearchParams(state.filter);
    const cursor = state.cursors[state.cursors.length - 1];
    if (cursor) query.set('after', cursor);
    const [summary, page, detail] = await Promise.all([
      api('/console/api/summary'),
      api(`/console/api/tasks?${query}`),
      // A failed fetch is told apart from a failed task (whose detail has an `error` field of its own).
      state.detailId ? api(`/console/api/tasks/${encodeURIComponent(state.detailId)}`).catch((problem) => ({ problem })) : null,
    ]);
    renderSummary(summary);
    renderTasks(page);
    if (detail && detail.problem) {
      showError(detail.problem);
      closeDetail();
    } else if (detail) renderDetail(detail);
    $('live').classList.remove('stale');
  } catch (error) {
    $('live').classList.add('stale');
    showError(error);
  } finally {
    state.busy = false;
  }
}

async function start() {
  const session = await api('/console/api/session');
  state.csrfToken = session.csrfToken;
  state.subject = session.subject;
  $('who').textContent = `signed in as ${session.subject}`;
  const hash = /^#task=(.+)$/.exec(location.hash);
  if (hash) state.detailId = decodeURIComponent(hash[1]);
  // A link to another task's detail followed from this page changes the hash only.
  window.addEventListener('hashchange', () => {
    const next = /^#task=(.+)$/.exec(location.hash);
    if (next) openDetail(decodeURIComponent(next[1]));
  });
  $('filters').addEventListener('submit', (event) => {
    event.preventDefault();
    const filter = new URLSearchParams();
    for (const [name, value] of new FormData(event.target)) if (value !== '') filter.set(name, String(value));
    state.filter = filter;
    state.cursors = [''];
    showError(null);
    void refresh();
  });
  $('older').addEventListener('click', () => {
    if (state.next === null) return;
    state.cursors.push(state.next);
    void refresh();
  });
  $('newer').addEventListener('click', () => {
    if (state.cursors.length > 1) state.cursors.pop();
    void refresh();
  });
  $('detail-close').addEventListener('click', closeDetail);
  $('detail-cancel').addEventListener('click', () => state.detailId && cancel(state.detailId, $('detail-cancel')));
  $('detail-retry').addEventListener('click', () => state.detailId && retry(state.detailId, $('detail-retry')));
  $('bulk-cancel').addEventListener('click', () => void bulkCancel());
  $('sign-out').addEventListener('click', async () => {
    await fetch('/console/logout', { method: 'POST', headers: { 'x-csrf-token': state.csrfToken } });
    location.assign('/console/login');
  });
  await refresh();
  setInterval(() => void refresh(), REFRESH_MS);
}

document.addEventListener('DOMContentLoaded', () => {
  start().catch(showError);
});
