// QA console of referrals-sandbox. Plain JavaScript, no build step: it reads
// and drives the admin API under /__sandbox/ and renders with the DOM API
// (textContent only, never innerHTML, since records carry partner data).
'use strict';

(() => {
  // The admin API is the parent of this page's directory (/__sandbox/ui/ →
  // /__sandbox/), so the console also works behind a path prefix.
  const base = new URL('../', window.location.href);
  const journalPollMs = 1000;
  const rulesPollMs = 2000;
  const clockPollMs = 10000;
  const journalKeep = 2000;
  const tokenKey = 'referrals-sandbox-admin-token';

  const state = {
    token: window.sessionStorage.getItem(tokenKey) || '',
    view: '',
    clients: [],
    library: [],
    rules: [],
    active: [],
    ended: [],
    saved: [],
    journal: [], // oldest first
    lastId: 0,
    journalLoaded: false,
    polls: 0,
    paused: false,
    selectedId: 0,
    unseen: 0,
    clockDelta: 0,
    clockReal: true,
    clockKnown: false, // the header shows a time only once the sandbox told it
    access: false, // the admin API answered: the page may show sandbox state
    started: false, // the polls run (started once, on first access)
    data: { referrals: [], qualified: [], refCursor: null, qualCursor: null, openAudits: new Set() },
    personas: [], // GET /__sandbox/personas, loaded once with the data view
  };

  // ---- small helpers --------------------------------------------------

  const $ = (id) => document.getElementById(id);

  // el builds an element: props may hold class, text, attrs (attributes),
  // data (dataset) and on (event handlers); children are nodes or strings.
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    const p = props || {};
    if (p.class) node.className = p.class;
    if (p.text !== undefined) node.textContent = String(p.text);
    for (const [k, v] of Object.entries(p.attrs || {})) {
      if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? '' : String(v));
    }
    for (const [k, v] of Object.entries(p.data || {})) node.dataset[k] = String(v);
    for (const [k, v] of Object.entries(p.on || {})) node.addEventListener(k, v);
    for (const c of children) {
      if (c !== undefined && c !== null && c !== false) node.append(c);
    }
    return node;
  }

  function button(label, props, onClick) {
    const p = Object.assign({}, props);
    p.attrs = Object.assign({ type: 'button' }, p.attrs);
    p.text = label;
    p.on = Object.assign({}, p.on, onClick ? { click: onClick } : {});
    return el('button', p);
  }

  function table(headers, rows, cls) {
    const head = el('tr', null, ...headers.map((h) => el('th', { attrs: { scope: 'col' }, class: h.class, text: h.text })));
    return el('div', { class: 'table-wrap' }, el('table', { class: 'table ' + (cls || '') }, el('thead', null, head), el('tbody', null, ...rows)));
  }

  // put replaces node's children, skipping absent ones (null, undefined,
  // false), which replaceChildren would print as text.
  function put(node, ...children) {
    node.replaceChildren(...children.filter((c) => c !== undefined && c !== null && c !== false));
  }

  // keepFocus re-renders part of the page and puts the keyboard focus back
  // on the control with the same data-focus-key, so a periodic refresh
  // never throws a keyboard user back to the top of the page.
  function keepFocus(render) {
    const key = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.focusKey : '';
    render();
    if (key) {
      const again = [...document.querySelectorAll('[data-focus-key]')].find((e) => e.dataset.focusKey === key);
      if (again) again.focus();
    }
  }

  // changed reports whether what a part of the page shows differs from its
  // last rendering, so refreshes that bring nothing new leave the DOM alone.
  const lastRendered = {};
  function changed(part, value) {
    const sig = JSON.stringify(value);
    if (lastRendered[part] === sig) return false;
    lastRendered[part] = sig;
    return true;
  }

  function empty(text) {
    return el('p', { class: 'empty', text });
  }

  let toastTimer = 0;
  function toast(message, kind) {
    const t = $('toast');
    t.textContent = message;
    t.className = 'toast show ' + (kind || '');
    window.clearTimeout(toastTimer);
    toastTimer = window.setTimeout(() => { t.className = 'toast'; }, kind === 'error' ? 8000 : 3500);
  }

  // shortTime renders a sandbox timestamp (RFC 3339, microseconds) as
  // HH:MM:SS.mmm in UTC: the journal's own zone, so times match the API's.
  function shortTime(at) {
    const m = /T(\d\d:\d\d:\d\d)(\.\d{1,3})?/.exec(at || '');
    return m ? m[1] + (m[2] || '.000').padEnd(4, '0') : at || '';
  }

  function dateTime(at) {
    const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)/.exec(at || '');
    return m ? m[1] + ' ' + m[2] : at || '';
  }

  // ---- the admin API ----------------------------------------------------

  class ApiError extends Error {
    constructor(status, body) {
      super(problemText(status, body));
      this.status = status;
      this.body = body;
    }
  }

  function problemText(status, body) {
    if (body && typeof body === 'object') {
      let text = body.detail || body.title || 'HTTP ' + status;
      if (Array.isArray(body.errors) && body.errors.length) {
        text += ': ' + body.errors.map((e) => e.field + ' ' + e.message).join('; ');
      }
      return text;
    }
    return 'HTTP ' + status + (typeof body === 'string' && body ? ': ' + body.slice(0, 200) : '');
  }

  async function api(method, path, body) {
    // The admin API refuses a state change without a JSON body ({} at least).
    if (body === undefined && method !== 'GET') body = {};
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (state.token) headers.Authorization = 'Bearer ' + state.token;
    const res = await fetch(new URL(path, base), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
    const text = await res.text();
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch (_) { data = text; }
    }
    if (res.status === 401) showAuth();
    if (!res.ok) throw new ApiError(res.status, data);
    return data;
  }

  // showAuth asks for the admin token and hides everything that shows
  // sandbox state (clock, views), since none of it can be read without it.
  function showAuth() {
    setAccess(false);
    const banner = $('auth');
    if (!banner.hidden) return;
    banner.hidden = false;
    $('auth-token').focus();
  }

  // setAccess shows or hides the parts of the page that show sandbox state.
  // Until the admin API has answered once they stay hidden, so the page
  // never shows the browser's own time or an empty list as the sandbox's.
  function setAccess(ok) {
    state.access = ok;
    for (const id of ['clock', 'tabs', 'main']) $(id).hidden = !ok;
    if (!ok) state.clockKnown = false;
  }

  function setUpAuth() {
    $('auth-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      state.token = $('auth-token').value.trim();
      window.sessionStorage.setItem(tokenKey, state.token);
      $('auth-error').textContent = '';
      connect(true);
    });
  }

  // connect asks the sandbox for its clock, the first thing the page shows,
  // and starts the console once that works. A refused token keeps the
  // token form up (with a message when the user just entered it); an
  // unreachable sandbox is said so and tried again.
  async function connect(fromForm) {
    let clock;
    try {
      clock = await api('GET', 'clock');
    } catch (err) {
      if (err.status === 401) {
        if (fromForm) $('auth-error').textContent = 'The sandbox refused this token: ' + err.message;
        return;
      }
      $('connect-error').hidden = false;
      $('connect-error').textContent = 'Could not reach the sandbox (' + err.message + '); trying again…';
      window.setTimeout(() => connect(false), 3000);
      return;
    }
    $('connect-error').hidden = true;
    $('auth').hidden = true;
    setAccess(true);
    showClock(clock);
    await refreshAll();
    if (!state.started) {
      state.started = true;
      pollJournal();
      window.setInterval(tickClock, 1000);
      window.setInterval(loadClock, clockPollMs);
      window.setInterval(() => { if (state.access && state.view === 'scenarios' && !document.hidden) loadScenarios(); }, rulesPollMs);
    }
  }

  // ---- views ------------------------------------------------------------

  const views = ['scenarios', 'journal', 'data', 'clients', 'report'];

  function route() {
    const wanted = window.location.hash.replace('#', '');
    if (!views.includes(wanted) && state.view) return; // an in-page anchor, not a view
    const view = views.includes(wanted) ? wanted : 'scenarios';
    state.view = view;
    for (const v of views) {
      $('view-' + v).hidden = v !== view;
      const tab = $('tab-' + v);
      if (v === view) tab.setAttribute('aria-current', 'page');
      else tab.removeAttribute('aria-current');
    }
    if (view === 'journal') {
      state.unseen = 0;
      renderUnseen();
    }
    if (view === 'data') loadData();
    if (view === 'report') loadReport();
    if (view === 'clients') loadClientsView();
    if (view === 'scenarios') loadScenarios();
  }

  // ---- clients (shared by every client selector) --------------------------

  async function loadClients() {
    try {
      const body = await api('GET', 'clients');
      state.clients = body.clients || [];
    } catch (err) {
      toast('Could not load clients: ' + err.message, 'error');
      return;
    }
    const ids = state.clients.map((c) => c.clientId);
    fillSelect($('scenario-client'), ids, 'every client');
    fillSelect($('rule-client'), ids, 'any client');
    fillSelect($('filter-client'), journalClientIds(), 'any client');
    fillSelect($('report-client'), ids, 'all clients');
    fillSelect($('clock-client'), ids, null);
    const partners = state.clients.filter((c) => c.roles.some((r) => r.startsWith('Referrals.') || r.startsWith('QualifiedReferrals.')));
    fillSelect($('data-client'), (partners.length ? partners : state.clients).map((c) => c.clientId), null);
  }

  // fillSelect replaces a select's options, keeping its value when it is
  // still offered; anyLabel is the label of the "" option, null for none.
  function fillSelect(select, ids, anyLabel) {
    const keep = select.value;
    const options = [];
    if (anyLabel !== null) options.push(el('option', { attrs: { value: '' }, text: anyLabel }));
    for (const id of ids) options.push(el('option', { attrs: { value: id }, text: id }));
    select.replaceChildren(...options);
    if ([...select.options].some((o) => o.value === keep)) select.value = keep;
  }

  function journalClientIds() {
    const ids = new Set(state.clients.map((c) => c.clientId));
    for (const e of state.journal) if (e.clientId) ids.add(e.clientId);
    return [...ids].sort();
  }

  // ---- scenarios and rules ------------------------------------------------

  async function loadScenarios() {
    try {
      const [lib, rules] = await Promise.all([
        state.library.length ? null : api('GET', 'library'),
        api('GET', 'scenarios'),
      ]);
      if (lib) {
        state.library = lib.scenarios || [];
        state.saved = lib.saved || [];
      }
      state.rules = rules.rules || [];
      state.active = rules.active || [];
      state.ended = rules.ended || [];
    } catch (err) {
      $('rules').replaceChildren(empty('Could not load the rules: ' + err.message));
      return;
    }
    if (changed('library', [state.library, state.active, state.ended, $('scenario-client').value])) keepFocus(renderLibrary);
    if (changed('rules', state.rules)) keepFocus(renderRules);
    renderSaveSource();
  }

  function activationsOf(name) {
    return state.active.filter((a) => a.name === name);
  }

  function renderLibrary() {
    const target = $('scenario-client').value;
    const items = state.library.map((sc) => {
      const acts = activationsOf(sc.name);
      const on = acts.some((a) => (a.clientId || '') === target);
      const forWhom = target ? ' for ' + target : '';
      const chips = acts.map((a) => el('span', { class: 'chip on' },
        'on · ' + (a.clientId || 'every client'),
        button('×', {
          class: 'chip-off',
          attrs: { 'aria-label': 'Switch off ' + sc.name + (a.clientId ? ' for ' + a.clientId : ' for every client'), title: 'Switch off' },
          data: { focusKey: 'off:' + sc.name + ':' + (a.clientId || '') },
        }, () => deactivate(sc.name, a.clientId || ''))));
      // An activation whose timeline is over is not on; it shows as ended
      // until it is cleared, so the console never shows a finished incident as running.
      state.ended.filter((a) => a.name === sc.name).forEach((a) => chips.push(el('span', { class: 'chip ended' },
        'ended · ' + (a.clientId || 'every client'),
        button('×', {
          class: 'chip-off',
          attrs: { 'aria-label': 'Clear ' + sc.name + (a.clientId ? ' for ' + a.clientId : ' for every client'), title: 'Clear' },
          data: { focusKey: 'clear:' + sc.name + ':' + (a.clientId || '') },
        }, () => deactivate(sc.name, a.clientId || '')))));
      const saved = state.saved.includes(sc.name);
      return el('li', { class: 'scenario' + (acts.length ? ' is-on' : ''), data: { scenario: sc.name } },
        el('div', { class: 'scenario-text' },
          el('h3', { text: sc.name }),
          el('p', { text: sc.description }),
          chips.length ? el('div', { class: 'chips' }, ...chips) : null),
        saved ? button('Delete', {
          class: 'danger',
          data: { action: 'delete-saved', scenario: sc.name, focusKey: 'delete:' + sc.name },
          attrs: { 'aria-label': 'Delete saved scenario ' + sc.name },
        }, () => deleteSaved(sc.name)) : null,
        button(on ? 'Switch off' : 'Switch on', {
          class: on ? 'toggle on' : 'toggle',
          data: { action: 'toggle', scenario: sc.name, focusKey: 'toggle:' + sc.name },
          attrs: { 'aria-pressed': on ? 'true' : 'false', 'aria-label': (on ? 'Switch off ' : 'Switch on ') + sc.name + forWhom },
        }, () => (on ? deactivate(sc.name, target) : activate(sc.name, target))));
    });
    $('scenario-list').replaceChildren(...(items.length ? items : [el('li', { class: 'empty', text: 'No named scenarios.' })]));
  }

  async function activate(name, clientId) {
    try {
      await api('POST', 'library/' + encodeURIComponent(name), clientId ? { clientId } : {});
      toast(name + ' switched on' + (clientId ? ' for ' + clientId : ' for every client'), 'ok');
    } catch (err) {
      toast('Could not switch on ' + name + ': ' + err.message, 'error');
    }
    await loadScenarios();
  }

  // deleteSaved removes a scenario saved at run time; the sandbox switches
  // it off first. Built-in ones have no Delete button.
  async function deleteSaved(name) {
    if (!window.confirm('Delete saved scenario ' + name + '? It is switched off wherever it is on, and its name is free again.')) return;
    try {
      await api('DELETE', 'library/saved/' + encodeURIComponent(name));
      toast(name + ' deleted', 'ok');
    } catch (err) {
      toast('Could not delete ' + name + ': ' + err.message, 'error');
    }
    state.library = [];
    await loadScenarios();
  }

  async function deactivate(name, clientId) {
    const q = clientId ? '?clientId=' + encodeURIComponent(clientId) : '';
    try {
      await api('DELETE', 'library/' + encodeURIComponent(name) + q);
      toast(name + ' switched off', 'ok');
    } catch (err) {
      toast('Could not switch off ' + name + ': ' + err.message, 'error');
    }
    await loadScenarios();
  }

  function ruleMatch(r) {
    const parts = [r.endpoint || 'any endpoint'];
    if (r.method) parts.push(r.method);
    parts.push(r.path || 'any path');
    parts.push(r.clientId || 'any client');
    return parts.join(' · ');
  }

  function ruleEffect(r) {
    const parts = [];
    if (r.status) parts.push(String(r.status) + (r.retryAfterSeconds ? ', Retry-After ' + r.retryAfterSeconds + 's' : ''));
    if (r.error) parts.push(r.error);
    if (r.fault) parts.push('fault: ' + r.fault);
    if (r.delay) {
      const d = r.delay;
      if (d.fixed) parts.push('delay ' + d.fixed);
      else if (d.median) parts.push('delay ~' + d.median + (d.max ? ' (max ' + d.max + ')' : ''));
      else parts.push('delay ' + (d.min || '0') + '–' + d.max);
    }
    if (r.probability) parts.push(Math.round(r.probability * 100) + '% of calls');
    if (r.after) parts.push('after ' + r.after);
    if (r.timeline) parts.push('timeline of ' + r.timeline.length + ' phases, below');
    return parts.join(', ');
  }

  function ruleRemaining(r) {
    if (r.remaining !== undefined && r.remaining !== null) return String(r.remaining);
    if (r.perClient) return 'per client';
    if (r.timeline) return 'until its end';
    return 'until cleared';
  }

  function renderRules() {
    if (!state.rules.length) {
      $('rules').replaceChildren(empty('No active rules: every request gets a normal answer.'));
      return;
    }
    const rows = state.rules.flatMap((r) => [el('tr', { data: { ruleId: r.id } },
      el('td', null, el('code', { text: r.id }), r.scenario ? el('div', { class: 'sub', text: r.scenario }) : null),
      el('td', { class: 'wrap', text: ruleMatch(r) }),
      el('td', { class: 'wrap', text: ruleEffect(r) }),
      el('td', { class: 'num', text: ruleRemaining(r) }),
      el('td', { class: 'num opt', text: r.hits }),
      el('td', { class: 'actions' }, button('Remove', { class: 'small', data: { focusKey: 'remove:' + r.id }, attrs: { 'aria-label': 'Remove rule ' + r.id } }, () => removeRule(r.id)))),
    r.timeline && r.timelineNow ? el('tr', { class: 'timeline-row', data: { timelineOf: r.id } }, el('td', { attrs: { colspan: 6 } }, timelineView(r))) : null].filter(Boolean));
    $('rules').replaceChildren(table([
      { text: 'Rule' }, { text: 'Matches' }, { text: 'Effect' }, { text: 'Remaining', class: 'num' }, { text: 'Hits', class: 'num opt' }, { text: '' },
    ], rows, 'rules'));
  }

  // goDuration reads a Go duration ("5m0s", "1h30m", "800ms") in
  // milliseconds, as the rules list gives a phase's for and timeLeft.
  function goDuration(text) {
    const units = { h: 3600e3, m: 60e3, s: 1e3, ms: 1, us: 1e-3, 'µs': 1e-3, ns: 1e-6 };
    let ms = 0;
    for (const [, n, unit] of String(text).matchAll(/([0-9.]+)(h|ms|m|s|us|µs|ns)/g)) ms += Number(n) * units[unit];
    return ms;
  }

  // shortDuration writes ms as a Go duration to the second ("4m53s"),
  // which is as precise as a person reads a countdown.
  function shortDuration(ms) {
    let sec = Math.ceil(ms / 1000);
    const h = Math.floor(sec / 3600);
    sec -= h * 3600;
    const m = Math.floor(sec / 60);
    sec -= m * 60;
    return (h ? h + 'h' : '') + (h || m ? m + 'm' : '') + sec + 's';
  }

  // timelineView draws a timeline rule: its phases in proportion to their
  // length, a marker at now (on the rule's clock), and a button that moves
  // that clock (the bound client's own, else the sandbox's) to the start
  // of the next phase, or past the last one, which retires the rule.
  function timelineView(r) {
    const at = r.timelineNow;
    const lengths = r.timeline.map((p) => goDuration(p.for));
    const total = lengths.reduce((a, b) => a + b, 0) || 1;
    const left = goDuration(at.timeLeft);
    const elapsed = lengths.slice(0, at.phase).reduce((a, b) => a + b, 0) + lengths[at.phase] - left;
    const clockName = r.clientId ? 'the clock of ' + r.clientId : 'the sandbox clock';
    const phases = r.timeline.map((p, i) => {
      const when = i < at.phase ? 'past' : i === at.phase ? 'current' : 'future';
      const li = el('li', { class: 'phase phase-' + when, data: { phase: i }, attrs: { title: 'Phase ' + (i + 1) + ': ' + p.for } },
        el('span', { class: 'phase-for', text: p.for }),
        el('span', { class: 'phase-effect', text: ruleEffect(p) || 'normal answers' }));
      li.style.flexGrow = String(lengths[i] || 1); // CSSOM, which the page's CSP allows
      return li;
    });
    const marker = el('div', { class: 'timeline-now', attrs: { 'aria-hidden': 'true' } });
    marker.style.left = Math.min(100, Math.max(0, (100 * elapsed) / total)).toFixed(2) + '%';
    const last = at.phase === r.timeline.length - 1;
    const label = last ? 'End the timeline' : 'Jump to phase ' + (at.phase + 2);
    return el('div', { class: 'timeline', data: { ruleId: r.id } },
      el('div', { class: 'timeline-track' },
        el('ol', { class: 'timeline-phases', attrs: { 'aria-label': 'Phases of rule ' + r.id } }, ...phases),
        marker),
      el('p', { class: 'timeline-status' },
        'Phase ' + (at.phase + 1) + ' of ' + r.timeline.length + ', ' + shortDuration(left) + ' left on ' + clockName + ' ',
        button(label + ' →', {
          class: 'small',
          data: { action: 'next-phase', focusKey: 'next-phase:' + r.id },
          attrs: { 'aria-label': label + ' of rule ' + r.id + ' (moves ' + clockName + ' by ' + shortDuration(left) + ')' },
        }, () => jumpClock(left, r.clientId || '', label + ' of rule ' + r.id))));
  }

  // jumpClock advances a client's own clock (or the sandbox's, for "") by
  // ms, rounded up so the move reaches the next phase, then shows the
  // rules and the records as they now are.
  async function jumpClock(ms, clientId, what) {
    const body = { advance: Math.ceil(ms) + 'ms' };
    if (clientId) body.clientId = clientId;
    try {
      await api('POST', 'clock', body);
      toast(what + ': clock moved', 'ok');
    } catch (err) {
      toast('Could not move the clock: ' + err.message, 'error');
    }
    clockMoved();
  }

  // clockMoved refreshes what a clock move changes in the open view.
  function clockMoved() {
    loadClock();
    if (state.view === 'scenarios') loadScenarios();
    if (state.view === 'data') loadData();
  }

  async function removeRule(id) {
    try {
      await api('DELETE', 'scenarios/' + encodeURIComponent(id));
      toast('Rule ' + id + ' removed', 'ok');
    } catch (err) {
      toast('Could not remove rule ' + id + ': ' + err.message, 'error');
    }
    await loadScenarios();
  }

  async function clearRules() {
    try {
      await api('DELETE', 'scenarios');
      toast('Every rule and scenario cleared', 'ok');
    } catch (err) {
      toast('Could not clear the rules: ' + err.message, 'error');
    }
    await loadScenarios();
  }

  // ---- authoring: the rule form, its phases, saving as a scenario ----------

  // The answers a rule or a phase can give, as "kind:value" (status, error
  // or fault); "" is a normal answer (with a delay, or a lull in a phase).
  const answerChoices = [...document.querySelectorAll('#rule-answer option')].map((o) => [o.value, o.textContent]);

  // setAnswer writes the answer of rule (or phase) r into a rule from the
  // form's "kind:value" choice.
  function setAnswer(r, choice) {
    const [kind, value] = choice.split(':');
    if (kind === 'status') r.status = Number(value);
    if (kind === 'error') r.error = value;
    if (kind === 'fault') r.fault = value;
  }

  let phaseSeq = 0; // makes each phase's element ids unique, so labels point at them

  // phaseFields are the inputs of one phase: its field in the rule JSON
  // (for errors' field names) and how it is shown.
  const phaseFields = [
    { key: 'for', label: 'For', hint: 'e.g. 5m, 90s, 1h', attrs: { type: 'text', placeholder: '5m', required: true, autocomplete: 'off', spellcheck: 'false' } },
    { key: 'answer', label: 'Answer with', select: true },
    { key: 'delay', label: 'Delay (ms)', hint: 'optional', attrs: { type: 'number', min: 0, step: 50, inputmode: 'numeric' } },
    { key: 'probability', label: 'Probability (%)', hint: 'blank: always', attrs: { type: 'number', min: 0, max: 100, step: 'any', inputmode: 'decimal' } },
    { key: 'seed', label: 'Seed', hint: 'replays the draws', attrs: { type: 'number', min: 0, step: 1, inputmode: 'numeric' } },
    { key: 'retryAfterSeconds', label: 'Retry-After (s)', hint: '429/503', attrs: { type: 'number', min: 1, max: 3600, step: 1, inputmode: 'numeric' } },
  ];

  function addPhase() {
    const uid = ++phaseSeq;
    const fields = phaseFields.map((f) => {
      const id = 'phase-' + uid + '-' + f.key;
      const control = f.select
        ? el('select', { attrs: { id }, data: { phaseField: f.key } },
          ...answerChoices.map(([value, text]) => el('option', { attrs: { value }, text: value ? text : 'normal (lull or delay only)' })))
        : el('input', { attrs: Object.assign({ id }, f.attrs), data: { phaseField: f.key } });
      return el('div', { class: 'field' },
        el('label', { attrs: { for: id } }, f.label + ' ', f.hint ? el('span', { class: 'optional', text: f.hint }) : null),
        control);
    });
    const li = el('li', { class: 'phase-edit' },
      el('div', { class: 'phase-edit-head' },
        el('h3', { class: 'phase-edit-title' }),
        button('Remove', { class: 'small danger-outline', data: { action: 'remove-phase' } }, () => removePhase(li))),
      el('div', { class: 'phase-edit-grid' }, ...fields));
    $('phase-list').append(li);
    phasesChanged();
    li.querySelector('[data-phase-field="for"]').focus();
  }

  function removePhase(li) {
    const next = li.nextElementSibling || li.previousElementSibling;
    li.remove();
    phasesChanged();
    (next ? next.querySelector('[data-phase-field="for"]') : $('phase-add')).focus();
  }

  // phasesChanged numbers the phases, and turns the rule's own effects
  // off while it has phases: a timeline's effects go in its phases, and
  // times is refused beside them.
  function phasesChanged() {
    const items = [...$('phase-list').children];
    items.forEach((li, i) => {
      li.dataset.phase = String(i);
      li.querySelector('.phase-edit-title').textContent = 'Phase ' + (i + 1);
      li.querySelector('[data-action="remove-phase"]').setAttribute('aria-label', 'Remove phase ' + (i + 1));
    });
    const timeline = items.length > 0;
    for (const id of ['rule-answer', 'rule-delay', 'rule-times', 'rule-retry']) $(id).disabled = timeline;
    $('rule-form').classList.toggle('is-timeline', timeline);
  }

  // phaseFromForm builds one phase of the timeline JSON.
  function phaseFromForm(li) {
    const v = (key) => li.querySelector('[data-phase-field="' + key + '"]').value.trim();
    const phase = { for: v('for') };
    setAnswer(phase, v('answer'));
    if (v('delay')) phase.delay = { fixed: v('delay') + 'ms' };
    if (v('probability')) phase.probability = Number(v('probability')) / 100;
    if (v('seed')) phase.seed = Number(v('seed'));
    if (v('retryAfterSeconds')) phase.retryAfterSeconds = Number(v('retryAfterSeconds'));
    return phase;
  }

  // ruleFromForm builds the rule JSON of POST /__sandbox/scenarios; the
  // sandbox validates it and names the field at fault. With phases it is
  // a timeline rule, whose effects are all in its phases.
  function ruleFromForm() {
    const v = (id) => $(id).value.trim();
    const rule = { endpoint: v('rule-endpoint') };
    if (v('rule-method')) rule.method = v('rule-method');
    if (v('rule-path')) rule.path = v('rule-path');
    if (v('rule-client')) rule.clientId = v('rule-client');
    const phases = [...$('phase-list').children];
    if (phases.length) {
      rule.timeline = phases.map(phaseFromForm);
    } else {
      setAnswer(rule, v('rule-answer'));
      if (v('rule-delay')) rule.delay = { fixed: v('rule-delay') + 'ms' };
      if (v('rule-times')) rule.times = Number(v('rule-times'));
      if (v('rule-retry')) rule.retryAfterSeconds = Number(v('rule-retry'));
    }
    if (v('rule-description')) rule.description = v('rule-description');
    return rule;
  }

  // ruleFormControl finds the control of the rule form that an API error's
  // field (as "timeline[1].retryAfterSeconds" or "delay.fixed") names.
  function ruleFormControl(field) {
    const m = /^timeline\[(\d+)\](?:\.(\w+))?/.exec(field);
    if (m) {
      const li = $('phase-list').children[Number(m[1])];
      if (!li) return $('phase-add');
      const key = { status: 'answer', error: 'answer', fault: 'answer', reason: 'answer' }[m[2]] || m[2] || 'for';
      return li.querySelector('[data-phase-field="' + key + '"]') || li.querySelector('[data-phase-field="for"]');
    }
    const top = field.split(/[.[]/)[0];
    const id = {
      timeline: 'phase-add', rule: 'rule-answer', status: 'rule-answer', error: 'rule-answer', fault: 'rule-answer', reason: 'rule-answer',
      delay: 'rule-delay', times: 'rule-times', after: 'rule-times', perClient: 'rule-times', probability: 'rule-answer', seed: 'rule-answer',
      retryAfterSeconds: 'rule-retry', path: 'rule-path', method: 'rule-method', clientId: 'rule-client', endpoint: 'rule-endpoint', description: 'rule-description',
    }[top];
    return id ? $(id) : null;
  }

  // fieldName says in words which control an error's field is, for the
  // summary above the button.
  function fieldName(control, field) {
    if (control && control.id === 'phase-add') return 'Timeline phases';
    const label = control && control.labels && control.labels[0] ? control.labels[0].childNodes[0].textContent.trim() : '';
    const li = control && control.closest('.phase-edit');
    return (li ? 'Phase ' + (Number(li.dataset.phase) + 1) + ', ' : '') + (label || field);
  }

  // clearFieldErrors takes the marks of a previous answer off a form.
  function clearFieldErrors(form) {
    for (const p of form.querySelectorAll('.field-error')) p.remove();
    for (const c of form.querySelectorAll('[aria-describedby*="-error-text"]')) {
      c.removeAttribute('aria-invalid');
      const ids = c.getAttribute('aria-describedby').split(' ').filter((id) => id && !id.endsWith('-error-text'));
      if (ids.length) c.setAttribute('aria-describedby', ids.join(' '));
      else c.removeAttribute('aria-describedby');
    }
  }

  // showProblem shows an API refusal on a form: the summary in out (an
  // alert), and each of problem+json's errors[] next to the control its
  // field names (found by controlOf), which is marked invalid and
  // described by the message; the first such control gets the focus.
  function showProblem(form, out, err, controlOf, prefix) {
    clearFieldErrors(form);
    const errors = err.body && Array.isArray(err.body.errors) ? err.body.errors : [];
    const lines = [];
    let first = null;
    for (const e of errors) {
      const field = String(e.field || '');
      const control = controlOf(field);
      lines.push(el('li', null, fieldName(control, field) + ': ' + e.message, el('code', { class: 'field-path', text: ' (' + field + ')' })));
      if (!control) continue;
      const id = (control.id || 'control') + '-error-text';
      if (!$(id)) {
        control.closest('.field, fieldset').append(el('p', { class: 'field-error', attrs: { id }, text: e.message }));
        if (control.matches('input, select')) control.setAttribute('aria-invalid', 'true');
        control.setAttribute('aria-describedby', ((control.getAttribute('aria-describedby') || '') + ' ' + id).trim());
      }
      first = first || control;
    }
    // With errors[] the list says it all; the detail only points at it.
    const detail = err.body && typeof err.body === 'object' ? err.body.detail || err.body.title : '';
    put(out, el('p', { text: prefix + (lines.length ? '' : detail || err.message) }), lines.length ? el('ul', { class: 'field-errors' }, ...lines) : null);
    if (first) first.focus();
  }

  async function addRule(ev) {
    ev.preventDefault();
    const out = $('rule-form-error');
    out.textContent = '';
    clearFieldErrors($('rule-form'));
    try {
      const added = await api('POST', 'scenarios', ruleFromForm());
      toast('Rule ' + added.id + ' added', 'ok');
    } catch (err) {
      showProblem($('rule-form'), out, err, ruleFormControl, 'The sandbox refused the rule: ');
      return;
    }
    await loadScenarios();
  }

  // ruleFields are the fields of the admin API's Rule a scenario may hold:
  // an active rule is listed with its counters, id and clock, which are
  // not part of a rule to save.
  const ruleFields = ['description', 'method', 'path', 'clientId', 'endpoint', 'status', 'error', 'retryAfterSeconds', 'reason',
    'delay', 'fault', 'times', 'after', 'probability', 'seed', 'perClient', 'timeline'];
  const phaseKeys = ['for', 'status', 'error', 'retryAfterSeconds', 'reason', 'delay', 'fault', 'probability', 'seed'];

  function pick(obj, keys) {
    const out = {};
    for (const k of keys) if (obj[k] !== undefined && obj[k] !== null && obj[k] !== '' && obj[k] !== 0 && obj[k] !== false) out[k] = obj[k];
    return out;
  }

  // customRules are the active rules added one by one (not by switching
  // on a scenario), as rules to save.
  function customRules() {
    return state.rules.filter((r) => !r.scenario).map((r) => {
      const rule = pick(r, ruleFields);
      if (rule.timeline) rule.timeline = rule.timeline.map((p) => pick(p, phaseKeys));
      return rule;
    });
  }

  function renderSaveSource() {
    $('save-active-count').textContent = String(state.rules.filter((r) => !r.scenario).length);
  }

  // saveControl finds the control an error of POST /__sandbox/library
  // names: the name or description, or, when the form's rule is saved,
  // that rule's control (rules[0].timeline[1].for).
  function saveControl(field) {
    if (field === 'name') return $('save-name');
    if (field === 'description') return $('save-description');
    const m = /^rules\[0\]\.(.+)$/.exec(field);
    if (m && $('save-source-form').checked) return ruleFormControl(m[1]);
    return null;
  }

  // saveScenario saves the rule being built (or the active custom rules)
  // as a named scenario, then reloads the library list, which the page
  // otherwise keeps, so the new scenario shows with its Delete button.
  async function saveScenario(ev) {
    ev.preventDefault();
    const out = $('save-form-error');
    out.textContent = '';
    clearFieldErrors($('save-form'));
    clearFieldErrors($('rule-form'));
    const fromForm = $('save-source-form').checked;
    const body = { name: $('save-name').value.trim(), rules: fromForm ? [ruleFromForm()] : customRules() };
    const description = $('save-description').value.trim();
    if (description) body.description = description;
    if (!fromForm && !body.rules.length) {
      out.textContent = 'There are no active custom rules to save: add one with the form above, or save the rule built there.';
      return;
    }
    let saved;
    try {
      saved = await api('POST', 'library', body);
    } catch (err) {
      showProblem($('save-form'), out, err, saveControl, 'The sandbox did not save the scenario: ');
      return;
    }
    $('save-form').reset();
    toast('Saved as scenario ' + (saved && saved.name ? saved.name : body.name), 'ok');
    state.library = [];
    await loadScenarios();
  }

  // ---- journal ---------------------------------------------------------------

  function statusClass(e) {
    if (e.fault || !e.status) return 'fault';
    return Math.floor(e.status / 100) + 'xx';
  }

  function statusText(e) {
    return e.fault ? e.fault + (e.status ? ' (' + e.status + ')' : '') : String(e.status);
  }

  // matchesFilter applies the journal filters: client, path substring and
  // status (an exact code, a class such as 4xx or 4, or "fault").
  function matchesFilter(e) {
    const client = $('filter-client').value;
    if (client && e.clientId !== client) return false;
    const path = $('filter-path').value.trim().toLowerCase();
    if (path && !(e.path + (e.query ? '?' + e.query : '')).toLowerCase().includes(path)) return false;
    const status = $('filter-status').value.trim().toLowerCase();
    if (status) {
      const cls = statusClass(e);
      if (status === 'fault' || status === 'faults') return cls === 'fault';
      const m = /^([1-5])(xx)?$/.exec(status);
      if (m) return cls === m[1] + 'xx';
      return String(e.status) === status;
    }
    return true;
  }

  function journalRow(e) {
    const cls = statusClass(e);
    const select = () => showDetails(e.id);
    return el('tr', {
      class: 'st-' + cls + (e.id === state.selectedId ? ' selected' : ''),
      data: { id: e.id, requestId: e.requestId, status: e.status, statusClass: cls },
      on: { click: select },
    },
    el('td', { class: 'mono nowrap' }, shortTime(e.at), clockMark(e)),
    el('td', { class: 'mono', text: e.method }),
    el('td', { class: 'path' }, button(e.path + (e.query ? '?' + e.query : ''), {
      class: 'row-button',
      attrs: { 'aria-label': 'Details of ' + e.method + ' ' + e.path + ' answered ' + statusText(e) + (e.clientId ? ' for ' + e.clientId : '') },
      on: { click: (ev) => { ev.stopPropagation(); select(); } },
    })),
    el('td', { class: 'nowrap', text: e.clientId || '—' }),
    el('td', null, el('span', { class: 'badge b-' + cls, text: statusText(e) })),
    el('td', { class: 'num opt', text: e.durationMs.toFixed(1) }),
    el('td', { class: 'opt sub rule', text: e.scenario || e.ruleId || '', attrs: { title: e.scenario || e.ruleId || undefined } }));
  }

  // clockMark flags an entry whose time is on a client's own clock, not
  // the sandbox's one the header shows: entries of a client whose clock
  // was moved sit among the others, and a reader must not take their
  // times for the same clock's.
  function clockMark(e) {
    const sandbox = state.clockDelta / 1000;
    const own = (e.clockOffsetSeconds || 0) - sandbox;
    if (Math.abs(own) < 1) return null;
    const text = (own > 0 ? '+' : '−') + humanSeconds(Math.abs(own));
    return el('span', {
      class: 'clock-mark',
      text: text,
      attrs: { title: 'On ' + (e.clientId || 'this client') + "'s own clock, " + humanSeconds(Math.abs(own)) + (own > 0 ? ' ahead of' : ' behind') + " the sandbox clock the header shows" },
    });
  }

  function humanSeconds(sec) {
    const s = Math.round(sec);
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const r = s % 60;
    return (h ? h + 'h' : '') + (h || m ? m + 'm' : '') + r + 's';
  }

  function renderJournal() {
    const shown = state.journal.filter(matchesFilter).reverse();
    $('journal-rows').replaceChildren(...shown.slice(0, 500).map(journalRow));
    $('journal-empty').hidden = shown.length > 0;
    $('journal-empty').textContent = state.journal.length
      ? 'No request matches the filters.'
      : 'No requests yet. Point a client at this sandbox; its calls appear here as they happen.';
    showJournalCount(shown.length);
  }

  function showJournalCount(shown) {
    const total = state.journal.length;
    $('journal-count').textContent = shown === total ? count(total, 'request') : shown + ' of ' + count(total, 'request');
  }

  // appendJournal adds new entries at the top without redrawing the rest,
  // so a row being read or focused stays where it is.
  function appendJournal(entries) {
    const rows = $('journal-rows');
    for (const e of entries) {
      if (matchesFilter(e)) rows.prepend(journalRow(e));
    }
    while (rows.children.length > 500) rows.lastChild.remove();
    $('journal-empty').hidden = rows.children.length > 0;
    showJournalCount(rows.children.length);
  }

  // fetchJournal returns the newest 500 entries on the first load, then the
  // entries after the last one it has. The journal answers in pages
  // (nextAfterId); it follows them up to journalKeep entries a turn.
  async function fetchJournal() {
    if (!state.journalLoaded) return (await api('GET', 'requests?limit=500')).requests || [];
    const fresh = [];
    let after = state.lastId;
    while (fresh.length < journalKeep) {
      const body = await api('GET', 'requests?limit=1000&afterId=' + after);
      fresh.push(...(body.requests || []));
      if (body.nextAfterId == null) break;
      after = body.nextAfterId;
    }
    return fresh;
  }

  // pollJournal asks for the entries after the last one it has, once a
  // second; a hidden tab skips its turns and catches up when shown again.
  async function pollJournal() {
    if (state.access && !state.paused && !document.hidden) {
      try {
        state.polls += 1;
        if (state.journalLoaded && state.polls % 10 === 0) await checkRestart();
        const fresh = await fetchJournal();
        const first = !state.journalLoaded;
        state.journalLoaded = true;
        if (fresh.length) {
          state.journal.push(...fresh);
          state.lastId = fresh[fresh.length - 1].id;
          if (state.journal.length > journalKeep) state.journal.splice(0, state.journal.length - journalKeep);
          if (first) renderJournal();
          else appendJournal(fresh);
          if (state.view !== 'journal' && !first) {
            state.unseen += fresh.length;
            renderUnseen();
          }
          if (fresh.some((e) => e.clientId && !state.clients.some((c) => c.clientId === e.clientId))) {
            fillSelect($('filter-client'), journalClientIds(), 'any client');
          }
        } else if (first) {
          renderJournal();
        }
        setLive(state.paused ? 'paused' : 'live');
      } catch (err) {
        setLive('offline');
      }
    }
    window.setTimeout(pollJournal, journalPollMs);
  }

  // checkRestart notices a restarted sandbox, whose journal ids start
  // again from 1 and would stay below afterId for ever, and starts over.
  async function checkRestart() {
    const latest = (await api('GET', 'requests?limit=1')).requests || [];
    if (latest.length && latest[0].id < state.lastId) {
      state.journal = [];
      state.lastId = 0;
      state.journalLoaded = false;
      state.selectedId = 0;
    }
  }

  function setLive(mode) {
    const s = $('journal-state');
    s.textContent = mode;
    s.className = 'live ' + mode;
  }

  function renderUnseen() {
    const c = $('journal-unseen');
    c.hidden = state.unseen === 0;
    c.textContent = state.unseen > 99 ? '99+' : String(state.unseen);
  }

  function showDetails(id) {
    const e = state.journal.find((x) => x.id === id);
    if (!e) return;
    state.selectedId = id;
    for (const tr of $('journal-rows').children) tr.classList.toggle('selected', Number(tr.dataset.id) === id);
    const cls = statusClass(e);
    const facts = [
      ['Request id', e.requestId], ['Time', e.at], ['Endpoint', e.endpoint || 'sandbox'],
      ['Client', e.clientId], ['Token id', e.tokenId], ['Token expires', e.tokenExpiresAt],
      ['Token refused', e.tokenRefusal], ['Run', e.run], ['Connection', e.connection],
      ['Clock offset', e.clockOffsetSeconds ? e.clockOffsetSeconds + ' s' : ''],
      ['Rule', e.ruleId], ['Scenario', e.scenario], ['Fault', e.fault],
      ['Retry-After', e.retryAfterSeconds ? e.retryAfterSeconds + ' s' : ''],
      ['Duration', e.durationMs + ' ms'], ['Body bytes', e.requestBytes >= 0 ? e.requestBytes : 'unknown (chunked)'],
      ['TLS', e.tls ? 'yes' : 'no'],
    ].filter(([, v]) => v !== undefined && v !== null && v !== '');
    const headers = Object.entries(e.headers || {}).sort(([a], [b]) => a.localeCompare(b));
    put($('journal-details'),
      el('h3', { attrs: { id: 'details-title' } },
        el('span', { class: 'badge b-' + cls, text: statusText(e) }), ' ', e.method + ' ' + e.path),
      e.query ? el('p', { class: 'mono sub', text: '?' + e.query }) : null,
      el('dl', { class: 'facts' }, ...facts.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { class: 'mono', text: v })])),
      el('h4', { text: 'Request headers' }),
      headers.length
        ? el('dl', { class: 'facts headers' }, ...headers.flatMap(([k, v]) => [el('dt', { class: 'mono', text: k }), el('dd', { class: 'mono', text: v })]))
        : empty('none recorded'),
      el('details', null, el('summary', { text: 'Journal entry (JSON)' }), el('pre', { class: 'json', text: JSON.stringify(e, null, 2) })));
    // Below the list (narrow windows) the panel would open out of sight.
    if (window.matchMedia('(max-width: 1180px)').matches) $('journal-details').scrollIntoView({ block: 'nearest' });
  }

  async function clearJournal() {
    try {
      await api('DELETE', 'requests');
      state.journal = [];
      state.selectedId = 0;
      renderJournal();
      toast('Journal cleared', 'ok');
    } catch (err) {
      toast('Could not clear the journal: ' + err.message, 'error');
    }
  }

  // downloadHAR saves the journal as a HAR 1.2 file (GET
  // /__sandbox/requests.har) for a bug report or a browser's devtools, with
  // the filters the server shares with the table: the client, and the
  // status when it is an exact code. The admin token goes in a header, so
  // the page fetches the archive and hands the browser a blob to save.
  async function downloadHAR() {
    const q = new URLSearchParams();
    const client = $('filter-client').value;
    if (client) q.set('clientId', client);
    const status = $('filter-status').value.trim();
    if (/^[1-5][0-9][0-9]$/.test(status)) q.set('status', status);
    const headers = {};
    if (state.token) headers.Authorization = 'Bearer ' + state.token;
    try {
      const query = q.toString();
      const res = await fetch(new URL('requests.har' + (query ? '?' + query : ''), base), { headers, cache: 'no-store' });
      if (res.status === 401) showAuth();
      if (!res.ok) {
        const text = await res.text();
        let body = text;
        try { body = JSON.parse(text); } catch (_) { /* not a problem body */ }
        throw new ApiError(res.status, body);
      }
      const link = document.createElement('a');
      link.href = URL.createObjectURL(await res.blob());
      link.download = 'referrals-sandbox-requests.har';
      document.body.append(link);
      link.click();
      link.remove();
      window.setTimeout(() => URL.revokeObjectURL(link.href), 60000);
    } catch (err) {
      toast('Could not download the HAR: ' + err.message, 'error');
    }
  }

  function togglePause() {
    state.paused = !state.paused;
    const b = $('journal-pause');
    b.textContent = state.paused ? 'Resume' : 'Pause';
    b.setAttribute('aria-pressed', state.paused ? 'true' : 'false');
    setLive(state.paused ? 'paused' : 'live');
  }

  // ---- data --------------------------------------------------------------------

  function statusBadge(status) {
    return el('span', { class: 'badge s-' + status, text: status });
  }

  function moveButtons(next, label, move) {
    if (!next.length) return el('span', { class: 'sub', text: 'final' });
    return el('div', { class: 'moves', attrs: { role: 'group', 'aria-label': 'Move ' + label + ' to' } },
      ...next.map((s) => button('→ ' + s, { class: 'small', data: { move: s }, attrs: { 'aria-label': 'Move ' + label + ' to ' + s } }, () => move(s))));
  }

  // patientCell shows a record's patient: the built-in patient's name, with
  // a chip when a qualified referral's patient is a lifecycle persona, or,
  // for a record submitted under a --contract, the submission as stored.
  function patientCell(r, qualified) {
    if (r.submission) return el('td', { class: 'wrap' }, el('code', { class: 'submission', text: JSON.stringify(r.submission) }), el('div', { class: 'sub', text: 'submission as sent (--contract)' }));
    const name = r.patient ? r.patient.firstName + ' ' + r.patient.lastName : '';
    const persona = qualified ? personaOf(r.patient) : null;
    return el('td', null, name, persona ? el('span', { class: 'chip persona', text: persona.name + ' persona' }) : null);
  }

  async function loadData() {
    const out = $('data-error');
    out.textContent = '';
    try {
      const [trials, personas] = await Promise.all([api('GET', 'data/trials'), state.personas.length ? null : api('GET', 'personas')]);
      renderTrials(trials.trials || []);
      if (personas) {
        state.personas = personas.personas || [];
        renderPersonas();
      }
    } catch (err) {
      out.textContent = 'Could not load the data: ' + err.message;
      return;
    }
    await Promise.all([loadReferrals(false), loadQualified(false)]);
  }

  function renderTrials(trials) {
    const rows = trials.map((t) => el('tr', null,
      el('td', { class: 'nowrap' }, el('code', { text: t.trialId }), t.altTrialId !== t.trialId ? el('div', { class: 'sub', text: 'alt ' + t.altTrialId }) : null),
      el('td', { class: 'wrap' }, t.name, el('div', { class: 'sub', text: 'version ' + t.versionId })),
      el('td', null, t.active && t.acceptingReferrals
        ? el('span', { class: 'badge b-2xx', text: 'listed' })
        : el('span', { class: 'badge b-fault', text: !t.active ? 'inactive' : 'not accepting' }))));
    $('trials').replaceChildren(rows.length ? table([{ text: 'Trial' }, { text: 'Name' }, { text: 'API' }], rows) : empty('No trials.'));
  }

  function renderPersonas() {
    const rows = state.personas.map((p) => el('tr', { data: { persona: p.name } },
      el('td', null, el('code', { text: p.name }), el('div', { class: 'sub', text: p.kind })),
      el('td', { class: 'wrap', text: p.kind === 'lifecycle'
        ? 'patient ' + p.patient.firstName + ' ' + p.patient.lastName
        : 'client id starting ' + p.clientIdPrefix }),
      el('td', { class: 'wrap', text: p.kind === 'lifecycle'
        ? ['received'].concat(p.steps.map((st) => st.status + ' after ' + st.after)).join(' → ')
        : 'tokens of ' + p.tokenLifetimeSeconds + ' s' }),
      el('td', { class: 'wrap sub', text: p.description })));
    $('personas').replaceChildren(rows.length ? table([{ text: 'Persona' }, { text: 'Select it with' }, { text: 'Lifecycle' }, { text: 'Imitates' }], rows) : empty('No personas.'));
  }

  // personaOf is the lifecycle persona a patient's reserved name selects.
  function personaOf(patient) {
    if (!patient) return null;
    return state.personas.find((p) => p.kind === 'lifecycle'
      && p.patient.lastName.toLowerCase() === String(patient.lastName).toLowerCase()
      && p.patient.firstName.toLowerCase() === String(patient.firstName).toLowerCase()) || null;
  }

  async function movePartnerClock(advance, label) {
    const clientId = $('data-client').value;
    if (!clientId) return;
    try {
      await api('POST', 'clock', { advance, clientId });
      toast('Clock of ' + clientId + ' moved ' + label, 'ok');
    } catch (err) {
      toast('Could not move the clock of ' + clientId + ': ' + err.message, 'error');
    }
    clockMoved();
  }

  function dataPath(kind, cursor, limit) {
    let q = kind + '?clientId=' + encodeURIComponent($('data-client').value);
    if (cursor) q += '&cursor=' + encodeURIComponent(cursor);
    if (limit) q += '&limit=' + limit;
    return 'data/' + q;
  }

  // reloadSize keeps as many rows as are shown when a list is reloaded after
  // a status move, so "Load more" pages are not lost.
  function reloadSize(n) {
    return Math.min(Math.max(n, 50), 500);
  }

  async function loadReferrals(more) {
    const d = state.data;
    if (!$('data-client').value) {
      $('referrals').replaceChildren(empty('No partner to show.'));
      return;
    }
    try {
      const body = await api('GET', dataPath('referrals', more ? d.refCursor : '', more ? 0 : reloadSize(d.referrals.length)));
      d.referrals = more ? d.referrals.concat(body.referrals) : body.referrals;
      d.refCursor = body.nextCursor;
    } catch (err) {
      $('referrals').replaceChildren(empty('Could not load the referrals: ' + err.message));
      return;
    }
    const rows = d.referrals.map((r) => el('tr', { data: { outcomesId: r.outcomesId } },
      el('td', { class: 'mono nowrap opt', text: dateTime(r.submittedAt) }),
      el('td', null, el('code', { text: r.outcomesId }), el('div', { class: 'sub', text: r.trialId })),
      patientCell(r),
      el('td', null, statusBadge(r.status)),
      el('td', null, moveButtons(r.nextStatuses, 'referral ' + r.outcomesId, (s) => moveReferral(r, s)))));
    put($('referrals'),
      rows.length ? table([{ text: 'Submitted (UTC)', class: 'opt' }, { text: 'Outcomes id · trial' }, { text: 'Patient' }, { text: 'Status' }, { text: 'Move to' }], rows) : empty('This partner has no referrals.'),
      d.refCursor ? button('Load more referrals', { class: 'more' }, () => loadReferrals(true)) : null);
  }

  async function loadQualified(more) {
    const d = state.data;
    if (!$('data-client').value) {
      $('qualified').replaceChildren(empty('No partner to show.'));
      return;
    }
    try {
      const body = await api('GET', dataPath('qualified', more ? d.qualCursor : '', more ? 0 : reloadSize(d.qualified.length)));
      d.qualified = more ? d.qualified.concat(body.qualifiedReferrals) : body.qualifiedReferrals;
      d.qualCursor = body.nextCursor;
    } catch (err) {
      $('qualified').replaceChildren(empty('Could not load the qualified referrals: ' + err.message));
      return;
    }
    const rows = [];
    for (const q of d.qualified) {
      const open = d.openAudits.has(q.externalSourceId);
      const auditId = 'audit-' + q.externalSourceId.replace(/[^A-Za-z0-9_-]/g, '_');
      rows.push(el('tr', { data: { externalSourceId: q.externalSourceId } },
        el('td', { class: 'mono nowrap opt', text: dateTime(q.submittedAt) }),
        el('td', null, el('code', { text: q.externalSourceId }), el('div', { class: 'sub', text: q.trialId || 'no trial' })),
        patientCell(q, true),
        el('td', null, statusBadge(q.status)),
        el('td', null, moveButtons(q.nextStatuses, 'qualified referral ' + q.externalSourceId, (s) => moveQualified(q, s))),
        el('td', null, button('Audit trail (' + (q.auditTrailTotal || q.auditTrail.length) + ')', {
          class: 'small link',
          attrs: { 'aria-expanded': open ? 'true' : 'false', 'aria-controls': auditId },
        }, () => {
          if (open) d.openAudits.delete(q.externalSourceId);
          else d.openAudits.add(q.externalSourceId);
          loadQualified(false);
        }))));
      if (open) rows.push(el('tr', { class: 'audit-row', attrs: { id: auditId } }, el('td', { attrs: { colspan: 6 } }, auditTrail(q.auditTrail, q.auditTrailTotal))));
    }
    put($('qualified'),
      rows.length ? table([{ text: 'Submitted (UTC)', class: 'opt' }, { text: 'External source id · trial' }, { text: 'Patient' }, { text: 'Status' }, { text: 'Move to' }, { text: 'Audit' }], rows) : empty('This partner has no qualified referrals.'),
      d.qualCursor ? button('Load more qualified referrals', { class: 'more' }, () => loadQualified(true)) : null);
  }

  // auditTrail lists the entries a record carries: its newest ones, with a
  // note when the whole trail (total) is longer.
  function auditTrail(entries, total) {
    const older = (total || entries.length) - entries.length;
    const note = older > 0 ? el('p', { class: 'sub', text: older + ' older entries not shown (the API pages them at …/audit-trail)' }) : null;
    return el('div', null, note, el('ol', { class: 'audit' }, ...entries.map((a) => el('li', { class: 'audit-' + a.action },
      el('span', { class: 'mono', text: dateTime(a.at) }), ' ',
      el('strong', { text: a.action }),
      a.fromStatus ? ' ' + a.fromStatus + ' → ' + a.toStatus : '',
      a.reason ? ' (' + a.reason + ')' : '',
      ' by ', el('code', { text: a.actor }),
      a.requestId ? el('span', { class: 'sub', text: ' · request ' + a.requestId }) : null))));
  }

  async function moveReferral(r, status) {
    try {
      await api('POST', 'referrals/' + encodeURIComponent(r.trialId) + '/' + encodeURIComponent(r.outcomesId) + '/status', { status });
      toast('Referral ' + r.outcomesId + ' moved to ' + status, 'ok');
    } catch (err) {
      toast('Could not move the referral: ' + err.message, 'error');
    }
    await loadReferrals(false);
  }

  async function moveQualified(q, status) {
    try {
      await api('POST', 'qualified/' + encodeURIComponent(q.externalSourceId) + '/status', { status, clientId: q.clientId });
      toast('Qualified referral ' + q.externalSourceId + ' moved to ' + status, 'ok');
    } catch (err) {
      toast('Could not move the qualified referral: ' + err.message, 'error');
    }
    await loadQualified(false);
  }

  // ---- clients -------------------------------------------------------------------

  // partnerRoles are the roles the creation form offers, all ticked: what
  // the sandbox gives a new client when no roles are named.
  const partnerRoles = ['Trials.Read', 'Referrals.Read', 'Referrals.Write', 'QualifiedReferrals.Read', 'QualifiedReferrals.Write'];

  function setUpClients() {
    $('client-roles').replaceChildren(...partnerRoles.map((r) => el('label', null,
      el('input', { attrs: { type: 'checkbox', name: 'role', value: r, checked: true } }), r)));
    $('client-form').addEventListener('submit', createClient);
    $('client-secret-copy').addEventListener('click', copySecret);
    $('client-secret-done').addEventListener('click', forgetSecret);
    $('clients-refresh').addEventListener('click', loadClientsView);
    $('clock-client').addEventListener('change', loadClientClock);
    for (const b of document.querySelectorAll('[data-client-advance]')) {
      b.addEventListener('click', () => moveClientClock({ advance: b.dataset.clientAdvance }, 'moved ' + b.textContent));
    }
    $('client-clock-reset').addEventListener('click', () => moveClientClock({ reset: true }, "back on the sandbox's time"));
  }

  async function loadClientsView() {
    await loadClients();
    if (changed('clients', state.clients)) keepFocus(renderClients);
    await loadClientClock();
  }

  function renderClients() {
    const rows = state.clients.map((c) => {
      const runtime = c.origin === 'runtime';
      return el('tr', { data: { clientId: c.clientId, origin: c.origin } },
        el('td', null, el('code', { text: c.clientId }), c.description ? el('div', { class: 'sub', text: c.description }) : null),
        el('td', null, el('span', { class: 'badge origin-' + (runtime ? 'runtime' : 'fixture'), text: runtime ? 'runtime' : 'fixture' })),
        el('td', { class: 'wrap' }, ...(c.roles.length ? c.roles.map((r) => el('span', { class: 'tag', text: r })) : [el('span', { class: 'sub', text: 'no roles' })])),
        el('td', { class: 'nowrap opt', text: c.expiresAt ? dateTime(c.expiresAt) + ' UTC' : runtime ? 'until deleted' : 'always' }),
        el('td', { class: 'actions' }, runtime
          ? button('Delete', { class: 'small danger-outline', data: { action: 'delete', focusKey: 'delete:' + c.clientId }, attrs: { 'aria-label': 'Delete client ' + c.clientId } }, () => deleteClient(c.clientId))
          : el('span', { class: 'sub', text: 'from the fixtures' })));
    });
    $('clients').replaceChildren(rows.length
      ? table([{ text: 'Client' }, { text: 'Origin' }, { text: 'Roles' }, { text: 'Expires', class: 'opt' }, { text: '' }], rows, 'clients')
      : empty('No clients.'));
  }

  async function createClient(ev) {
    ev.preventDefault();
    const out = $('client-form-error');
    out.textContent = '';
    const body = { roles: [...document.querySelectorAll('#client-roles input:checked')].map((i) => i.value) };
    for (const [field, id] of [['clientId', 'client-id'], ['ttl', 'client-ttl'], ['description', 'client-description']]) {
      const v = $(id).value.trim();
      if (v) body[field] = v;
    }
    let created;
    try {
      created = await api('POST', 'clients', body);
    } catch (err) {
      out.textContent = 'Could not create the client: ' + err.message;
      return;
    }
    $('client-form').reset();
    showSecret(created);
    toast('Client ' + created.clientId + ' created', 'ok');
    await loadClientsView();
  }

  // showSecret shows a new client's secret, this once: it lives only in the
  // box's input (never in the page's state) until "I have copied it".
  function showSecret(created) {
    $('client-secret-title').textContent = 'Secret of ' + created.clientId;
    $('client-secret-value').value = created.clientSecret;
    $('client-secret-id').textContent = 'Secret id ' + created.secretId + ' · scope ' + created.scope + ' · token URL ' + created.tokenUrl;
    $('client-secret').hidden = false;
    $('client-secret-value').focus();
    $('client-secret-value').select();
  }

  function forgetSecret() {
    $('client-secret-value').value = '';
    $('client-secret').hidden = true;
  }

  async function copySecret() {
    const input = $('client-secret-value');
    try {
      await navigator.clipboard.writeText(input.value);
      toast('Secret copied to the clipboard', 'ok');
    } catch (_) {
      // No clipboard API outside secure contexts, or no permission.
      input.focus();
      input.select();
      toast('The browser did not allow copying: the secret is selected, press Ctrl+C', 'error');
    }
  }

  async function deleteClient(id) {
    if (!window.confirm('Delete client ' + id + '? Its tokens are refused from now on, and its records, rules and journal entries go with it.')) return;
    try {
      await api('DELETE', 'clients/' + encodeURIComponent(id));
      toast('Client ' + id + ' deleted', 'ok');
    } catch (err) {
      toast('Could not delete client ' + id + ': ' + err.message, 'error');
    }
    await loadClientsView();
  }

  function signedOffset(offset) {
    return (offset.startsWith('-') ? '' : '+') + offset;
  }

  function showClientClock(v) {
    const t = $('client-clock-now');
    t.dateTime = v.now;
    t.textContent = dateTime(v.now) + ' UTC';
    const o = $('client-clock-offset');
    o.textContent = (v.real ? 'real time' : signedOffset(v.offset)) + (v.ownClock ? ' · own clock' : " · the sandbox's clock");
    o.className = 'pill ' + (v.real ? 'pill-ok' : 'pill-warn');
  }

  async function loadClientClock() {
    const id = $('clock-client').value;
    if (!id) return;
    try {
      showClientClock(await api('GET', 'clock?clientId=' + encodeURIComponent(id)));
    } catch (err) {
      $('client-clock-now').textContent = 'unavailable: ' + err.message;
      $('client-clock-offset').textContent = '';
    }
  }

  async function moveClientClock(move, done) {
    const clientId = $('clock-client').value;
    if (!clientId) return;
    try {
      showClientClock(await api('POST', 'clock', Object.assign({ clientId }, move)));
      toast('Clock of ' + clientId + ' ' + done, 'ok');
    } catch (err) {
      toast('Could not move the clock of ' + clientId + ': ' + err.message, 'error');
    }
  }

  // ---- conformance report ---------------------------------------------------

  const resultOrder = { fail: 0, warn: 1, pass: 2, 'not-exercised': 3 };
  const resultLabel = { pass: 'pass', fail: 'fail', warn: 'warn', 'not-exercised': 'not exercised' };

  async function loadReport() {
    const client = $('report-client').value;
    const out = $('report');
    let body;
    try {
      body = await api('GET', 'report' + (client ? '?clientId=' + encodeURIComponent(client) : ''));
    } catch (err) {
      const why = err.status === 404
        ? 'GET /__sandbox/report answered 404: this sandbox does not serve a conformance report' + (client ? ' for ' + client : '') + '.'
        : 'The report could not be loaded: ' + err.message;
      out.replaceChildren(el('div', { class: 'card notice', data: { report: 'unavailable' } },
        el('h2', { text: 'Report unavailable' }), el('p', { text: why })));
      $('report-generated').textContent = '';
      return;
    }
    $('report-generated').textContent = body.generatedAt ? 'Generated ' + dateTime(body.generatedAt) + ' UTC' : '';
    const clients = body.clients || [];
    const unknown = body.unknownClients || [];
    if (!clients.length && !unknown.length) {
      out.replaceChildren(el('div', { class: 'card' }, empty('No client has made a request yet, so there is nothing to judge. Run your client against the sandbox, then run the report again.')));
      return;
    }
    put(out,
      ...clients.map(reportCard),
      clients.length ? null : el('div', { class: 'card' }, empty('No client of this sandbox has made a request yet, so there is nothing to judge.')),
      unknown.length ? unknownCard(unknown) : null);
  }

  // count writes n and a noun, with an s when n is not 1.
  function count(n, noun) {
    return n + ' ' + noun + (n === 1 ? '' : 's');
  }

  // unknownCard lists, apart from the judged clients, the client ids that
  // requests named but no client of the sandbox has, with what they tried:
  // never judged, so a typo in a client id never reads as a pass.
  function unknownCard(unknown) {
    const rows = [];
    for (const u of unknown) {
      for (const a of u.attempts || []) {
        rows.push(el('tr', { data: { clientId: u.clientId } },
          el('td', null, el('code', { text: u.clientId })),
          el('td', { class: 'mono nowrap opt', text: dateTime(a.at) }),
          el('td', { class: 'wrap' }, a.method + ' ', el('code', { text: a.path })),
          el('td', null, el('span', { class: 'badge b-' + (a.status ? String(a.status)[0] + 'xx' : 'fault'), text: a.status || 'fault' })),
          el('td', { class: 'mono opt', text: a.requestId })));
      }
    }
    const more = unknown.filter((u) => u.requests > (u.attempts || []).length)
      .map((u) => u.clientId + ': first ' + u.attempts.length + ' of ' + count(u.requests, 'request') + ' shown');
    return el('section', { class: 'card report-unknown', attrs: { 'aria-labelledby': 'unknown-title' } },
      el('h2', { attrs: { id: 'unknown-title' }, text: 'Unknown clients' }),
      el('p', { class: 'hint', text: 'Requests named these client ids, but this sandbox has no such client, so they never authenticated. They are not judged: check the client id your program uses.' }),
      table([{ text: 'Client id given' }, { text: 'At (UTC)', class: 'opt' }, { text: 'Request' }, { text: 'Status' }, { text: 'Request id', class: 'opt' }], rows),
      more.length ? el('p', { class: 'sub', text: more.join('; ') }) : null);
  }

  function reportCard(c) {
    const checks = (c.checks || []).slice().sort((a, b) => (resultOrder[a.result] ?? 9) - (resultOrder[b.result] ?? 9));
    const counts = {};
    for (const ch of checks) counts[ch.result] = (counts[ch.result] || 0) + 1;
    const verdict = counts.fail ? 'fail' : counts.warn ? 'warn' : 'pass';
    // One card per program of a client: the report judges programs, told
    // apart by run label, connection and token (see docs/report.md).
    const p = c.program || {};
    const programText = p.label ? 'program ' + p.label + (p.connections ? ' · ' + p.connections + (p.connections === 1 ? ' connection' : ' connections') : '') : '';
    return el('section', { class: 'card report-client verdict-' + verdict, data: { clientId: c.clientId, program: p.label || '' },
      attrs: { 'aria-label': 'Report for ' + c.clientId + (p.label ? ', program ' + p.label : '') } },
      el('div', { class: 'card-head' },
        el('h2', null, el('code', { text: c.clientId })),
        programText ? el('span', { class: 'sub program', text: programText, attrs: { title: p.userAgent ? 'User-Agent: ' + p.userAgent : undefined } }) : null,
        el('span', { class: 'sub', text: count(c.requests ?? 0, 'request') }),
        el('div', { class: 'spacer' }),
        ...['fail', 'warn', 'pass', 'not-exercised'].filter((r) => counts[r]).map((r) =>
          el('span', { class: 'badge r-' + r, text: counts[r] + ' ' + resultLabel[r] }))),
      checks.length
        ? el('ul', { class: 'checks' }, ...checks.map(checkItem))
        : empty('No checks.'));
  }

  function checkItem(ch) {
    const evidence = (ch.evidence || []).map((id) => {
      const entry = state.journal.find((e) => e.requestId === String(id) || e.id === id);
      if (!entry) return el('code', { class: 'evidence', text: String(id) });
      return button(String(id), { class: 'small link evidence', attrs: { 'aria-label': 'Show request ' + id + ' in the journal' } }, () => {
        window.location.hash = '#journal';
        showDetails(entry.id);
      });
    });
    return el('li', { class: 'check result-' + ch.result, data: { checkId: ch.id, result: ch.result } },
      el('span', { class: 'badge r-' + ch.result, text: resultLabel[ch.result] || ch.result }),
      el('div', { class: 'check-text' },
        el('h3', { text: ch.title || ch.id }),
        ch.explanation ? el('p', { text: ch.explanation }) : null,
        evidence.length ? el('p', { class: 'evidence-list' }, 'Evidence: ', ...evidence) : null));
  }

  // ---- clock -------------------------------------------------------------------

  function showClock(view) {
    const now = Date.parse(view.now);
    if (!Number.isNaN(now)) state.clockDelta = now - Date.now();
    state.clockReal = view.real;
    state.clockKnown = true;
    const offset = $('clock-offset');
    offset.textContent = view.real ? 'real time' : signedOffset(view.offset);
    offset.className = 'pill ' + (view.real ? 'pill-ok' : 'pill-warn');
    tickClock();
  }

  function tickClock() {
    if (!state.clockKnown) return; // never the browser's own time as the sandbox's
    const now = new Date(Date.now() + state.clockDelta);
    const t = $('clock-now');
    t.dateTime = now.toISOString();
    t.textContent = now.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  }

  async function loadClock() {
    if (!state.access) return;
    try {
      showClock(await api('GET', 'clock'));
    } catch (_) {
      state.clockKnown = false;
      $('clock-now').textContent = 'unavailable';
      $('clock-offset').textContent = '';
    }
  }

  async function moveClock(body, done) {
    try {
      showClock(await api('POST', 'clock', body));
      toast(done, 'ok');
    } catch (err) {
      toast('Could not move the clock: ' + err.message, 'error');
    }
    clockMoved();
  }

  async function resetSandbox() {
    if (!window.confirm('Reset the sandbox? Records go back to the fixtures; clients created at run time are deleted; rules, scenarios and the journal are cleared; every clock goes back to real time.')) return;
    try {
      await api('POST', 'reset');
      forgetSecret(); // its client is gone
      state.journal = [];
      renderJournal();
      toast('Sandbox reset', 'ok');
    } catch (err) {
      toast('Could not reset the sandbox: ' + err.message, 'error');
    }
    refreshAll();
  }

  // ---- start -------------------------------------------------------------------

  async function refreshAll() {
    await loadClients();
    loadClock();
    route();
  }

  function start() {
    setUpAuth();
    setUpClients();
    for (const b of document.querySelectorAll('[data-advance]')) {
      b.addEventListener('click', () => moveClock({ advance: b.dataset.advance }, 'Sandbox clock moved ' + b.textContent));
    }
    $('clock-reset').addEventListener('click', () => moveClock({ reset: true }, 'Sandbox clock back to real time'));
    $('sandbox-reset').addEventListener('click', resetSandbox);
    $('scenario-client').addEventListener('change', () => keepFocus(renderLibrary));
    $('rules-clear').addEventListener('click', clearRules);
    $('rule-form').addEventListener('submit', addRule);
    $('phase-add').addEventListener('click', addPhase);
    $('save-form').addEventListener('submit', saveScenario);
    $('journal-pause').addEventListener('click', togglePause);
    $('journal-clear').addEventListener('click', clearJournal);
    $('journal-har').addEventListener('click', downloadHAR);
    $('journal-filters').addEventListener('submit', (ev) => ev.preventDefault());
    for (const id of ['filter-client', 'filter-path', 'filter-status']) {
      $(id).addEventListener('input', renderJournal);
    }
    $('data-client').addEventListener('change', () => {
      state.data = { referrals: [], qualified: [], refCursor: null, qualCursor: null, openAudits: new Set() };
      loadData();
    });
    $('data-refresh').addEventListener('click', loadData);
    for (const b of document.querySelectorAll('[data-partner-advance]')) {
      b.addEventListener('click', () => movePartnerClock(b.dataset.partnerAdvance, b.textContent.replace('Partner clock ', '')));
    }
    $('report-client').addEventListener('change', loadReport);
    $('report-refresh').addEventListener('click', loadReport);
    window.addEventListener('hashchange', route);

    connect(false);
  }

  start();
})();
