// Browser tests: a real TensorBoard over a copy of demo_logs/ (plus a hostile and a corrupt run),
// Debian's Chromium driven by playwright-core. Screenshots of each view go to artifacts/screenshots/.
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {cpSync, mkdirSync, mkdtempSync, writeFileSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {dirname, join} from 'node:path';
import {after, before, test} from 'node:test';
import {PYTHON, ROOT, SHOTS, getJson, hashFor, launchBrowser, openPanel as open, startTensorBoard} from './harness.mjs';

const INPUT_RUN = '02_input_bound/2026_11_22_10_00_00';
const HOST = 'gpu-worker-0';
const CORRUPT_RUN = 'zz_corrupt/2026_01_01_00_00_00';

let tb;
let base;
let browser;
let logdir;

before(async () => {
  mkdirSync(SHOTS, {recursive: true});
  logdir = join(mkdtempSync(join(tmpdir(), 'gpu-advisor-browser-')), 'logs');
  cpSync(join(ROOT, 'demo_logs'), logdir, {recursive: true});
  execFileSync(PYTHON, [join(ROOT, 'tests', 'hostile_profile.py'), logdir]);
  const bad = join(logdir, 'zz_corrupt', 'plugins', 'profile', '2026_01_01_00_00_00');
  mkdirSync(bad, {recursive: true});
  writeFileSync(join(bad, `${HOST}.xplane.pb`), Buffer.from('this is not a profile'));
  ({proc: tb, base} = await startTensorBoard(logdir));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  tb?.kill();
  if (logdir) rmSync(dirname(logdir), {recursive: true, force: true});
});

const openPanel = (url) => open(browser, url);
const report = (run, host) => getJson(base, 'report', {run, host});

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

test('clicking a finding highlights its evidence window on the timeline; the trace-viewer link names it', async () => {
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
  assert.ok(href.startsWith('/data/plugin/profile/trace_viewer_index.html?is_streaming=false&'));
  assert.ok(Number(q.get('view_start')) <= ev.start_ms && Number(q.get('view_end')) >= ev.end_ms);
  assert.equal(
    q.get('trace_data_url'),
    `/data/plugin/gpu_advisor/export?run=${encodeURIComponent(INPUT_RUN)}&host=${HOST}&finding=input.bound&evidence=0`,
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
