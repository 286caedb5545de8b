// Browser tests: a real TensorBoard over a copy of demo_logs/ (plus a hostile and a corrupt run),
// Debian's Chromium driven by playwright-core. Screenshots of each view go to artifacts/screenshots/.
import assert from 'node:assert/strict';
import {spawn, execFileSync} from 'node:child_process';
import {cpSync, mkdirSync, mkdtempSync, writeFileSync, rmSync} from 'node:fs';
import {createServer} from 'node:net';
import {tmpdir} from 'node:os';
import {dirname, join, resolve} from 'node:path';
import {after, before, test} from 'node:test';
import {fileURLToPath} from 'node:url';
import {chromium} from 'playwright-core';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const PYTHON = process.env.PYTHON ?? join(ROOT, '.venv', 'bin', 'python');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = join(ROOT, 'artifacts', 'screenshots');
const INPUT_RUN = '02_input_bound/2026_11_22_10_00_00';
const HOST = 'gpu-worker-0';
const CORRUPT_RUN = 'zz_corrupt/2026_01_01_00_00_00';

let tb;
let base;
let browser;
let logdir;

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const {port} = s.address();
      s.close(() => ok(port));
    });
    s.on('error', fail);
  });
}

async function waitFor(fn, ms = 60000, what = 'condition') {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch {
      // not yet
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

before(async () => {
  mkdirSync(SHOTS, {recursive: true});
  logdir = join(mkdtempSync(join(tmpdir(), 'gpu-advisor-browser-')), 'logs');
  cpSync(join(ROOT, 'demo_logs'), logdir, {recursive: true});
  execFileSync(PYTHON, [join(ROOT, 'tests', 'hostile_profile.py'), logdir]);
  const bad = join(logdir, 'zz_corrupt', 'plugins', 'profile', '2026_01_01_00_00_00');
  mkdirSync(bad, {recursive: true});
  writeFileSync(join(bad, `${HOST}.xplane.pb`), Buffer.from('this is not a profile'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  tb = spawn(
    PYTHON,
    [
      '-m',
      'tensorboard.main',
      '--logdir',
      logdir,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--load_fast',
      'false',
    ],
    {stdio: 'ignore'},
  );
  await waitFor(async () => (await fetch(`${base}/data/plugins_listing`)).ok, 120000, 'tensorboard');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
});

after(async () => {
  await browser?.close();
  tb?.kill();
  if (logdir) rmSync(dirname(logdir), {recursive: true, force: true});
});

async function openPanel(url) {
  const context = await browser.newContext({viewport: {width: 1280, height: 800}});
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('dialog', (d) => {
    errors.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  await page.goto(url);
  const frame = await waitFor(
    () => page.frames().find((f) => f.url().includes('plugin_entry.html?name=gpu_advisor')),
    60000,
    'panel frame',
  );
  return {context, page, frame, errors};
}

function hashFor(state) {
  const parts = ['gpu_advisor'];
  for (const [k, v] of Object.entries(state)) parts.push(`p.gpu_advisor.${k}=${encodeURIComponent(v)}`);
  return '#' + parts.join('&');
}

async function report(run, host) {
  const r = await fetch(
    `${base}/data/plugin/gpu_advisor/report?run=${encodeURIComponent(run)}&host=${encodeURIComponent(host)}`,
  );
  assert.equal(r.status, 200);
  return r.json();
}

test('the tab appears and the input-bound run shows input.bound as critical with its share', async () => {
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run: INPUT_RUN})}`);
  await page.waitForSelector('text=GPU ADVISOR', {timeout: 30000});
  const card = await frame.waitForSelector('.finding[data-check="input.bound"]', {timeout: 30000});
  assert.equal(await card.getAttribute('data-status'), 'critical');
  const head = await card.$eval('.head', (n) => n.textContent);
  assert.match(head, /Input-bound: 61\.7% of each step waits for input/); // the problem, with its number
  assert.match(head, /14\.43 ms\/step \(61\.7%\)/);
  assert.equal(await frame.$eval('#run-select', (n) => n.value), INPUT_RUN);
  assert.equal(await frame.$eval('#kpi-busy .v', (n) => n.textContent), '39.3%');
  // the checklist shows every check, passes included
  assert.equal(await frame.$$eval('#checklist .check', (n) => n.length), 30);
  assert.ok(await frame.$('#checklist .check[data-check="capture.no-gpu"][data-status="pass"]'));
  await frame.waitForFunction(() => Number(document.querySelector('canvas.timeline')?.dataset.loaded) > 0);
  await page.screenshot({path: join(SHOTS, '01-overview-input-bound.png')});
  const checklist = await frame.$('#checklist');
  await checklist.scrollIntoViewIfNeeded();
  await page.screenshot({path: join(SHOTS, '02-checklist.png')});
  assert.deepEqual(errors, []);
  await context.close();
});

test('clicking a finding highlights its evidence window on the timeline; the trace-viewer link carries it', async () => {
  const rep = await report(INPUT_RUN, HOST);
  const ev = rep.checks.find((c) => c.id === 'input.bound').evidence[0];
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run: INPUT_RUN})}`);
  await frame.click('.finding[data-check="input.bound"] .head', {timeout: 30000});
  await frame.waitForFunction(() => document.querySelector('canvas.timeline')?.dataset.highlight === 'input.bound:0');
  const ds = await frame.$eval('canvas.timeline', (c) => ({...c.dataset}));
  assert.equal(Number(ds.highlightStart), ev.start_ms);
  assert.equal(Number(ds.highlightEnd), ev.end_ms);
  assert.ok(Number(ds.windowStart) <= ev.start_ms && Number(ds.windowEnd) >= ev.end_ms);
  assert.ok(Number(ds.windowEnd) - Number(ds.windowStart) < 2 * (ev.end_ms - ev.start_ms)); // zoomed in to it
  assert.ok(await frame.$('.finding.selected[data-check="input.bound"] .body:not([hidden])'));
  const href = await frame.$eval(
    '.finding[data-check="input.bound"] .evidence li[data-index="0"] .trace-viewer-link',
    (a) => a.getAttribute('href'),
  );
  const q = new URLSearchParams(href.split('?')[1]);
  assert.ok(href.startsWith('/data/plugin/profile/trace_viewer_index.html?'));
  assert.equal(Number(q.get('view_start')), ev.start_ms);
  assert.equal(Number(q.get('view_end')), ev.end_ms);
  assert.equal(
    q.get('trace_data_url'),
    `/data/plugin/profile/data?run=${encodeURIComponent(INPUT_RUN)}&tag=trace_viewer%40&host=${HOST}`,
  );
  // the top URL now carries run, host and finding
  assert.match(page.url(), /p\.gpu_advisor\.finding=input\.bound/);
  await frame.waitForFunction(() => Number(document.querySelector('canvas.timeline')?.dataset.loaded) > 1);
  await page.screenshot({path: join(SHOTS, '03-finding-on-timeline.png')});
  assert.deepEqual(errors, []);
  await context.close();
});

test('the copied link opened in a new page restores run, host and finding', async () => {
  const run = '16_two_hosts/2026_11_22_10_00_00';
  const {context, frame} = await openPanel(`${base}/#gpu_advisor`);
  await frame.waitForSelector('#findings', {timeout: 30000});
  await frame.selectOption('#run-select', run);
  await frame.waitForSelector('#findings');
  await frame.selectOption('#host-select', 'gpu-worker-1');
  await frame.waitForSelector('.finding[data-check="input.bound"]', {timeout: 30000});
  await frame.click('.finding[data-check="input.bound"] .head');
  await frame.click('#copy-link');
  const link = await frame.$eval('#share-link', (n) => n.value);
  assert.match(link, /^http:\/\/127\.0\.0\.1:\d+\/#gpu_advisor&/);
  await context.close();

  const again = await openPanel(link);
  await again.frame.waitForSelector('.finding.selected[data-check="input.bound"]', {timeout: 30000});
  assert.equal(await again.frame.$eval('#run-select', (n) => n.value), run);
  assert.equal(await again.frame.$eval('#host-select', (n) => n.value), 'gpu-worker-1');
  await again.frame.waitForFunction(
    () => document.querySelector('canvas.timeline')?.dataset.highlight === 'input.bound:0',
  );
  await again.page.screenshot({path: join(SHOTS, '04-restored-from-link.png')});
  assert.deepEqual(again.errors, []);
  await again.context.close();
});

test('names from a profile render as text and run no script', async () => {
  const run = 'zz_hostile_<b>run</b>/2026_11_22_12_00_00';
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run})}`);
  await frame.waitForSelector('.finding[data-check="tensorcore.unused"]', {timeout: 30000});
  await frame.click('.finding[data-check="tensorcore.unused"] .head');
  await frame.click('.finding[data-check="placement.host-ops"] .head');
  const text = await frame.evaluate(() => document.body.innerText);
  assert.ok(text.includes('<script>window.top.__xss=2</script>_sgemm_128x64_nn'), 'kernel name shown as text');
  assert.ok(text.includes('cpu/<svg/onload=window.top.__xss=3>'), 'host op name shown as text');
  assert.equal(await frame.$eval('#run-select', (n) => n.value), run);
  assert.equal(
    await frame.$$eval(
      'script, img, svg[onload], b',
      (n) => n.filter((x) => x.closest('#gpu-advisor') && x.tagName !== 'svg').length,
    ),
    0,
  );
  await page.waitForTimeout(500);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal(await frame.evaluate(() => window.top.__xss), undefined);
  await page.screenshot({path: join(SHOTS, '05-hostile-names-as-text.png')});
  assert.deepEqual(errors, []);
  await context.close();
});

test('a profile that cannot be read shows its error in place of the report', async () => {
  const {context, page, frame} = await openPanel(`${base}/${hashFor({run: CORRUPT_RUN})}`);
  const msg = await frame.waitForSelector('.error[role="alert"]', {timeout: 30000});
  assert.match(await msg.textContent(), /could not be read[\s\S]*gpu-worker-0\.xplane\.pb/);
  await page.screenshot({path: join(SHOTS, '06-unreadable-profile.png')});
  await context.close();
});

test('keyboard: findings open with Enter, the timeline zooms with + and pans with arrows; dark mode follows TensorBoard', async () => {
  const {context, page, frame} = await openPanel(
    `${base}/${hashFor({run: '05_launch_bound_small_kernels/2026_11_22_10_00_00'})}`,
  );
  const head = await frame.waitForSelector('.finding[data-check="kernels.launch-bound"] .head', {timeout: 30000});
  await head.focus();
  await page.keyboard.press('Enter');
  await frame.waitForSelector('.finding[data-check="kernels.launch-bound"] .head[aria-expanded="true"]');
  await frame.click('#timeline-reset');
  const before = await frame.$eval(
    'canvas.timeline',
    (c) => Number(c.dataset.windowEnd) - Number(c.dataset.windowStart),
  );
  await frame.focus('canvas.timeline');
  await page.keyboard.press('+');
  const zoomed = await frame.$eval(
    'canvas.timeline',
    (c) => Number(c.dataset.windowEnd) - Number(c.dataset.windowStart),
  );
  assert.ok(Math.abs(zoomed - before / 2) < 1e-6, `zoomed ${zoomed} from ${before}`);
  const start = await frame.$eval('canvas.timeline', (c) => Number(c.dataset.windowStart));
  await page.keyboard.press('ArrowRight');
  assert.ok((await frame.$eval('canvas.timeline', (c) => Number(c.dataset.windowStart))) > start);
  await page.evaluate(() => document.body.classList.add('dark-mode'));
  await frame.waitForFunction(() => document.body.classList.contains('dark'));
  await page.screenshot({path: join(SHOTS, '07-dark-mode-launch-bound.png')});
  await context.close();
});
