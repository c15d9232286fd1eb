/**
 * The live view's script (`app.js`): plain browser JavaScript, no
 * framework, no build step; a string module for the reason `page.ts` gives.
 *
 * It keeps the keys in a Map, applies the server's snapshot and batched
 * deltas to it, and renders at most once per animation frame. Only the
 * first `MAX_ROWS` matches of the filter are in the DOM, in a pool of rows
 * whose cells are written only when their text changes, so that 10 000
 * keys and hundreds of events a second stay a few small DOM writes per
 * batch. Everything the server sent is put in the page as text, never as
 * HTML. `window.rxkubeLiveView` counts renders and their time, for
 * `bench/liveview.ts`.
 */
export const liveViewScript = String.raw`'use strict';
(function () {
  var MAX_ROWS = 200;
  // Figures for bench/liveview.ts: renders and messages, their time, the last 1000 render times.
  var stats = { renders: 0, renderMs: 0, maxRenderMs: 0, recentRenderMs: [], messages: 0, snapshots: 0, messageMs: 0 };
  window.rxkubeLiveView = stats;
  var el = function (id) { return document.getElementById(id); };
  var keys = new Map();
  var informers = new Map();
  var view = { controller: '', leading: undefined, identity: '', queue: null, now: 0, receivedAt: 0, ended: '', limits: null };
  var matches = [];
  var listStale = true;
  var changedKeys = new Set();
  var selected = null;
  var detailWanted = false;
  var frame = 0;
  var connected = false;

  function serverNow() { return view.now + (Date.now() - view.receivedAt); }
  function ms(n) {
    if (n === undefined || n === null) return '';
    if (n < 1) return n.toFixed(2) + ' ms';
    if (n < 1000) return Math.round(n) + ' ms';
    if (n < 60000) return (n / 1000).toFixed(1) + ' s';
    if (n < 3600000) return Math.floor(n / 60000) + ' min ' + Math.round((n % 60000) / 1000) + ' s';
    return (n / 3600000).toFixed(1) + ' h';
  }
  function clock(at) { return new Date(at).toISOString().slice(11, 23); }
  function stateText(k) {
    if (k.state === 'idle') return k.result === 'dropped' ? 'dropped' : k.runs > 0 ? 'done' : 'idle';
    return k.state;
  }
  function nextText(k) {
    if (k.state !== 'delayed' || k.nextRunAt === undefined) return '';
    var what = k.delayReason === 'error' ? 'retry' : 'requeue';
    var left = k.nextRunAt - serverNow();
    return left > 0 ? what + ' in ' + ms(left) : what + ' due';
  }
  function causeText(c) {
    if (!c) return '';
    if (c.via === 'retry' || c.via === 'requeue') return c.via;
    if (c.via === 'resync') return 'resync ' + c.objectKey;
    if (c.via === 'trigger') return 'trigger ' + c.resource;
    return (c.via === 'for' ? '' : c.via + ' ') + c.delta + ' ' + c.resource + ' ' + c.objectKey + (c.initial ? ' (initial)' : '');
  }
  function entryText(e) {
    switch (e.type) {
      case 'trigger': return 'trigger  ' + causeText(e.cause);
      case 'queue': return 'queue    ' + e.state + (e.delay !== undefined ? ' for ' + ms(e.delay) : '') + (e.reason ? ' (' + e.reason + ')' : '');
      case 'run-start': return 'run      attempt ' + e.attempt + (e.traceId ? ' trace ' + e.traceId : '');
      case 'run-end': return 'end      ' + e.result + ' after ' + ms(e.duration) + (e.error ? ': ' + e.error : '') + (e.requeueAfter !== undefined ? ' (requeue after ' + ms(e.requeueAfter) + ')' : '');
      case 'write': return 'write    ' + e.verb + ' ' + e.resource + (e.objectKey ? ' ' + e.objectKey : '') + ' -> ' + e.code + (e.error ? ': ' + e.error : '');
      case 'event': return 'event    ' + e.eventType + ' ' + e.reason + ': ' + e.message;
      default: return String(e.type);
    }
  }
  function setText(node, text) { if (node.textContent !== text) node.textContent = text; }
  function cell(tr, text, cls) {
    var td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }

  // The pool of key rows: built once, reused for whichever keys are shown.
  var keyBody = el('keys').tBodies[0];
  var pool = [];
  for (var i = 0; i < MAX_ROWS; i++) {
    var tr = document.createElement('tr');
    tr.hidden = true;
    var row = { tr: tr, key: null, runs: null, cells: [] };
    for (var c = 0; c < 8; c++) row.cells.push(cell(tr, ''));
    row.cells[0].className = 'key';
    row.cells[5].className = 'runs';
    row.cells[6].className = 'error';
    row.cells[7].className = 'next';
    keyBody.appendChild(tr);
    pool.push(row);
  }

  function applyCommon(m) {
    view.now = m.now;
    view.receivedAt = Date.now();
    if (m.controller !== undefined) view.controller = m.controller;
    if (m.leading !== undefined) view.leading = m.leading;
    if (m.identity !== undefined) view.identity = m.identity;
    if (m.ended !== undefined) view.ended = m.ended;
    view.queue = m.queue;
    for (var i = 0; i < m.informers.length; i++) informers.set(m.informers[i].resource, m.informers[i]);
  }
  function onSnapshot(e) {
    var t0 = performance.now();
    var m = JSON.parse(e.data);
    stats.messages++;
    stats.snapshots++;
    keys = new Map();
    informers = new Map();
    view.limits = m.limits;
    applyCommon(m);
    for (var i = 0; i < m.keys.length; i++) keys.set(m.keys[i].key, m.keys[i]);
    listStale = true;
    if (selected !== null) detailWanted = true;
    schedule();
    stats.messageMs += performance.now() - t0;
  }
  function onDelta(e) {
    var t0 = performance.now();
    var m = JSON.parse(e.data);
    stats.messages++;
    applyCommon(m);
    for (var i = 0; i < m.keys.length; i++) {
      keys.set(m.keys[i].key, m.keys[i]);
      changedKeys.add(m.keys[i].key);
    }
    for (var j = 0; j < m.removed.length; j++) keys.delete(m.removed[j]);
    if (m.keys.length > 0 || m.removed.length > 0) listStale = true;
    if (selected !== null && changedKeys.has(selected)) detailWanted = true;
    schedule();
    stats.messageMs += performance.now() - t0;
  }

  var source = null;
  function setStatus(text, cls) {
    var s = el('status');
    setText(s, text);
    s.className = 'badge status ' + cls;
  }
  function connect() {
    source = new EventSource('events');
    source.addEventListener('snapshot', onSnapshot);
    source.addEventListener('delta', onDelta);
    source.onopen = function () { connected = true; setStatus('live', 'live'); };
    source.onerror = function () {
      connected = false;
      if (source.readyState === EventSource.CLOSED) {
        // The server refused the stream (or it is gone): the browser will not retry on its own.
        setStatus('disconnected, retrying…', 'down');
        source.close();
        setTimeout(connect, 2000);
      } else {
        setStatus('reconnecting…', 'down');
      }
    };
  }

  function schedule() {
    if (frame === 0) frame = requestAnimationFrame(render);
  }

  function matchesFilter(k, q, state) {
    if (q !== '' && k.key.toLowerCase().indexOf(q) < 0) return false;
    if (state === '') return true;
    if (state === 'failing') return k.result === 'error' || k.result === 'dropped';
    return k.state === state;
  }
  function recompute() {
    var q = el('filter').value.trim().toLowerCase();
    var state = el('state-filter').value;
    var order = el('order').value;
    matches = [];
    keys.forEach(function (k) { if (matchesFilter(k, q, state)) matches.push(k); });
    // By key (the default) a batch rewrites only the rows whose key changed; by recency every shown row moves, and the
    // browser repaints them all (bench:liveview measures both).
    if (order === 'recent') matches.sort(function (a, b) { return b.at - a.at; });
    else if (order === 'attempt') matches.sort(function (a, b) { return b.attempt - a.attempt || b.at - a.at; });
    else matches.sort(function (a, b) { return a.key < b.key ? -1 : a.key > b.key ? 1 : 0; });
    listStale = false;
  }

  function renderRow(row, k) {
    if (row.tr.hidden) row.tr.hidden = false;
    if (row.key !== k.key) {
      row.key = k.key;
      row.tr.dataset.key = k.key;
    }
    row.tr.classList.toggle('selected', k.key === selected);
    var st = stateText(k);
    setText(row.cells[0], k.key);
    setText(row.cells[1], st);
    var cls = 'state state-' + st;
    if (row.cells[1].className !== cls) row.cells[1].className = cls;
    setText(row.cells[2], k.attempt > 0 ? String(k.attempt) : '');
    setText(row.cells[3], k.result || '');
    var rcls = 'outcome result-' + (k.result || 'none');
    if (row.cells[3].className !== rcls) row.cells[3].className = rcls;
    setText(row.cells[4], ms(k.duration));
    if (row.runs !== k.recent) {
      row.runs = k.recent;
      var box = row.cells[5];
      while (box.firstChild) box.removeChild(box.firstChild);
      for (var i = 0; i < k.recent.length; i++) {
        var s = document.createElement('span');
        var letter = k.recent.charAt(i);
        s.className = letter === '·' ? 'r-run' : 'r-' + letter;
        s.title = { s: 'success', e: 'error', r: 'requeue', a: 'requeue after', d: 'dropped' }[letter] || 'running';
        box.appendChild(s);
      }
    }
    setText(row.cells[6], k.error || '');
    row.cells[6].title = k.error || '';
    setText(row.cells[7], nextText(k));
  }

  function renderKeys() {
    if (listStale) recompute();
    var shown = Math.min(MAX_ROWS, matches.length);
    for (var i = 0; i < shown; i++) renderRow(pool[i], matches[i]);
    for (var j = shown; j < MAX_ROWS; j++) {
      if (!pool[j].tr.hidden) { pool[j].tr.hidden = true; pool[j].key = null; }
    }
    var count = keys.size + ' keys';
    if (matches.length !== keys.size) count += ', ' + matches.length + ' match';
    if (matches.length > MAX_ROWS) count += ', showing the first ' + MAX_ROWS;
    setText(el('key-count'), count);
  }

  function renderInformers() {
    var body = el('informers').tBodies[0];
    var list = Array.from(informers.values()).sort(function (a, b) { return a.resource < b.resource ? -1 : 1; });
    while (body.rows.length > list.length) body.deleteRow(-1);
    for (var i = 0; i < list.length; i++) {
      var inf = list[i];
      var tr = body.rows[i] || body.insertRow(-1);
      while (tr.cells.length < 7) tr.insertCell(-1);
      tr.dataset.resource = inf.resource;
      setText(tr.cells[0], inf.resource);
      setText(tr.cells[1], inf.synced ? 'yes' : 'no');
      setText(tr.cells[2], String(inf.objects));
      setText(tr.cells[3], inf.resourceVersion || '');
      setText(tr.cells[4], String(inf.relists));
      setText(tr.cells[5], String(inf.failures));
      setText(tr.cells[6], inf.lastError ? inf.lastError + ' (' + ms(serverNow() - inf.lastErrorAt) + ' ago)' : '');
      tr.cells[6].className = 'error';
    }
  }

  function renderHeader() {
    setText(el('controller'), view.controller || 'controller');
    setText(el('leading'), view.leading === undefined ? '' : view.leading ? 'leading' : 'standing by');
    var ended = el('ended');
    ended.hidden = view.ended === '';
    setText(ended, view.ended);
    if (view.receivedAt > 0) setText(el('clock'), clock(serverNow()));
    var q = view.queue;
    if (!q) return;
    setText(el('queue-depth'), String(q.depth));
    setText(el('queue-running'), String(q.running));
    setText(el('queue-delayed'), String(q.delayed));
    setText(el('queue-longest'), q.depth > 0 ? ms(q.longestWait + (connected ? Date.now() - view.receivedAt : 0)) : '–');
  }

  function render() {
    frame = 0;
    var t0 = performance.now();
    renderHeader();
    renderInformers();
    renderKeys();
    changedKeys.clear();
    if (detailWanted) { detailWanted = false; loadDetail(); }
    var took = performance.now() - t0;
    stats.renders++;
    stats.renderMs += took;
    if (took > stats.maxRenderMs) stats.maxRenderMs = took;
    stats.recentRenderMs.push(took);
    if (stats.recentRenderMs.length > 1000) stats.recentRenderMs.shift();
  }

  // The detail of one key, fetched when it is clicked and again when a delta says it changed.
  var loading = false;
  function loadDetail() {
    if (selected === null) return;
    if (loading) { detailWanted = true; return; }
    loading = true;
    var key = selected;
    fetch('api/key?key=' + encodeURIComponent(key)).then(function (res) {
      return res.json().then(function (body) { return { ok: res.ok, body: body }; });
    }).then(function (r) {
      if (key !== selected) return;
      if (!r.ok) showDetailError(r.body.error || 'the server said no');
      else showDetail(r.body);
    }, function (err) {
      if (key === selected) showDetailError('could not load the key: ' + err.message);
    }).then(function () {
      loading = false;
      if (detailWanted) { detailWanted = false; loadDetail(); }
    });
  }
  function showDetailError(text) {
    var p = el('detail-error');
    p.hidden = false;
    setText(p, text);
  }
  function showDetail(d) {
    el('detail-error').hidden = true;
    var s = d.summary;
    setText(el('detail-summary'), stateText(s) + (s.runs > 0 ? ', ' + s.runs + ' runs' : '') + (nextText(s) ? ', ' + nextText(s) : '') + ', last activity ' + clock(s.at));
    var body = el('detail-runs').tBodies[0];
    while (body.firstChild) body.removeChild(body.firstChild);
    for (var i = d.runs.length - 1; i >= 0; i--) {
      var run = d.runs[i];
      var tr = document.createElement('tr');
      cell(tr, clock(run.startedAt));
      cell(tr, causeText(run.cause) + (run.triggers > 1 ? ' (+' + (run.triggers - 1) + ' coalesced)' : ''));
      cell(tr, String(run.attempt));
      cell(tr, run.duration === undefined ? 'running' : ms(run.duration));
      cell(tr, run.result || '', 'result-' + (run.result || 'none'));
      cell(tr, run.error || '', 'error');
      cell(tr, run.nextRunAt !== undefined ? clock(run.nextRunAt) : '', 'next');
      cell(tr, String(run.writes));
      cell(tr, run.traceId || '', 'trace');
      body.appendChild(tr);
    }
    var list = el('detail-history');
    while (list.firstChild) list.removeChild(list.firstChild);
    for (var j = d.history.length - 1; j >= 0; j--) {
      var li = document.createElement('li');
      li.textContent = clock(d.history[j].at) + '  ' + entryText(d.history[j]);
      list.appendChild(li);
    }
    setText(el('detail-object'), d.object !== undefined ? JSON.stringify(d.object, null, 2) : d.cached === false ? 'not in the cache (deleted, or not listed yet)' : 'the view has no access to the cache');
  }
  function select(key) {
    selected = key;
    el('detail').hidden = false;
    document.querySelector('main').classList.add('with-detail');
    setText(el('detail-key'), key);
    setText(el('detail-summary'), 'loading…');
    loadDetail();
    schedule();
  }

  keyBody.addEventListener('click', function (e) {
    var tr = e.target.closest('tr');
    if (tr && tr.dataset.key) select(tr.dataset.key);
  });
  el('detail-close').addEventListener('click', function () {
    selected = null;
    el('detail').hidden = true;
    document.querySelector('main').classList.remove('with-detail');
    schedule();
  });
  ['filter', 'state-filter', 'order'].forEach(function (id) {
    el(id).addEventListener('input', function () { listStale = true; schedule(); });
  });
  // Countdowns and waits move on between batches.
  setInterval(schedule, 1000);
  var wanted = new URLSearchParams(location.search).get('key');
  if (wanted) select(wanted);
  connect();
})();
`;
