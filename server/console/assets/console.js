// The pstrain console: the jobs, one job and the cluster, read from the
// coordinator's /api/ endpoints (protobuf JSON: snake_case names, int64 as
// strings, enums as names). One script, no dependencies.
'use strict';

(function () {
  const TOKEN_KEY = 'pstrain-console-token';
  const TERMINAL = new Set(['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_STOPPED']);
  const STOPPABLE = new Set(['JOB_STATE_QUEUED', 'JOB_STATE_RUNNING']);
  const PHASES = [
    ['data_wait', 'data wait'],
    ['pull', 'pull'],
    ['compute', 'compute'],
    ['push_wait', 'push wait'],
  ];
  const MAX_SERIES_POINTS = 5000;
  const MAX_LOG_EVENTS = 2000;
  const LOG_ROWS = 300;

  // The page's state: what /api/console said, and a generation that every
  // poller checks so that a sign-in or sign-out stops the pollers before it.
  const app = { console: null, generation: 0, errors: new Map() };

  // ---------------------------------------------------------------- DOM

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    setAttrs(el, attrs);
    append(el, children);
    return el;
  }

  const SVG_NS = 'http://www.w3.org/2000/svg';
  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVG_NS, tag);
    setAttrs(el, attrs);
    append(el, children);
    return el;
  }

  function setAttrs(el, attrs) {
    if (!attrs) return;
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.setAttribute('class', v);
      else if (k === 'text') el.textContent = v;
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }

  function append(el, ...children) {
    for (const c of children.flat(Infinity)) {
      if (c === undefined || c === null || c === false) continue;
      el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }

  function replace(el, ...children) {
    if (!el) return;
    el.textContent = '';
    append(el, children);
  }

  const $ = (sel, root) => (root || document).querySelector(sel);

  // ------------------------------------------------------------ numbers

  // A number from protobuf JSON: int64 arrives as a string, NaN and the
  // infinities as "NaN", "Infinity", "-Infinity".
  function num(v) {
    if (typeof v === 'number') return v;
    if (typeof v === 'string' && v !== '') return Number(v);
    return NaN;
  }
  const finite = (v) => Number.isFinite(num(v));

  function sig(v, digits) {
    v = num(v);
    if (!Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : (v > 0 ? '∞' : '−∞');
    if (v === 0) return '0';
    const a = Math.abs(v);
    if (a >= 1e6 || a < 1e-2) return v.toExponential(digits - 1).replace('e+', 'e');
    const str = v.toPrecision(digits);
    return str.includes('e') ? String(Number(str)) : str;
  }
  const fmtLoss = (v) => sig(v, 4);
  const fmtMetric = (v) => sig(v, 4);
  const fmtLr = (v) => sig(v, 3);

  function fmtRate(v) {
    v = num(v);
    if (!Number.isFinite(v)) return '—';
    const a = Math.abs(v);
    if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 1 : 2) + 'M';
    if (a >= 1e3) return (v / 1e3).toFixed(a >= 1e4 ? 1 : 2) + 'k';
    if (a >= 100) return v.toFixed(0);
    return v.toFixed(1);
  }

  function fmtInt(v) {
    const n = num(v);
    if (!Number.isFinite(n)) return String(v);
    return Math.round(n).toLocaleString('en-US');
  }

  function fmtCount(v) {
    const n = num(v);
    if (!Number.isFinite(n)) return '—';
    if (Math.abs(n) >= 1e4) return fmtRate(n);
    return fmtInt(n);
  }

  function fmtBytes(v) {
    let n = num(v);
    if (!Number.isFinite(n)) return '—';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? String(n) : n.toFixed(n >= 100 ? 0 : 1)) + ' ' + units[i];
  }

  function fmtDuration(sec) {
    if (!Number.isFinite(sec)) return '—';
    if (sec < 0) sec = 0;
    if (sec < 60) return sec.toFixed(1) + ' s';
    if (sec < 3600) return Math.floor(sec / 60) + ' m ' + Math.floor(sec % 60) + ' s';
    if (sec < 86400) return Math.floor(sec / 3600) + ' h ' + Math.floor((sec % 3600) / 60) + ' m';
    return Math.floor(sec / 86400) + ' d ' + Math.floor((sec % 86400) / 3600) + ' h';
  }

  const pad = (n, w) => String(n).padStart(w || 2, '0');

  // unix ms (a string) → "2025-12-07 14:03:04" in the browser's time zone.
  function fmtTime(ms, short) {
    const n = num(ms);
    if (!Number.isFinite(n) || n <= 0) return '—';
    const d = new Date(n);
    const time = pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
    if (short) return time;
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + time;
  }

  const shortEnum = (v, prefix) => (typeof v === 'string' && v.startsWith(prefix) ? v.slice(prefix.length) : String(v || ''));
  const jobState = (v) => shortEnum(v, 'JOB_STATE_');
  const stopReason = (v) => shortEnum(v, 'STOP_REASON_');
  const role = (v) => shortEnum(v, 'TASK_TYPE_').toLowerCase();

  function badge(text, kind) {
    return h('span', { class: 'badge s-' + String(kind || text).toLowerCase() }, text);
  }
  const stateBadge = (state) => badge(jobState(state) || 'UNKNOWN');

  function metricEntries(map) {
    return Object.entries(map || {}).sort((a, b) => a[0].localeCompare(b[0]));
  }

  // ---------------------------------------------------------------- API

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }
  class AuthError extends ApiError {}

  function token() {
    try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch (e) { return ''; }
  }
  function setToken(t) {
    try {
      if (t) sessionStorage.setItem(TOKEN_KEY, t);
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch (e) { /* storage off: the token lives until the page closes */ }
  }

  // Fetches an /api/ path. A 401 shows the login form (AuthError); any other
  // failure throws an ApiError with the server's {"error": ...} message.
  async function api(path, opts) {
    opts = opts || {};
    const headers = Object.assign({}, opts.headers);
    const t = opts.token !== undefined ? opts.token : token();
    if (t && path !== '/api/console') headers['Authorization'] = 'Bearer ' + t;
    let resp;
    try {
      resp = await fetch(path, { method: opts.method || 'GET', headers, cache: 'no-store', credentials: 'same-origin' });
    } catch (e) {
      throw new ApiError(0, 'cannot reach the coordinator (' + path + '): ' + e.message);
    }
    let body = '';
    try { body = await resp.text(); } catch (e) { throw new ApiError(resp.status, path + ': ' + e.message); }
    if (!resp.ok) {
      let message = '';
      try { message = JSON.parse(body).error || ''; } catch (e) { /* not JSON */ }
      if (!message) message = resp.status + ' ' + (resp.statusText || 'error') + ' from ' + path;
      if (resp.status === 401) {
        // Only for the token in use: a late answer to a call made with a
        // token since dropped must not interrupt a new sign-in.
        if (!opts.noLoginOnAuth && t === token() && document.body.dataset.page !== 'login') {
          showLogin(t ? 'The token was refused: ' + message : '');
        }
        throw new AuthError(401, message);
      }
      throw new ApiError(resp.status, message);
    }
    if (opts.text) return body;
    try {
      return JSON.parse(body);
    } catch (e) {
      throw new ApiError(resp.status, path + ': the answer is not JSON');
    }
  }

  // ------------------------------------------------------------- errors

  function setError(key, message) {
    if (message) app.errors.set(key, message);
    else app.errors.delete(key);
    const banner = $('#error-banner');
    if (!banner) return;
    replace(banner, [...app.errors.values()].map((m) => h('div', null, m)));
    banner.hidden = app.errors.size === 0;
  }

  // What a poller does with a failure: the login form already shows for a
  // 401; an API error goes to the banner; a bug in this script goes to the
  // banner and the console.
  function report(key, e) {
    if (e instanceof AuthError) return;
    if (e instanceof ApiError) {
      setError(key, e.message);
      return;
    }
    console.error(e);
    setError(key, 'console error: ' + (e && e.message ? e.message : String(e)));
  }

  // Runs fn now and every ms after it settles, until fn returns false or the
  // page changes (a login, a sign-out).
  function every(ms, key, fn) {
    const gen = app.generation;
    const run = async () => {
      if (gen !== app.generation) return;
      let again = true;
      try {
        again = (await fn()) !== false;
        if (gen === app.generation) setError(key, '');
      } catch (e) {
        if (gen === app.generation) report(key, e);
      }
      if (again && gen === app.generation) setTimeout(run, ms);
    };
    run();
  }

  function newPage(name, title) {
    app.generation++;
    for (const key of [...app.errors.keys()]) setError(key, '');
    document.body.dataset.page = name;
    document.body.dataset.state = 'loading';
    delete document.body.dataset.jobState;
    delete document.body.dataset.polling;
    document.title = title + ' · pstrain console';
    for (const a of document.querySelectorAll('#top nav a')) {
      a.classList.toggle('active', a.dataset.nav === name);
    }
    const main = $('#main');
    main.textContent = '';
    return main;
  }

  // -------------------------------------------------------------- login

  function showLogin(message) {
    setToken('');
    const main = newPage('login', 'Sign in');
    updateSignOut();
    const input = h('input', {
      type: 'password', id: 'login-token', name: 'token', autocomplete: 'current-password',
      required: true, spellcheck: 'false',
    });
    const error = h('p', { id: 'login-error', role: 'alert', hidden: !message }, message || '');
    const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
    const form = h('form', { id: 'login-form', method: 'post', action: '/', autocomplete: 'off' },
      h('h1', null, 'Sign in'),
      h('p', { class: 'muted' }, 'This coordinator asks for its client token: what pstrain sends, the file of its --client_token_file.'),
      h('label', { for: 'login-token' }, 'Token'),
      input,
      h('div', { class: 'actions' }, button),
      error);
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const t = input.value;
      input.value = '';
      if (!t) return;
      button.disabled = true;
      error.hidden = true;
      // Checks the token on an endpoint that needs it before keeping it.
      api('/api/cluster', { token: t, noLoginOnAuth: true }).then(() => {
        setToken(t);
        updateSignOut();
        route();
      }, (e) => {
        button.disabled = false;
        error.textContent = e instanceof AuthError ? 'The token was refused.' : e.message;
        error.hidden = false;
        input.focus();
      });
    });
    append(main, h('div', { class: 'login' }, form));
    document.body.dataset.state = 'login';
    input.focus();
  }

  function updateSignOut() {
    const link = $('#sign-out');
    if (link) link.hidden = !(app.console && app.console.auth_required && token());
  }

  // ---------------------------------------------------------------- plot

  // Ticks at round numbers between lo and hi, about n of them, at least
  // minStep apart (1 on a step axis: no fractional steps).
  function niceTicks(lo, hi, n, minStep) {
    const span = hi - lo;
    if (!(span > 0)) return [lo];
    const raw = Math.max(span / Math.max(1, n), minStep || 0);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((st) => st >= raw * (1 - 1e-9)) || raw;
    const ticks = [];
    for (let i = Math.ceil(lo / step - 1e-9); i * step <= hi + step * 1e-9; i++) {
      // i * step, not a running sum: no 0.30000000000000004.
      const v = i * step;
      ticks.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    }
    return ticks;
  }

  const GROUPED = new Map();
  function grouped(v, digits) {
    if (!GROUPED.has(digits)) {
      GROUPED.set(digits, new Intl.NumberFormat('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
    }
    return GROUPED.get(digits).format(v);
  }

  // Labels for an axis's ticks, all in one format: the fewest digits that
  // give each tick its exact value and no two ticks the same label
  // ("5k 10k 15k", "0.80 0.85 0.90", "4.0e-4 6.0e-4", "26,455 26,460").
  function axisLabels(ticks) {
    if (!ticks.length) return [];
    const maxAbs = Math.max(...ticks.map(Math.abs));
    let gap = Infinity;
    for (let i = 1; i < ticks.length; i++) gap = Math.min(gap, Math.abs(ticks[i] - ticks[i - 1]));
    const tol = Number.isFinite(gap) ? gap * 1e-3 : Math.max(maxAbs * 1e-6, 1e-12);
    const formats = [];
    if (maxAbs >= 1e4) {
      const [scale, suffix] = maxAbs >= 1e6 ? [1e6, 'M'] : [1e3, 'k'];
      for (const d of [0, 1]) formats.push((v) => [(v / scale).toFixed(d) + suffix, Number((v / scale).toFixed(d)) * scale]);
    }
    if (maxAbs > 0 && maxAbs < 1e-2) {
      for (let d = 0; d <= 6; d++) formats.push((v) => [v.toExponential(d).replace('e+', 'e'), Number(v.toExponential(d))]);
    } else {
      for (let d = 0; d <= 8; d++) formats.push((v) => [grouped(v, d), Number(v.toFixed(d))]);
    }
    for (const f of formats) {
      const out = ticks.map((v) => (v === 0 ? ['0', 0] : f(v)));
      if (out.every(([, back], i) => Math.abs(back - ticks[i]) <= tol) && new Set(out.map(([l]) => l)).size === out.length) {
        return out.map(([l]) => l);
      }
    }
    return ticks.map((v) => sig(v, 6));
  }

  // Draws a line plot of points [{x, y}] (x the global step) into container:
  // a title with the newest value and the min/max, axes with a few ticks.
  // Points whose y is not finite are skipped. One step alone gets one tick,
  // the point in the middle; a constant series gets a range around it.
  function linePlot(container, opts) {
    const pts = opts.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
    const fmt = opts.format || fmtMetric;
    container.dataset.points = String(pts.length);
    const W = 400, H = 140, L = 50, R = 14, T = 8, B = 20;
    const title = h('div', { class: 'plot-title' }, h('span', { class: 'name' }, opts.title));
    const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': opts.title });
    if (pts.length === 0) {
      append(title, h('span', { class: 'latest' }, '—'));
      append(svg, s('rect', { x: L, y: T, width: W - L - R, height: H - T - B, fill: '#fafbfc' }),
        s('text', { x: (L + W - R) / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty' }, opts.empty || 'no data yet'));
      replace(container, title, svg);
      return;
    }
    const last = pts[pts.length - 1];
    let ymin = Infinity, ymax = -Infinity, xmin = Infinity, xmax = -Infinity;
    for (const p of pts) {
      if (p.y < ymin) ymin = p.y;
      if (p.y > ymax) ymax = p.y;
      if (p.x < xmin) xmin = p.x;
      if (p.x > xmax) xmax = p.x;
    }
    append(title,
      h('span', { class: 'latest', title: 'newest, at step ' + fmtInt(last.x) }, fmt(last.y)),
      h('span', { class: 'range' }, ymin === ymax
        ? (pts.length === 1 ? 'at step ' + fmtInt(last.x) : 'constant')
        : 'min ' + fmt(ymin) + ' · max ' + fmt(ymax)));
    let y0 = ymin, y1 = ymax;
    if (y1 - y0 <= Math.abs(y1) * 1e-12) {
      const d = Math.abs(y0) > 0 ? Math.abs(y0) * 0.1 : 1;
      y0 -= d; y1 += d;
    } else {
      const m = (y1 - y0) * 0.06;
      y0 -= m; y1 += m;
    }
    let x0 = xmin, x1 = xmax;
    if (x1 === x0) { x0 -= 1; x1 += 1; }
    const sx = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
    const sy = (y) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
    const yt = niceTicks(y0, y1, 4);
    const xt = xmin === xmax ? [xmin] : niceTicks(x0, x1, 5, 1);
    const yl = axisLabels(yt), xl = axisLabels(xt);
    yt.forEach((y, i) => {
      append(svg,
        s('line', { x1: L, x2: W - R, y1: sy(y), y2: sy(y), class: 'grid' }),
        s('text', { x: L - 4, y: sy(y) + 3, 'text-anchor': 'end', class: 'ytick' }, yl[i]));
    });
    xt.forEach((x, i) => {
      const at = sx(x);
      append(svg,
        s('line', { x1: at, x2: at, y1: H - B, y2: H - B + 3, class: 'axis' }),
        s('text', { x: at, y: H - B + 13, 'text-anchor': at > W - R - 16 ? 'end' : 'middle', class: 'xtick' }, xl[i]));
    });
    append(svg,
      s('line', { x1: L, x2: L, y1: T, y2: H - B, class: 'axis' }),
      s('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis' }));
    const sorted = pts.slice().sort((a, b) => a.x - b.x);
    if (sorted.length > 1) {
      const d = sorted.map((p, i) => (i ? 'L' : 'M') + sx(p.x).toFixed(1) + ' ' + sy(p.y).toFixed(1)).join('');
      append(svg, s('path', { d, class: 'line' }));
    }
    if (opts.dots || sorted.length === 1) {
      for (const p of sorted) append(svg, s('circle', { cx: sx(p.x), cy: sy(p.y), r: 2.6, class: 'dot' }));
    }
    append(svg, s('circle', { cx: sx(last.x), cy: sy(last.y), r: 3.2, class: 'last' },
      s('title', null, 'step ' + fmtInt(last.x) + ': ' + fmt(last.y))));
    replace(container, title, svg);
  }

  // ---------------------------------------------------------- jobs page

  function jobStepText(job) {
    const max = num(job.spec && job.spec.stop && job.spec.stop.max_steps);
    const step = fmtInt(job.global_step || '0');
    return max > 0 ? step + ' / ' + fmtInt(max) : step;
  }

  function evalSummary(job) {
    const entries = metricEntries(job.last_eval_metrics);
    if (!entries.length) return h('span', { class: 'muted' }, '—');
    return h('span', { class: 'metrics-inline' },
      entries.map(([k, v]) => h('span', { 'data-metric': k }, k + ' ', h('b', null, fmtMetric(v)))),
      h('div', { class: 'sub' }, 'at step ' + fmtInt(job.last_eval_step)));
  }

  function jobReason(job) {
    const parts = [];
    const sr = stopReason(job.stop_reason);
    if (sr && sr !== 'UNSPECIFIED') parts.push(h('span', { class: 'tag' }, sr));
    if (job.reason) parts.push(job.reason);
    return parts.length ? parts : h('span', { class: 'muted' }, '—');
  }

  function jobTimes(job) {
    const lines = [];
    const start = num(job.start_unix_ms), end = num(job.end_unix_ms);
    if (start > 0) lines.push(h('div', null, 'started ' + fmtTime(start)));
    else lines.push(h('div', null, 'submitted ' + fmtTime(job.submit_unix_ms)));
    if (end > 0 && start > 0) lines.push(h('div', { class: 'sub' }, 'ran ' + fmtDuration((end - start) / 1000)));
    else if (start > 0) lines.push(h('div', { class: 'sub' }, 'running ' + fmtDuration((Date.now() - start) / 1000)));
    return lines;
  }

  function jobRow(job, openSpecs) {
    const id = job.job_id;
    const max = num(job.spec && job.spec.stop && job.spec.stop.max_steps);
    const step = num(job.global_step);
    const details = h('details', { class: 'spec', 'data-job': id, open: openSpecs.has(id) },
      h('summary', null, 'spec'),
      h('pre', null, JSON.stringify(job.spec || {}, null, 2)));
    details.addEventListener('toggle', () => {
      if (details.open) openSpecs.add(id); else openSpecs.delete(id);
    });
    const running = job.state === 'JOB_STATE_RUNNING' || job.state === 'JOB_STATE_FINISHING';
    return h('tr', { 'data-job': id, 'data-state': job.state },
      h('td', null,
        h('a', { class: 'job-link', href: '/jobs/' + encodeURIComponent(id) }, job.name || id),
        h('div', { class: 'sub mono' }, id)),
      h('td', { class: 'state' }, stateBadge(job.state)),
      h('td', { class: 'reason-cell' }, jobReason(job)),
      h('td', { class: 'num step', 'data-step': job.global_step },
        jobStepText(job),
        max > 0 && h('span', { class: 'progress' }, h('i', { style: 'width:' + Math.min(100, (100 * step) / max).toFixed(1) + '%' }))),
      h('td', { class: 'num' }, running || num(job.examples_per_sec) > 0 ? fmtRate(job.examples_per_sec) : '—'),
      h('td', { class: 'eval' }, evalSummary(job)),
      h('td', { class: 'nowrap' }, jobTimes(job)),
      h('td', { class: 'spec-cell' }, details));
  }

  function jobsTable(id, empty) {
    const tbody = h('tbody', null, h('tr', null, h('td', { class: 'empty', colspan: 8 }, 'loading…')));
    const table = h('table', { id, class: 'jobs' },
      h('thead', null, h('tr', null,
        ['Job', 'State', 'Reason', 'Step', 'Examples/s', 'Newest eval', 'Time', 'Spec'].map((c, i) =>
          h('th', { class: i === 3 || i === 4 ? 'num' : null }, c)))),
      tbody);
    table.dataset.empty = empty;
    return table;
  }

  // Puts the jobs' rows into table, keeping the rows whose job did not
  // change (so an open spec stays open and scrolled).
  function fillJobs(table, jobs, openSpecs) {
    const tbody = table.tBodies[0];
    const old = new Map();
    for (const tr of tbody.rows) if (tr.dataset.job) old.set(tr.dataset.job, tr);
    const rows = jobs.map((job) => {
      const sig = JSON.stringify(job) + (job.start_unix_ms !== '0' && num(job.end_unix_ms) === 0 ? Math.floor(Date.now() / 1000) : '');
      const prev = old.get(job.job_id);
      if (prev && prev._sig === sig) return prev;
      const tr = jobRow(job, openSpecs);
      tr._sig = sig;
      return tr;
    });
    if (!rows.length) rows.push(h('tr', null, h('td', { class: 'empty', colspan: 8 }, table.dataset.empty)));
    replace(tbody, rows);
  }

  function jobsPage() {
    const main = newPage('jobs', 'Jobs');
    const queue = jobsTable('queue', 'Nothing queued or running.');
    const history = jobsTable('history', 'No job has ended yet.');
    const qCount = h('span', { class: 'count' });
    const hCount = h('span', { class: 'count' });
    append(main,
      h('h1', null, 'Jobs'),
      h('h2', null, 'Queue ', qCount),
      h('div', { class: 'table-wrap' }, queue),
      h('h2', null, 'History ', hCount),
      h('div', { class: 'table-wrap' }, history));
    const openSpecs = new Set();
    every(2000, 'jobs', async () => {
      const resp = await api('/api/jobs');
      const jobs = resp.jobs || [];
      const active = jobs.filter((j) => !TERMINAL.has(j.state));
      const ended = jobs.filter((j) => TERMINAL.has(j.state));
      fillJobs(queue, active, openSpecs);
      fillJobs(history, ended, openSpecs);
      qCount.textContent = '(' + active.length + ')';
      hCount.textContent = '(' + ended.length + ')';
      document.body.dataset.state = 'ready';
    });
  }

  // ------------------------------------------------------------ job page

  // Everything the job page learned from the job's events.
  function newJobData() {
    return {
      next: '0',
      loss: [], lr: [], eps: [],
      evals: new Map(),        // metric → Map(step → value)
      evalEvents: new Map(),   // checkpoint step → EvalEvent
      seenCheckpoints: new Map(), // step → CheckpointInfo from events
      failures: new Map(),     // step → CheckpointFailure
      log: [],
      noHistory: false,
      events: 0,               // events read, the log's duplicates included
      progressEvents: 0,
      changed: { plots: true, evals: true, checkpoints: true, log: true },
    };
  }

  function pushPoint(series, x, y) {
    series.push({ x, y });
    if (series.length > MAX_SERIES_POINTS) {
      // Keeps every other of the older half.
      const half = series.length >> 1;
      const kept = series.slice(0, half).filter((_, i) => i % 2 === 0);
      series.splice(0, half, ...kept);
    }
  }

  function addEval(data, step, metrics) {
    for (const [name, v] of Object.entries(metrics || {})) {
      if (!data.evals.has(name)) data.evals.set(name, new Map());
      data.evals.get(name).set(step, num(v));
    }
    data.changed.evals = true;
  }

  function metricsText(metrics) {
    return metricEntries(metrics).map(([k, v]) => k + ' ' + fmtMetric(v)).join(', ');
  }

  // One event → [kind, summary] for the log.
  function describeEvent(ev) {
    if (ev.progress) {
      const p = ev.progress;
      const parts = ['step ' + fmtInt(p.global_step), 'loss ' + fmtLoss(p.loss), fmtRate(p.examples_per_sec) + ' ex/s'];
      if (num(p.learning_rate) > 0) parts.push('lr ' + fmtLr(p.learning_rate));
      if (p.epoch !== undefined) parts.push('epoch ' + fmtInt(p.epoch));
      return ['progress', parts.join(' · ')];
    }
    if (ev.status) {
      const st = ev.status;
      const parts = [jobState(st.state)];
      const sr = stopReason(st.stop_reason);
      if (sr && sr !== 'UNSPECIFIED') parts.push(sr);
      parts.push('step ' + fmtInt(st.global_step || '0'));
      if (st.reason) parts.push(st.reason);
      return ['status', parts.join(' · ')];
    }
    if (ev.checkpoint) {
      const c = ev.checkpoint;
      let text = 'ckpt-' + c.step + ' saved (' + fmtBytes(c.bytes) + ')';
      if (c.final) text += ' · final';
      const m = metricsText(c.metrics);
      if (m) text += ' · ' + m;
      return ['checkpoint', text];
    }
    if (ev.eval) {
      const e = ev.eval;
      if (e.skipped_reason) return ['eval', 'ckpt-' + e.checkpoint_step + ' not evaluated: ' + e.skipped_reason];
      let text = 'ckpt-' + e.checkpoint_step + ': ' + (metricsText(e.metrics) || 'no metrics');
      if (e.is_best) text += ' · best';
      if (e.final) text += ' · final';
      return ['eval', text];
    }
    if (ev.checkpoint_failure) {
      const f = ev.checkpoint_failure;
      const max = num(f.max_consecutive_failures);
      return ['failure', 'ckpt-' + f.step + ' failed (' + f.consecutive_failures + ' in a row' +
        (max > 0 ? ' of at most ' + max : '') + ')' + (f.final ? ' · final' : '') + ': ' + f.message];
    }
    return ['other', JSON.stringify(ev)];
  }

  function takeEvents(data, events) {
    for (const ev of events) {
      if (ev.progress) {
        const p = ev.progress;
        const x = num(p.global_step);
        pushPoint(data.loss, x, num(p.loss));
        const lr = num(p.learning_rate);
        if (lr !== 0 && p.learning_rate !== undefined) pushPoint(data.lr, x, lr);
        pushPoint(data.eps, x, num(p.examples_per_sec));
        data.progressEvents++;
        data.changed.plots = true;
      } else if (ev.eval) {
        data.evalEvents.set(String(ev.eval.checkpoint_step), ev.eval);
        addEval(data, num(ev.eval.checkpoint_step), ev.eval.metrics);
        data.changed.checkpoints = true;
      } else if (ev.checkpoint) {
        data.seenCheckpoints.set(String(ev.checkpoint.step), ev.checkpoint);
        addEval(data, num(ev.checkpoint.step), ev.checkpoint.metrics);
        data.changed.checkpoints = true;
      } else if (ev.checkpoint_failure) {
        data.failures.set(String(ev.checkpoint_failure.step), ev.checkpoint_failure);
        data.changed.checkpoints = true;
      }
      data.events++;
      const [kind, summary] = describeEvent(ev);
      // The server may send the same status twice in a row (the final one,
      // say): the log shows it once.
      const prev = data.log[data.log.length - 1];
      if (kind === 'status' && prev && prev.kind === 'status' && prev.summary === summary) continue;
      data.log.push({ time: ev.unix_ms, kind, summary });
      data.changed.log = true;
    }
    if (data.log.length > MAX_LOG_EVENTS) data.log.splice(0, data.log.length - MAX_LOG_EVENTS);
  }

  function takeStatusEvals(data, status) {
    for (const c of status.checkpoints || []) {
      if (Object.keys(c.metrics || {}).length) addEval(data, num(c.step), c.metrics);
    }
    if (num(status.last_eval_step) > 0 && Object.keys(status.last_eval_metrics || {}).length) {
      addEval(data, num(status.last_eval_step), status.last_eval_metrics);
    }
  }

  // One labelled value of the job's header; opts: {id, step, wide}.
  function fact(label, value, opts) {
    opts = opts || {};
    return h('div', { class: opts.wide ? 'wide' : null },
      h('dt', null, label),
      h('dd', { id: opts.id, 'data-step': opts.step, class: opts.wide ? 'wide' : null }, value));
  }

  function renderJobHead(view, status) {
    const st = status.state;
    replace(view.name, status.name || status.job_id);
    replace(view.id, status.job_id);
    view.state.className = 'badge s-' + jobState(st).toLowerCase();
    view.state.textContent = jobState(st);
    view.state.dataset.state = st;
    document.body.dataset.jobState = jobState(st);

    view.reason.textContent = status.reason || '';
    view.reason.className = 'reason' + (st === 'JOB_STATE_FAILED' ? ' r-failed' : TERMINAL.has(st) ? ' r-done' : '');

    const start = num(status.start_unix_ms), end = num(status.end_unix_ms);
    const facts = [
      fact('Step', jobStepText(status), { id: 'job-step', step: status.global_step }),
      fact('Loss', num(status.global_step) > 0 ? fmtLoss(status.loss) : '—', { id: 'job-loss' }),
      fact('Examples/s', num(status.global_step) > 0 ? fmtRate(status.examples_per_sec) : '—', { id: 'job-eps' }),
      fact('Stop reason', stopReason(status.stop_reason) === 'UNSPECIFIED' ? '—' : stopReason(status.stop_reason), { id: 'job-stop-reason' }),
      fact('Submitted', fmtTime(status.submit_unix_ms)),
      fact('Started', fmtTime(status.start_unix_ms), { id: 'job-start' }),
      fact('Ended', fmtTime(status.end_unix_ms), { id: 'job-end' }),
      fact(end > 0 ? 'Ran for' : 'Running for', start > 0 ? fmtDuration(((end > 0 ? end : Date.now()) - start) / 1000) : '—'),
    ];
    if (status.resumed_from || num(status.resumed_from_step) > 0) {
      facts.push(fact('Resumed from', 'step ' + fmtInt(status.resumed_from_step) + (status.resumed_from ? ' (' + status.resumed_from + ')' : ''), { id: 'job-resumed' }));
    }
    const counted = [
      ['rollbacks', 'Rollbacks', 'last_rollback'],
      ['failovers', 'Failovers', 'last_failover'],
      ['checkpoint_failures', 'Checkpoint failures', 'last_checkpoint_failure'],
      ['backups_rebuilt', 'Backups rebuilt', 'last_backup_rebuilt'],
    ];
    for (const [field, label, last] of counted) {
      if (num(status[field]) > 0) {
        facts.push(fact(label + ': ' + status[field], status[last] || '', { id: 'job-' + field.replace(/_/g, '-'), wide: true }));
      }
    }
    replace(view.facts, facts);

    const stoppable = app.console && app.console.stop_enabled && STOPPABLE.has(st);
    view.stopButton.hidden = !stoppable;
  }

  function renderEvalMetrics(view, status) {
    const entries = metricEntries(status.last_eval_metrics);
    if (!entries.length) {
      replace(view.evalMetrics, h('span', { class: 'muted' }, 'No evaluation yet.'));
      return;
    }
    const best = num(status.best_checkpoint_step);
    replace(view.evalMetrics,
      h('span', { class: 'muted' }, 'Newest, at step ' + fmtInt(status.last_eval_step) +
        (best > 0 ? ' (best: ckpt-' + status.best_checkpoint_step + ')' : '') + ': '),
      entries.map(([k, v]) => h('span', { class: 'metric-chip', 'data-metric': k }, h('b', null, k), fmtMetric(v))));
  }

  function renderPlots(view, data) {
    const specs = [
      ['loss', 'training loss', data.loss, fmtLoss],
      ['learning_rate', 'learning rate', data.lr, fmtLr],
      ['examples_per_sec', 'examples/s', data.eps, fmtRate],
    ];
    for (const [key, title, series, format] of specs) {
      const el = view.plots.get(key);
      linePlot(el, {
        title, points: series, format,
        empty: key === 'learning_rate' && data.loss.length ? 'not reported by this coordinator' : 'no progress yet',
      });
    }
  }

  function renderEvalPlots(view, data) {
    const names = [...data.evals.keys()].sort();
    if (!names.length) {
      if (!view.evalPlots.querySelector('.empty-note')) {
        replace(view.evalPlots, h('p', { class: 'muted empty-note' }, 'Eval metrics appear here once a checkpoint is evaluated.'));
      }
      return;
    }
    const note = view.evalPlots.querySelector('.empty-note');
    if (note) note.remove();
    for (const name of names) {
      const key = 'eval:' + name;
      let el = view.evalPlots.querySelector(`.plot[data-series="${CSS.escape(key)}"]`);
      if (!el) {
        el = h('div', { class: 'plot eval', 'data-series': key, 'data-points': '0' });
        view.evalPlots.appendChild(el);
      }
      const points = [...data.evals.get(name).entries()].map(([x, y]) => ({ x, y })).sort((a, b) => a.x - b.x);
      linePlot(el, { title: 'eval ' + name, points, dots: true, format: fmtMetric });
    }
  }

  // The last component of a path: "/m/run/ckpt-100/" → "ckpt-100".
  function baseName(path) {
    const parts = String(path || '').split('/').filter(Boolean);
    return parts.length ? parts[parts.length - 1] : String(path || '');
  }

  // Metrics as "accuracy 0.8957, loss 0.3191", wrapping between metrics only.
  function metricsCell(metrics) {
    const entries = metricEntries(metrics);
    if (!entries.length) return h('span', { class: 'muted' }, '—');
    return entries.map(([k, v], i) => [i ? ', ' : '', h('span', { class: 'nowrap' }, k + ' ' + fmtMetric(v))]);
  }

  function renderCheckpoints(view, data, status) {
    const kept = new Map((status.checkpoints || []).map((c) => [String(c.step), c]));
    const newestKept = Math.max(0, ...[...kept.keys()].map(num));
    const ended = TERMINAL.has(status.state);
    const best = String(status.best_checkpoint_step || '0');
    const steps = new Set([...kept.keys(), ...data.seenCheckpoints.keys(), ...data.failures.keys()]);
    const rows = [...steps].sort((a, b) => num(b) - num(a)).map((step) => {
      const c = kept.get(step) || data.seenCheckpoints.get(step);
      const ev = data.evalEvents.get(step);
      const tags = [];
      let metrics = c && Object.keys(c.metrics || {}).length ? c.metrics : ev && ev.metrics;
      let cls = '';
      if (kept.has(step)) {
        if (step === best && best !== '0') tags.push(h('span', { class: 'tag best' }, 'best'));
        if (c.final) tags.push(h('span', { class: 'tag final' }, 'final'));
        if (Object.keys(metrics || {}).length) tags.push(h('span', { class: 'tag' }, 'evaluated'));
        else if (ev && ev.skipped_reason) {
          tags.push(h('span', { class: 'tag skipped' }, 'not evaluated'), h('div', { class: 'skip-reason' }, ev.skipped_reason));
        }
        else tags.push(h('span', { class: 'tag waiting' }, 'waiting for evaluation'));
      } else if (c) {
        // Seen saved, gone from the status: retention removed it (unless
        // the status predates it).
        if (ended || num(step) < newestKept) {
          tags.push(h('span', { class: 'tag deleted' }, 'deleted (retention)'));
          cls = 'deleted';
        } else {
          tags.push(h('span', { class: 'tag waiting' }, 'saved'));
        }
        if (c.final) tags.push(h('span', { class: 'tag final' }, 'final'));
      } else {
        const f = data.failures.get(step);
        tags.push(h('span', { class: 'tag failed', title: f.message }, 'failed to save'));
        cls = 'failed';
        metrics = null;
      }
      const f = !c && data.failures.get(step);
      return h('tr', { 'data-step': step, 'data-kept': kept.has(step) ? '1' : '0', class: cls || null },
        h('td', { class: 'nowrap' }, 'ckpt-' + step),
        h('td', { class: 'state' }, tags),
        h('td', { class: 'nowrap' }, c ? fmtTime(c.created_unix_ms, true) : '—'),
        h('td', { class: 'num' }, c ? fmtBytes(c.bytes) : '—'),
        h('td', { class: 'metrics' }, metricsCell(metrics)),
        c ? h('td', { class: 'ckpt-path', title: c.path, 'data-path': c.path }, h('span', null, baseName(c.path)))
          : h('td', { class: 'message' }, f ? f.message : ''));
    });
    if (!rows.length) rows.push(h('tr', null, h('td', { class: 'empty', colspan: 6 }, 'No checkpoint yet.')));
    replace(view.checkpoints.tBodies[0], rows);
    // The export path shows its end, its start cut to an ellipsis if the
    // line is short; the whole path stays in the text (a copy takes it) and
    // the tooltip. Redrawn only on a change, so a selection survives a poll.
    const exported = status.export_path || '';
    const key = exported || (ended ? ':none' : ':pending');
    if (view.exportPath.dataset.key !== key) {
      view.exportPath.dataset.key = key;
      if (exported) view.exportPath.title = exported;
      else view.exportPath.removeAttribute('title');
      replace(view.exportPath, exported ? h('span', { dir: 'ltr' }, exported) : h('span', { class: 'muted' }, ended ? 'none' : 'not exported yet'));
    }
  }

  function renderLog(view, data) {
    const withProgress = view.logProgress.checked;
    const rows = [];
    for (let i = data.log.length - 1; i >= 0 && rows.length < LOG_ROWS; i--) {
      const e = data.log[i];
      if (e.kind === 'progress' && !withProgress) continue;
      rows.push(h('tr', { 'data-kind': e.kind },
        h('td', null, fmtTime(e.time, true)),
        h('td', { class: 'kind kind-' + e.kind }, e.kind),
        h('td', null, e.summary)));
    }
    if (!rows.length) {
      rows.push(h('tr', null, h('td', { class: 'empty', colspan: 3 },
        data.noHistory ? 'This coordinator has no events of this job.' : data.progressEvents ? 'Only progress so far.' : 'No events yet.')));
    }
    replace(view.log.tBodies[0], rows);
    replace(view.logCount, !data.log.length ? '' :
      data.log.length + ' events' + (withProgress || !data.progressEvents ? '' : ', ' + data.progressEvents + ' progress hidden'));
  }

  function stopDialog(view, jobId) {
    const result = view.stopResult;
    const dialog = h('dialog', { id: 'stop-dialog' },
      h('p', null, 'Stop job ', h('b', null, jobId), '?'),
      h('p', { class: 'muted' }, 'Training ends; the job saves its final checkpoint and is marked STOPPED.'),
      h('div', { class: 'actions' },
        h('button', { type: 'button', id: 'stop-cancel', onclick: () => dialog.close() }, 'Cancel'),
        h('button', { type: 'button', id: 'stop-confirm', class: 'danger', onclick: confirmStop }, 'Stop the job')));
    async function confirmStop() {
      dialog.close();
      view.stopButton.disabled = true;
      result.className = '';
      result.textContent = 'Stopping…';
      try {
        const resp = await api('/api/jobs/' + encodeURIComponent(jobId) + '/stop', {
          method: 'POST', headers: { 'X-Pstrain-Console': 'stop' },
        });
        const st = resp.status || {};
        result.textContent = 'Stop requested: the job is ' + jobState(st.state) + (st.reason ? ' (' + st.reason + ')' : '') + '.';
        if (view.refresh) view.refresh();
      } catch (e) {
        if (e instanceof AuthError) return;
        result.className = 'error';
        result.textContent = 'Stop failed: ' + (e.message || String(e));
        if (!(e instanceof ApiError)) console.error(e);
      } finally {
        view.stopButton.disabled = false;
      }
    }
    return dialog;
  }

  function jobPage(jobId) {
    const main = newPage('job', jobId);
    const view = {
      name: h('h1', { id: 'job-name' }, jobId),
      state: h('span', { id: 'job-state', class: 'badge' }, '…'),
      id: h('span', { id: 'job-id', class: 'mono' }, jobId),
      reason: h('div', { id: 'job-reason', class: 'reason' }),
      facts: h('dl', { id: 'job-facts', class: 'facts' }),
      stopButton: h('button', { type: 'button', id: 'stop-button', class: 'danger', hidden: true }, 'Stop job'),
      stopResult: h('span', { id: 'stop-result', role: 'status' }),
      plots: new Map(),
      evalMetrics: h('div', { id: 'eval-metrics' }),
      evalPlots: h('div', { id: 'eval-plots', class: 'plots' }),
      checkpoints: h('table', { id: 'checkpoints' },
        h('thead', null, h('tr', null, ['Checkpoint', 'State', 'Saved', 'Size', 'Metrics', 'Folder'].map((c) =>
          h('th', { class: c === 'Size' ? 'num' : null, title: c === 'Folder' ? 'the checkpoint\'s folder; its full path in the tooltip' : null }, c)))),
        h('tbody')),
      exportPath: h('span', { id: 'export-path', class: 'clipped-path' }),
      log: h('table', { id: 'event-log' },
        h('thead', null, h('tr', null, h('th', null, 'Time'), h('th', null, 'Kind'), h('th', null, 'Summary'))),
        h('tbody')),
      logProgress: h('input', { type: 'checkbox', id: 'log-progress' }),
      logCount: h('span', { id: 'log-count' }),
    };
    const trainPlots = h('div', { id: 'train-plots', class: 'plots' });
    const trainNote = h('p', { id: 'train-note', class: 'note', hidden: true },
      'No curves: this coordinator has no events of this job (it restarted since the job ran). ' +
      'The job\'s TensorBoard files and scalars.jsonl are in its model_dir.');
    for (const key of ['loss', 'learning_rate', 'examples_per_sec']) {
      const el = h('div', { class: 'plot', 'data-series': key, 'data-points': '0' });
      view.plots.set(key, el);
      trainPlots.appendChild(el);
    }
    const dialog = stopDialog(view, jobId);
    view.stopButton.addEventListener('click', () => dialog.showModal());
    const body = h('div', { id: 'job-body', hidden: true },
      h('section', { class: 'panel' },
        h('div', { class: 'job-head' }, view.name, view.state, view.id),
        view.reason,
        view.facts,
        h('div', { class: 'stop-area' }, view.stopButton, view.stopResult),
        dialog),
      h('section', { class: 'panel' }, h('h2', null, 'Training'), trainNote, trainPlots),
      h('section', { class: 'panel' }, h('h2', null, 'Evaluation'), view.evalMetrics, view.evalPlots),
      h('div', { class: 'two-col' },
        h('section', { class: 'panel' }, h('h2', null, 'Checkpoints'),
          h('div', { class: 'scroll' }, view.checkpoints),
          h('p', { class: 'export-line' }, h('span', { class: 'muted' }, 'Export:'), view.exportPath)),
        h('section', { class: 'panel' }, h('h2', null, 'Events'),
          h('div', { class: 'log-tools' }, h('label', null, view.logProgress, ' show progress'), view.logCount),
          h('div', { class: 'scroll' }, view.log))));
    append(main, body);

    const data = newJobData();
    let status = null;
    let ended = false;
    const render = () => {
      if (!status) return;
      // An ended job that trained but of which this coordinator kept no
      // event (it restarted since): a note instead of empty plots; the
      // evaluation comes from the status's checkpoints.
      const noHistory = ended && data.events === 0 && num(status.global_step) > 0;
      if (noHistory !== data.noHistory) {
        data.noHistory = noHistory;
        data.changed.log = true;
      }
      trainNote.hidden = !noHistory;
      trainPlots.hidden = noHistory;
      renderJobHead(view, status);
      renderEvalMetrics(view, status);
      if (data.changed.plots) renderPlots(view, data);
      if (data.changed.evals) renderEvalPlots(view, data);
      renderCheckpoints(view, data, status);
      if (data.changed.log) renderLog(view, data);
      data.changed = { plots: false, evals: false, checkpoints: false, log: false };
      body.hidden = false;
    };
    view.logProgress.addEventListener('change', () => renderLog(view, data));

    const gen = app.generation;
    async function pollEvents() {
      const resp = await api('/api/jobs/' + encodeURIComponent(jobId) + '/events?after=' + encodeURIComponent(data.next));
      if (gen !== app.generation) return;
      if (resp.next !== undefined && resp.next !== '' && num(resp.next) < num(data.next)) {
        // The numbering started again (a restarted coordinator): read the
        // retained events from the start.
        Object.assign(data, newJobData(), { changed: { plots: true, evals: true, checkpoints: true, log: true } });
        return;
      }
      takeEvents(data, resp.events || []);
      if (resp.next !== undefined && resp.next !== '') data.next = String(resp.next);
    }
    async function pollStatus() {
      const st = await api('/api/jobs/' + encodeURIComponent(jobId));
      if (gen !== app.generation) return;
      status = st;
      takeStatusEvals(data, status);
    }
    // Events first, then the status: every checkpoint event seen is older
    // than the status, so one missing from its checkpoints was deleted.
    let inFlight = null;
    async function tick() {
      await pollEvents();
      await pollStatus();
      if (TERMINAL.has(status.state)) {
        // The final status is in: take the events that came before it.
        await pollEvents();
        ended = true;
      }
      render();
      document.body.dataset.state = 'ready';
      document.body.dataset.polling = ended ? 'done' : 'live';
    }
    // One tick at a time: the stop button's refresh and the poller share it.
    function runTick() {
      if (!inFlight) inFlight = tick().finally(() => { inFlight = null; });
      return inFlight;
    }
    view.refresh = () => {
      if (!ended) runTick().catch((e) => report('job', e));
    };

    let first = true;
    every(1000, 'job', async () => {
      try {
        await runTick();
      } catch (e) {
        if (first && e instanceof ApiError && !(e instanceof AuthError) && e.status === 404) {
          // An unknown job: the server's message, and no more polling.
          replace(main, h('h1', null, 'Job ' + jobId), h('div', { id: 'job-error', class: 'not-found' }, e.message));
          document.body.dataset.state = 'error';
          return false;
        }
        throw e;
      } finally {
        first = false;
      }
      return !ended;
    });
  }

  // --------------------------------------------------------- cluster page

  const ROLE_ORDER = { TASK_TYPE_CHIEF: 0, TASK_TYPE_PS: 1, TASK_TYPE_WORKER: 2, TASK_TYPE_EVALUATOR: 3 };
  const taskName = (m) => role(m.task && m.task.type) + '/' + ((m.task && m.task.index) || 0);

  // Prometheus text → [{name, labels, value}].
  function parseMetrics(text) {
    const samples = [];
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (!line || line[0] === '#') continue;
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
      if (!m) continue;
      const labels = {};
      if (m[3]) {
        const re = /([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"/g;
        let lm;
        while ((lm = re.exec(m[3]))) labels[lm[1]] = lm[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
      }
      samples.push({ name: m[1], labels, value: num(m[4]) });
    }
    return samples;
  }

  function sumOf(samples, name, filter) {
    let total = 0, found = false;
    for (const smp of samples) {
      if (smp.name !== name || !Number.isFinite(smp.value)) continue;
      if (filter && !Object.entries(filter).every(([k, v]) => smp.labels[k] === v)) continue;
      total += smp.value;
      found = true;
    }
    return found ? total : NaN;
  }

  // What the cluster page keeps between two fetches of a member's metrics.
  function memberSample(samples) {
    const phases = {};
    for (const [p] of PHASES) phases[p] = sumOf(samples, 'pstrain_worker_step_phase_seconds_sum', { phase: p });
    const fallbacks = {};
    for (const smp of samples) {
      if (smp.name === 'pstrain_worker_lane_fallbacks_total' && Number.isFinite(smp.value)) {
        const r = smp.labels.reason || '?';
        fallbacks[r] = (fallbacks[r] || 0) + smp.value;
      }
    }
    return {
      t: performance.now(),
      start: sumOf(samples, 'process_start_time_seconds'),
      phases,
      fallbacks,
      laneRequests: sumOf(samples, 'pstrain_ps_lane_requests_total'),
      laneBytes: sumOf(samples, 'pstrain_ps_lane_bytes_total'),
    };
  }

  // Shares of the wall time between two samples: each phase's delta of
  // seconds over the wall seconds, idle the rest (at least 0).
  function phaseShares(prev, cur) {
    const wall = (cur.t - prev.t) / 1000;
    if (!(wall > 0.2) || cur.start !== prev.start) return null;
    const shares = [];
    let busy = 0;
    for (const [p, label] of PHASES) {
      const d = cur.phases[p] - prev.phases[p];
      const share = Number.isFinite(d) && d > 0 ? d / wall : 0;
      if (!Number.isFinite(cur.phases[p]) && !Number.isFinite(prev.phases[p])) continue;
      if (d < 0) return null; // the counters went back: a restart
      shares.push([p, label, share]);
      busy += share;
    }
    if (!shares.length) return null;
    // Phases of steps that overlap can add up past the wall time: scale.
    if (busy > 1) {
      for (const s2 of shares) s2[2] /= busy;
      busy = 1;
    }
    shares.push(['idle', 'idle', Math.max(0, 1 - busy)]);
    return shares;
  }

  function phaseBar(task, shares) {
    const bar = h('div', { class: 'phase-bar', 'data-task': task });
    if (!shares) {
      bar.dataset.label = '';
      return [bar, h('span', { class: 'phase-label' }, 'measuring…')];
    }
    // One decimal below 10% (but "10%", not "10.0%").
    const pct = (v) => (100 * v).toFixed(v > 0 && 100 * v < 9.95 ? 1 : 0) + '%';
    const label = shares.map(([, l, v]) => l + ' ' + pct(v)).join(' · ');
    bar.dataset.label = label;
    bar.title = label;
    for (const [p, l, v] of shares) {
      if (v <= 0) continue;
      append(bar, h('span', { class: 'ph-' + p, style: 'width:' + (100 * v).toFixed(2) + '%', title: l + ' ' + pct(v) },
        v >= 0.07 ? pct(v) : ''));
    }
    return [bar, h('span', { class: 'phase-label' }, label)];
  }

  function lanesCell(m, info) {
    const type = m.task && m.task.type;
    if (type !== 'TASK_TYPE_PS' && type !== 'TASK_TYPE_WORKER') return h('span', { class: 'muted' }, '—');
    if (m.state === 'MEMBER_STATE_LOST' || m.state === 'MEMBER_STATE_LEFT' || !m.metrics_address) return h('span', { class: 'muted' }, '—');
    if (!info) return h('span', { class: 'muted' }, '…');
    if (info.error) return h('span', { class: 'tag failed', title: info.error }, 'metrics: error');
    const cur = info.cur;
    if (type === 'TASK_TYPE_PS') {
      if (!Number.isFinite(cur.laneRequests) && !Number.isFinite(cur.laneBytes)) return h('span', { class: 'muted' }, 'no lanes');
      let rate = '';
      if (info.prev && info.prev.start === cur.start) {
        const wall = (cur.t - info.prev.t) / 1000;
        const d = cur.laneRequests - info.prev.laneRequests;
        if (wall > 0.2 && d >= 0) rate = ' (' + fmtRate(d / wall) + '/s)';
      }
      return h('span', { class: 'lanes' }, fmtCount(cur.laneRequests) + ' req' + rate + ' · ' + fmtBytes(cur.laneBytes));
    }
    const entries = Object.entries(cur.fallbacks);
    const total = entries.reduce((a, [, v]) => a + v, 0);
    if (total > 0) {
      return h('span', { class: 'lanes', title: entries.map(([r, v]) => r + ': ' + v).join(', ') },
        'fallbacks ' + fmtInt(total) + ' (' + entries.filter(([, v]) => v > 0).map(([r]) => r).join(', ') + ')');
    }
    return h('span', { class: 'lanes' }, 'shm');
  }

  function clusterPage() {
    const main = newPage('cluster', 'Cluster');
    const runningJob = h('span', { id: 'running-job' }, '…');
    const queued = h('b', { id: 'queued-jobs' }, '…');
    const memberCount = h('b', { id: 'member-count' }, '…');
    const members = h('table', { id: 'members' },
      h('thead', null, h('tr', null,
        ['Role', 'Index', 'Address', 'Incarnation', 'State', 'Health', 'Heartbeat', 'Step', 'Queue', 'Job', 'Metrics', 'Lanes']
          .map((c) => h('th', { class: ['Index', 'Heartbeat', 'Step', 'Queue'].includes(c) ? 'num' : null }, c)))),
      h('tbody', null, h('tr', null, h('td', { class: 'empty', colspan: 12 }, 'loading…'))));
    const phases = h('div', { id: 'phases' });
    append(main,
      h('h1', null, 'Cluster'),
      h('div', { class: 'summary-bar' },
        h('span', null, 'Running job: ', runningJob),
        h('span', null, 'Queued jobs: ', queued),
        h('span', null, 'Members: ', memberCount)),
      h('div', { class: 'table-wrap' }, members),
      h('section', { class: 'panel', style: 'margin-top:14px' },
        h('h2', null, 'Worker step time'),
        h('div', { class: 'legend' }, [...PHASES, ['idle', 'idle']].map(([p, l]) => h('span', null, h('i', { class: 'ph-' + p }), l))),
        phases));

    const metrics = new Map(); // task → {incarnation, prev, cur, error}
    let cluster = null;
    const gen = app.generation;

    function render() {
      if (!cluster) return;
      const run = cluster.running_job_id;
      replace(runningJob, run ? h('a', { href: '/jobs/' + encodeURIComponent(run), class: 'mono' }, run) : h('span', { class: 'muted' }, 'none'));
      queued.textContent = String(cluster.queued_jobs || 0);
      const list = (cluster.members || []).slice().sort((a, b) =>
        (ROLE_ORDER[a.task && a.task.type] ?? 9) - (ROLE_ORDER[b.task && b.task.type] ?? 9) ||
        ((a.task && a.task.index) || 0) - ((b.task && b.task.index) || 0));
      memberCount.textContent = String(list.length);
      const now = Date.now();
      const rows = list.map((m) => {
        const task = taskName(m);
        const hb = num(m.last_heartbeat_unix_ms);
        const state = shortEnum(m.state, 'MEMBER_STATE_');
        const health = shortEnum(m.health, 'MEMBER_HEALTH_');
        const info = metrics.get(task);
        return h('tr', { 'data-task': task, 'data-state': m.state },
          h('td', null, role(m.task && m.task.type)),
          h('td', { class: 'num' }, String((m.task && m.task.index) || 0)),
          h('td', { class: 'mono' }, m.address || h('span', { class: 'muted' }, '—')),
          h('td', { class: 'mono' }, m.incarnation || '—'),
          h('td', null, badge(state || 'UNKNOWN')),
          h('td', { class: 'detail' }, health === 'UNSPECIFIED' ? h('span', { class: 'muted' }, 'not reported') : badge(health),
            m.health_detail && h('span', { class: 'health-detail' }, m.health_detail)),
          h('td', { class: 'num heartbeat', title: fmtTime(hb) }, hb > 0 ? fmtDuration((now - hb) / 1000) : '—'),
          h('td', { class: 'num' }, fmtInt(m.step || '0')),
          h('td', { class: 'num' }, String(m.queue_depth || 0)),
          h('td', { class: 'mono' }, m.job_id ? h('a', { href: '/jobs/' + encodeURIComponent(m.job_id) }, m.job_id) : h('span', { class: 'muted' }, '—')),
          h('td', null, m.metrics_address ? h('a', { href: 'http://' + m.metrics_address + '/metrics', target: '_blank', rel: 'noopener' }, '/metrics') : h('span', { class: 'muted' }, '—')),
          h('td', null, lanesCell(m, info)));
      });
      if (!rows.length) rows.push(h('tr', null, h('td', { class: 'empty', colspan: 12 }, 'No member has registered.')));
      replace(members.tBodies[0], rows);

      const workers = list.filter((m) => m.task && m.task.type === 'TASK_TYPE_WORKER');
      replace(phases, workers.length ? workers.map((m) => {
        const task = taskName(m);
        const info = metrics.get(task);
        let shares = null;
        let note = null;
        if (!alive(m)) note = shortEnum(m.state, 'MEMBER_STATE_').toLowerCase();
        else if (info && info.error) note = 'metrics: ' + info.error;
        else if (info && info.prev) shares = phaseShares(info.prev, info.cur);
        const [bar, label] = phaseBar(task, shares);
        if (note) label.textContent = note;
        return h('div', { class: 'phase-row', 'data-task': task }, h('span', { class: 'mono' }, task), bar, label);
      }) : h('p', { class: 'muted' }, 'No worker has registered.'));
    }

    const alive = (m) => m.state !== 'MEMBER_STATE_LOST' && m.state !== 'MEMBER_STATE_LEFT' && !!m.metrics_address;

    async function fetchMetrics(m) {
      const type = role(m.task && m.task.type);
      const task = taskName(m);
      const index = (m.task && m.task.index) || 0;
      let info = metrics.get(task);
      if (!info || info.incarnation !== m.incarnation) {
        info = { incarnation: m.incarnation, prev: null, cur: null, error: '' };
        metrics.set(task, info);
      }
      try {
        const text = await api('/api/members/' + type + '/' + index + '/metrics', { text: true });
        if (gen !== app.generation) return;
        const sample = memberSample(parseMetrics(text));
        if (info.cur) info.prev = info.cur;
        info.cur = sample;
        info.error = '';
        setError('metrics ' + task, '');
      } catch (e) {
        if (e instanceof AuthError || gen !== app.generation) return;
        info.error = e.message || String(e);
        info.prev = info.cur = null;
        if (!(e instanceof ApiError)) console.error(e);
        setError('metrics ' + task, 'metrics of ' + task + ': ' + info.error);
      }
    }

    every(2000, 'cluster', async () => {
      cluster = await api('/api/cluster');
      if (gen !== app.generation) return;
      const wanted = (cluster.members || []).filter((m) => alive(m) &&
        (m.task.type === 'TASK_TYPE_WORKER' || m.task.type === 'TASK_TYPE_PS'));
      const names = new Set(wanted.map(taskName));
      for (const key of [...metrics.keys()]) {
        if (!names.has(key)) {
          metrics.delete(key);
          setError('metrics ' + key, '');
        }
      }
      await Promise.all(wanted.map(fetchMetrics));
      if (gen !== app.generation) return;
      render();
      document.body.dataset.state = 'ready';
    });
  }

  // --------------------------------------------------------------- start

  function notFoundPage() {
    const main = newPage('not-found', 'Not found');
    append(main, h('h1', null, 'Not found'), h('p', null, 'No console page at ' + location.pathname + '. ', h('a', { href: '/' }, 'Jobs')));
    document.body.dataset.state = 'error';
  }

  function route() {
    const path = location.pathname.replace(/\/+$/, '') || '/';
    if (path === '/' || path === '/jobs') return jobsPage();
    const m = /^\/jobs\/([^/]+)$/.exec(path);
    if (m) {
      let id;
      try { id = decodeURIComponent(m[1]); } catch (e) { id = m[1]; }
      return jobPage(id);
    }
    if (path === '/cluster') return clusterPage();
    return notFoundPage();
  }

  async function start() {
    $('#sign-out').addEventListener('click', (ev) => {
      ev.preventDefault();
      showLogin('');
    });
    try {
      app.console = await api('/api/console');
    } catch (e) {
      report('console', e);
      replace($('#main'), h('p', { class: 'muted' }, 'The console could not start.'));
      document.body.dataset.state = 'error';
      return;
    }
    replace($('#coordinator'), app.console.coordinator || '');
    if (app.console.auth_required && !token()) {
      showLogin('');
      return;
    }
    updateSignOut();
    route();
  }

  window.addEventListener('unhandledrejection', (ev) => {
    // Every promise here is awaited or caught; this is a last guard.
    ev.preventDefault();
    report('unhandled', ev.reason instanceof Error ? ev.reason : new Error(String(ev.reason)));
  });

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
