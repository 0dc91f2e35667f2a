#!/usr/bin/env node
// Drives the coordinator's web console in headless Chromium and checks what
// a person would see.
//
//   node console_browser.js --url=http://127.0.0.1:PORT --job=JOB_ID --out=DIR
//       [--token=TOKEN] [--expect_auth] [--phase=running|ended|stop] [--metric=NAME]
//       [--spki=BASE64]
//
// --phase=running: the job's plots gain points while it trains; the jobs
//   list shows it; the cluster page shows a worker and its step-time bar.
// --phase=ended: the job page shows the final state, the eval metrics and
//   the checkpoints, and its state and step equal GET /api/jobs/JOB_ID.
// --phase=stop: on a coordinator run with --console_stop, the running job's
//   Stop button asks first, Cancel changes nothing, and the job ends STOPPED.
// Both phases: the job page's tables fit their cards, no plot repeats a
//   tick label or puts a fractional step on its x axis, and the event log
//   shows no status twice in a row.
// --expect_auth: the console asks for the token first, refuses a wrong one,
//   takes the right one, and never shows it.
// --spki: an https:// console's certificate is trusted by the SHA-256 of its
//   public key (base64), as Chromium's --ignore-certificate-errors-spki-list
//   takes it; Node's own requests trust the CA in $NODE_EXTRA_CA_CERTS.
//
// Prints "ok: ..." or "FAIL: ..." per check, writes screenshots to --out,
// and exits non-zero on any failure, a console error, a page error or a
// failed request on a page where none is expected.
'use strict';

const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const CHROMIUM = '/usr/bin/chromium';
const DEADLINE_MS = 6 * 60 * 1000;
// The longest a page may take to show what a check waits for. Generous: on
// a loaded 2-core machine the cluster, the coordinator's answers and
// Chromium share the cores; a check that passes does not wait it out.
const PATIENCE_MS = 60000;

function parseArgs(argv) {
  const args = { phase: '', token: '', expect_auth: false, metric: '', spki: '' };
  for (const arg of argv) {
    const m = /^--([a-z_]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error('unknown argument: ' + arg);
    const [, key, value] = m;
    if (!['url', 'job', 'out', 'token', 'expect_auth', 'phase', 'metric', 'spki'].includes(key)) {
      throw new Error('unknown flag: --' + key);
    }
    args[key] = value === undefined ? true : value;
  }
  for (const key of ['url', 'job', 'out']) {
    if (!args[key] || args[key] === true) throw new Error('--' + key + '= is required');
  }
  if (args.phase && !['running', 'ended', 'stop'].includes(args.phase)) {
    throw new Error('--phase must be running, ended or stop, not ' + args.phase);
  }
  if (args.expect_auth && !args.token) throw new Error('--expect_auth needs --token=');
  args.url = args.url.replace(/\/+$/, '');
  return args;
}

let failures = 0;
function ok(what) { console.log('ok: ' + what); }
function fail(what) { failures++; console.log('FAIL: ' + what); }

// Runs one named check; an exception fails it with its message.
async function check(what, fn) {
  try {
    const detail = await fn();
    ok(what + (detail ? ' (' + detail + ')' : ''));
    return true;
  } catch (e) {
    fail(what + ': ' + (e && e.message ? e.message.split('\n')[0] : String(e)));
    return false;
  }
}

// Records what goes wrong in a page. `step.allow` is set while the test
// provokes errors on purpose (a 401, an unknown job).
function watch(page, problems) {
  const step = { name: 'start', allow: false };
  const note = (kind, text) => {
    if (!step.allow) problems.push(step.name + ': ' + kind + ': ' + text);
  };
  page.on('console', (msg) => {
    if (msg.type() === 'error') note('console error', msg.text());
  });
  page.on('pageerror', (err) => note('page error', err.message));
  page.on('requestfailed', (req) => {
    const failure = req.failure();
    const why = failure ? failure.errorText : '';
    // A navigation cancels the page's polls in flight: not a failure.
    if (why === 'net::ERR_ABORTED') return;
    note('request failed', req.method() + ' ' + req.url() + ' ' + why);
  });
  page.on('response', (resp) => {
    if (resp.status() >= 400) note('HTTP ' + resp.status(), resp.request().method() + ' ' + resp.url());
  });
  return step;
}

// Waits for fn(arg) to be truthy in the page and returns its value; on
// time-out, says what did not appear and what the error banner shows. A
// login form that shows instead (outside the login checks) fails at once.
async function waitFor(page, what, fn, arg, timeoutMs, allowLogin) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    let value = false;
    let seen = { state: '', banner: '' };
    try {
      value = await page.evaluate(fn, arg);
      seen = await page.evaluate(() => {
        const b = document.querySelector('#error-banner');
        return { state: document.body ? document.body.dataset.state : '', banner: b && !b.hidden ? b.textContent : '' };
      });
    } catch (e) {
      // A navigation in progress destroys the context: try again.
      if (!/context was destroyed|navigation/i.test(e.message)) throw e;
    }
    if (value) return value;
    if (seen.state === 'login' && !allowLogin) {
      throw new Error('the page asks for a token (#login-form) instead of showing ' + what);
    }
    if (Date.now() >= until) {
      throw new Error('timed out after ' + timeoutMs / 1000 + ' s waiting for ' + what +
        (seen.banner ? '; the page shows: ' + seen.banner : ''));
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function goto(page, url) {
  const resp = await page.goto(url, { waitUntil: 'domcontentloaded', timeout: PATIENCE_MS });
  if (!resp || resp.status() !== 200) throw new Error(url + ' answered ' + (resp ? resp.status() : 'nothing'));
}

async function screenshot(page, out, name) {
  const file = path.join(out, name);
  await page.screenshot({ path: file, fullPage: true, timeout: PATIENCE_MS });
  return file;
}

// GET of an /api/ path from here, not the page.
async function apiGet(args, apiPath, withToken) {
  const headers = {};
  if (withToken && args.token) headers.Authorization = 'Bearer ' + args.token;
  const resp = await fetch(args.url + apiPath, { headers, signal: AbortSignal.timeout(PATIENCE_MS) });
  const text = await resp.text();
  let body = null;
  try { body = JSON.parse(text); } catch (e) { /* not JSON */ }
  return { status: resp.status, body, text };
}

const pageReady = (name) => document.body.dataset.page === name && document.body.dataset.state === 'ready';

async function signIn(page, token, timeoutMs) {
  await waitFor(page, 'the login form (#login-form)', () => !!document.querySelector('#login-form'), null, timeoutMs, true);
  await page.fill('#login-token', token);
  await page.click('#login-form button[type=submit]');
}

async function tokenNotShown(page, token) {
  const seen = await page.evaluate((t) => {
    const where = [];
    if (document.documentElement.outerHTML.includes(t)) where.push('the DOM');
    if (document.body.innerText.includes(t)) where.push('the text');
    if (location.href.includes(t)) where.push('the URL');
    for (const input of document.querySelectorAll('input')) if (input.value.includes(t)) where.push('an input');
    return where;
  }, token);
  if (seen.length) throw new Error('the token shows in ' + seen.join(', '));
  if (page.url().includes(token)) throw new Error('the token is in the URL');
}

// --------------------------------------------------------------- checks

async function authChecks(args, browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  const step = watch(page, problems);
  const jobUrl = args.url + '/jobs/' + encodeURIComponent(args.job);
  step.name = 'login';
  step.allow = true; // 401s on purpose

  await check('without a token the job page shows the login form and no job data', async () => {
    await goto(page, jobUrl);
    await waitFor(page, 'the login form (#login-form)', () => document.body.dataset.state === 'login' && !!document.querySelector('#login-form'), null, PATIENCE_MS, true);
    const leaked = await page.evaluate(() => !!document.querySelector('#job-state, #job-body, .plot, #checkpoints'));
    if (leaked) throw new Error('job data shows beside the login form');
  });
  await check('an API call without the token answers 401', async () => {
    const r = await apiGet(args, '/api/jobs/' + encodeURIComponent(args.job), false);
    if (r.status !== 401) throw new Error('answered ' + r.status);
    const c = await apiGet(args, '/api/console', false);
    if (c.status !== 200 || !c.body || c.body.auth_required !== true) {
      throw new Error('/api/console answered ' + c.status + ' ' + c.text.slice(0, 200));
    }
  });
  await check('a wrong token is refused in the form', async () => {
    await signIn(page, args.token + '-wrong', PATIENCE_MS);
    await waitFor(page, 'the refusal (#login-error)', () => {
      const e = document.querySelector('#login-error');
      return !!e && !e.hidden && /refused/i.test(e.textContent);
    }, null, PATIENCE_MS, true);
    await tokenNotShown(page, args.token + '-wrong');
  });
  await screenshot(page, args.out, 'login.png');
  await check('the right token typed into the form shows the job page', async () => {
    await signIn(page, args.token, PATIENCE_MS);
    await waitFor(page, 'the job page after sign-in (#job-state)', () => document.body.dataset.page === 'job' &&
      document.body.dataset.state === 'ready' && document.querySelector('#job-state').textContent.length > 1, null, PATIENCE_MS, true);
    await tokenNotShown(page, args.token);
  });
  await screenshot(page, args.out, 'login-ok.png');
  await check('sign out forgets the token', async () => {
    await page.click('#sign-out');
    await waitFor(page, 'the login form after sign out', () => document.body.dataset.state === 'login', null, PATIENCE_MS, true);
    await page.reload({ waitUntil: 'domcontentloaded' });
    await waitFor(page, 'the login form after a reload', () => document.body.dataset.state === 'login', null, PATIENCE_MS, true);
  });
  await context.close();
  return problems;
}

async function openConsole(args, browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  const step = watch(page, problems);
  if (args.token) {
    step.name = 'sign in';
    await goto(page, args.url + '/');
    await signIn(page, args.token, PATIENCE_MS);
    await waitFor(page, 'the jobs page after sign-in', pageReady, 'jobs', PATIENCE_MS, true);
  }
  return { context, page, problems, step };
}

// What looks broken on the job page: a table wider than its card, an axis
// with a tick label twice or a fractional step, a status logged twice in a
// row.
async function jobPageLooksRight(page) {
  const bad = await page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll('#job-body section.panel, #job-body .scroll')) {
      if (el.offsetParent && el.scrollWidth > el.clientWidth + 1) {
        const t = el.querySelector('table');
        out.push((t && t.id ? '#' + t.id : el.className) + ' is ' + el.scrollWidth + ' px wide in ' + el.clientWidth + ' px');
      }
    }
    const value = (label) => {
      const m = /^(-?[\d,.]+)([kM]?)$/.exec(label.trim());
      return m ? Number(m[1].replace(/,/g, '')) * (m[2] === 'k' ? 1e3 : m[2] === 'M' ? 1e6 : 1) : NaN;
    };
    for (const plot of document.querySelectorAll('.plot[data-series]')) {
      for (const cls of ['xtick', 'ytick']) {
        const labels = [...plot.querySelectorAll('svg text.' + cls)].map((e) => e.textContent);
        if (new Set(labels).size !== labels.length) out.push(plot.dataset.series + ' repeats a tick label: ' + labels.join(' '));
        if (cls === 'xtick') {
          const steps = labels.filter((l) => !Number.isInteger(Math.round(value(l) * 1e6) / 1e6));
          if (steps.length) out.push(plot.dataset.series + ' has fractional steps: ' + labels.join(' '));
        }
      }
    }
    const rows = [...document.querySelectorAll('#event-log tbody tr[data-kind]')];
    for (let i = 1; i < rows.length; i++) {
      if (rows[i].dataset.kind === 'status' && rows[i - 1].dataset.kind === 'status' &&
          rows[i].cells[2].textContent === rows[i - 1].cells[2].textContent) {
        out.push('the event log shows twice: ' + rows[i].cells[2].textContent);
        break;
      }
    }
    return out;
  });
  if (bad.length) throw new Error(bad.join('; '));
}

async function lossPoints(page) {
  return page.evaluate(() => {
    const el = document.querySelector('.plot[data-series="loss"]');
    return el ? Number(el.dataset.points) : -1;
  });
}

async function runningChecks(args, browser) {
  const { context, page, problems, step } = await openConsole(args, browser);
  const jobPath = '/jobs/' + encodeURIComponent(args.job);

  step.name = 'job page';
  await check('the job page plots the training loss as the job runs', async () => {
    await goto(page, args.url + jobPath);
    await waitFor(page, 'the loss plot with 2 points (.plot[data-series="loss"][data-points>=2])',
      () => { const el = document.querySelector('.plot[data-series="loss"]'); return !!el && Number(el.dataset.points) >= 2; }, null, 90000);
    const before = await lossPoints(page);
    await waitFor(page, 'the loss plot to gain points past ' + before,
      (n) => { const el = document.querySelector('.plot[data-series="loss"]'); return !!el && Number(el.dataset.points) > n; }, before, PATIENCE_MS);
    const after = await lossPoints(page);
    return before + ' → ' + after + ' points';
  });
  await check('the job page shows the job state and step', async () => {
    const shown = await page.evaluate(() => ({
      state: (document.querySelector('#job-state') || {}).textContent || '',
      step: (document.querySelector('#job-step') || { dataset: {} }).dataset.step || '',
      log: document.querySelectorAll('#event-log tbody tr[data-kind]').length,
    }));
    if (!shown.state) throw new Error('no #job-state');
    if (!/^\d+$/.test(shown.step)) throw new Error('#job-step has no step: ' + JSON.stringify(shown.step));
    if (!shown.log) throw new Error('the event log (#event-log) is empty');
    return shown.state + ' at step ' + shown.step;
  });
  await check('the running job\'s page fits its cards and its axes read well', () => jobPageLooksRight(page));
  await screenshot(page, args.out, 'job-running.png');

  step.name = 'jobs page';
  await check('the jobs page lists the job', async () => {
    await goto(page, args.url + '/');
    await waitFor(page, 'the job\'s row (tr[data-job="' + args.job + '"])',
      (id) => [...document.querySelectorAll('#queue tr[data-job], #history tr[data-job]')].some((tr) => tr.dataset.job === id), args.job, PATIENCE_MS);
    const href = await page.evaluate((id) => {
      const tr = [...document.querySelectorAll('tr[data-job]')].find((r) => r.dataset.job === id);
      const a = tr && tr.querySelector('a.job-link');
      return a ? a.getAttribute('href') : '';
    }, args.job);
    if (href !== '/jobs/' + encodeURIComponent(args.job)) throw new Error('the row links to ' + JSON.stringify(href));
  });
  await screenshot(page, args.out, 'jobs.png');

  step.name = 'cluster page';
  await check('the cluster page shows a worker and its step-time phases', async () => {
    await goto(page, args.url + '/cluster');
    await waitFor(page, 'a worker row (#members tr[data-task="worker/…"])',
      () => !!document.querySelector('#members tr[data-task^="worker/"]'), null, PATIENCE_MS);
    const label = await waitFor(page, 'a phase bar with a label (.phase-bar[data-label] with %)',
      () => { const b = [...document.querySelectorAll('.phase-bar')].find((e) => /%/.test(e.dataset.label || '')); return b ? b.dataset.label : false; }, null, PATIENCE_MS);
    const heartbeat = await page.evaluate(() => {
      const td = document.querySelector('#members tr[data-task^="worker/"] td.heartbeat');
      return td ? td.textContent : '';
    });
    if (!/^\d+(\.\d)? s$|^\d+ [mhd] /.test(heartbeat)) throw new Error('the worker\'s heartbeat age reads ' + JSON.stringify(heartbeat));
    return label;
  });
  await screenshot(page, args.out, 'cluster.png');

  step.name = 'unknown job';
  step.allow = true; // its 404 on purpose
  await check('an unknown job\'s page shows the server\'s error', async () => {
    const id = 'no-such-job-' + Date.now();
    await goto(page, args.url + '/jobs/' + id);
    const text = await waitFor(page, 'the error (#job-error)',
      () => { const e = document.querySelector('#job-error'); return e && e.textContent ? e.textContent : false; }, null, PATIENCE_MS);
    const r = await apiGet(args, '/api/jobs/' + id, true);
    if (r.status !== 404) throw new Error('GET /api/jobs/' + id + ' answered ' + r.status);
    if (r.body && r.body.error && !text.includes(r.body.error)) throw new Error('the page shows ' + JSON.stringify(text) + ', the server said ' + JSON.stringify(r.body.error));
    return text;
  });
  await context.close();
  return problems;
}

async function endedChecks(args, browser) {
  const { context, page, problems, step } = await openConsole(args, browser);
  step.name = 'ended job page';
  await check('the job page shows the final state', async () => {
    await goto(page, args.url + '/jobs/' + encodeURIComponent(args.job));
    const state = await waitFor(page, 'the final state SUCCEEDED (#job-state)',
      () => {
        const e = document.querySelector('#job-state');
        return !!e && ['SUCCEEDED', 'FAILED', 'STOPPED'].includes(e.textContent) ? e.textContent : false;
      }, null, 120000);
    if (state !== 'SUCCEEDED') {
      const reason = await page.evaluate(() => document.querySelector('#job-reason').textContent);
      throw new Error('the job ended ' + state + ': ' + reason);
    }
    await waitFor(page, 'polling to end (body[data-polling="done"])', () => document.body.dataset.polling === 'done', null, PATIENCE_MS);
  });
  await check('the job page shows the eval metrics', async () => {
    const metric = args.metric;
    const names = await waitFor(page, metric ? 'the eval metric ' + metric + ' (#eval-metrics [data-metric])' : 'an eval metric (#eval-metrics [data-metric])',
      (m) => {
        const names = [...document.querySelectorAll('#eval-metrics [data-metric]')].map((e) => e.dataset.metric);
        return (m ? names.includes(m) : names.length > 0) ? names : false;
      }, metric, PATIENCE_MS);
    const plotted = await page.evaluate(() => [...document.querySelectorAll('.plot[data-series^="eval:"]')]
      .filter((e) => Number(e.dataset.points) > 0).map((e) => e.dataset.series));
    if (!plotted.length) throw new Error('no eval metric plotted (.plot[data-series^="eval:"])');
    return names.join(', ');
  });
  await check('the checkpoints table has rows', async () => {
    const rows = await waitFor(page, 'checkpoint rows (#checkpoints tr[data-step])',
      () => { const n = document.querySelectorAll('#checkpoints tbody tr[data-kept="1"]').length; return n > 0 ? n : false; }, null, PATIENCE_MS);
    return rows + ' kept';
  });
  await check('the shown state and step equal GET /api/jobs/' + args.job, async () => {
    const r = await apiGet(args, '/api/jobs/' + encodeURIComponent(args.job), true);
    if (r.status !== 200 || !r.body) throw new Error('GET answered ' + r.status + ' ' + r.text.slice(0, 200));
    const shown = await page.evaluate(() => ({
      state: document.querySelector('#job-state').textContent,
      step: document.querySelector('#job-step').dataset.step,
      stepText: document.querySelector('#job-step').textContent,
    }));
    const state = String(r.body.state).replace(/^JOB_STATE_/, '');
    if (shown.state !== state) throw new Error('the page shows state ' + shown.state + ', the API ' + state);
    if (shown.step !== String(r.body.global_step)) throw new Error('the page shows step ' + shown.step + ', the API ' + r.body.global_step);
    if (shown.stepText.replace(/,/g, '').split(' ')[0] !== String(r.body.global_step)) {
      throw new Error('the page reads step ' + JSON.stringify(shown.stepText) + ', the API ' + r.body.global_step);
    }
    return state + ' at step ' + shown.step;
  });
  await check('the ended job\'s page fits its cards and its axes read well', () => jobPageLooksRight(page));
  await screenshot(page, args.out, 'job-ended.png');
  await context.close();
  return problems;
}

// The Stop button of a running job, on a coordinator that lets the console
// stop jobs: it asks first, Cancel changes nothing, and once confirmed the
// job ends STOPPED, as the API says too.
async function stopChecks(args, browser) {
  const { context, page, problems, step } = await openConsole(args, browser);
  step.name = 'stop';
  const jobApi = '/api/jobs/' + encodeURIComponent(args.job);
  await check('the Stop button asks first, and Cancel changes nothing', async () => {
    await goto(page, args.url + '/jobs/' + encodeURIComponent(args.job));
    await waitFor(page, 'the Stop button (#stop-button)', () => {
      const b = document.querySelector('#stop-button');
      return !!b && !b.hidden && !b.disabled;
    }, null, PATIENCE_MS);
    await page.click('#stop-button');
    await waitFor(page, 'the confirmation (#stop-dialog)', () => {
      const d = document.querySelector('#stop-dialog');
      return !!d && d.open;
    }, null, PATIENCE_MS);
    await screenshot(page, args.out, 'stop-confirm.png');
    await page.click('#stop-cancel');
    const r = await apiGet(args, jobApi, true);
    if (r.status !== 200) throw new Error('GET ' + jobApi + ' answered ' + r.status);
    if (r.body.state !== 'JOB_STATE_RUNNING' || r.body.stop_reason !== 'STOP_REASON_UNSPECIFIED') {
      throw new Error('after Cancel the job is ' + r.body.state + ' (' + r.body.stop_reason + ')');
    }
  });
  await check('once confirmed, the job ends STOPPED', async () => {
    await page.click('#stop-button');
    await waitFor(page, 'the confirmation (#stop-dialog)', () => {
      const d = document.querySelector('#stop-dialog');
      return !!d && d.open;
    }, null, PATIENCE_MS);
    await page.click('#stop-confirm');
    await waitFor(page, 'the state STOPPED (#job-state)', () => {
      const e = document.querySelector('#job-state');
      return !!e && e.textContent === 'STOPPED';
    }, null, 120000);
    const r = await apiGet(args, jobApi, true);
    if (r.body.state !== 'JOB_STATE_STOPPED' || r.body.stop_reason !== 'STOP_REASON_USER') {
      throw new Error('the API says ' + r.body.state + ' (' + r.body.stop_reason + ')');
    }
    return 'STOPPED at step ' + r.body.global_step;
  });
  await screenshot(page, args.out, 'job-stopped.png');
  await context.close();
  return problems;
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.log('FAIL: ' + e.message);
    process.exit(2);
  }
  const deadline = setTimeout(() => {
    console.log('FAIL: the browser checks did not finish in ' + DEADLINE_MS / 1000 + ' s');
    process.exit(3);
  }, DEADLINE_MS);
  fs.mkdirSync(args.out, { recursive: true });

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 60000,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'
    ].concat(args.spki ? ['--ignore-certificate-errors-spki-list=' + args.spki] : []),
  });
  const problems = [];
  try {
    if (args.expect_auth) problems.push(...await authChecks(args, browser));
    if (args.phase === 'running') problems.push(...await runningChecks(args, browser));
    if (args.phase === 'ended') problems.push(...await endedChecks(args, browser));
    if (args.phase === 'stop') problems.push(...await stopChecks(args, browser));
  } catch (e) {
    fail('the browser checks stopped: ' + (e && e.message ? e.message.split('\n')[0] : String(e)));
  } finally {
    await browser.close().catch(() => {});
  }
  if (problems.length) {
    for (const p of problems) fail(p);
  } else {
    ok('no console error, page error or failed request');
  }
  clearTimeout(deadline);
  console.log(failures ? failures + ' check(s) failed' : 'all browser checks passed');
  process.exit(failures ? 1 : 0);
}

main().catch((e) => {
  console.log('FAIL: ' + (e && e.stack ? e.stack : String(e)));
  process.exit(1);
});
