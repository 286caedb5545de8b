// Browser tests of issue 41 on real H200 captures (tests/data/gpu_pairs): a JAX step run op by op is
// critical and first, by the cost of its fix; the before/after of a fixed input pipeline calls the input
// wait fixed and nothing new. (The overview's job rows are in panel.test.mjs, on demo_logs.)
import assert from 'node:assert/strict';
import {cpSync} from 'node:fs';
import {join} from 'node:path';
import {test} from 'node:test';
import {ROOT, SHOTS, getJson, hashFor, openPanel as open, serveLogdir} from './harness.mjs';

const PAIRS = join(ROOT, 'tests', 'data', 'gpu_pairs');

let base;
let browser;

serveLogdir(
  'worst',
  (logdir) => {
    for (const run of ['jax_eager', 'loader_w0', 'loader_w4'])
      cpSync(join(PAIRS, run), join(logdir, run), {recursive: true});
  },
  (s) => ({base, browser} = s),
);

/** The run and its only host whose run name starts with `prefix`. */
async function runOf(prefix) {
  const {runs} = await getJson(base, 'runs');
  const r = runs.find((x) => x.run.startsWith(prefix));
  return {run: r.run, host: r.hosts[0].host};
}

test('a JAX step dispatched op by op: host work is critical and first, its fix saving most of the step', async () => {
  const {run, host} = await runOf('jax_eager');
  const {context, page, frame, errors} = await open(browser, `${base}/${hashFor({run, host})}`);
  await frame.waitForSelector('#findings .finding', {timeout: 120000});
  const first = await frame.$eval('#findings .finding', (n) => ({
    check: n.dataset.check,
    status: n.dataset.status,
    text: n.textContent,
  }));
  assert.equal(first.check, 'steps.host-work');
  assert.equal(first.status, 'critical');
  assert.match(first.text, /jax\.jit/);
  // the saving is the what-if of jitting the step: most of it
  const whatif = await frame.$eval('#findings .finding .whatif', (n) => n.textContent);
  assert.match(whatif, /^If fixed: step [\d.]+ → [\d.]+ ms; the host sets it now/);
  const [, was, now] = /step ([\d.]+) → ([\d.]+) ms/.exec(whatif).map(Number);
  assert.ok(now < 0.1 * was, whatif);
  await page.screenshot({path: join(SHOTS, 'jax-op-by-op.png')});
  assert.deepEqual(errors, []);
  await context.close();
});

test('before/after of a fixed input pipeline (DataLoader 0 → 4 workers): the wait fixed, nothing new', async () => {
  const before = await runOf('loader_w0');
  const after = await runOf('loader_w4');
  const url = `${base}/${hashFor({run: after.run, host: after.host, compare: before.run, compare_host: before.host})}`;
  const {context, frame, errors} = await open(browser, url);
  await frame.waitForSelector('#comparison', {timeout: 120000});
  const verdicts = await frame.$$eval('table.compare-checks tr[data-check]', (n) =>
    n.map((r) => [r.dataset.check, r.dataset.verdict]),
  );
  assert.ok(
    verdicts.some(([c, v]) => c === 'input.bound' && v === 'fixed'),
    JSON.stringify(verdicts),
  );
  assert.deepEqual(
    verdicts.filter(([, v]) => v === 'new'),
    [],
  );
  assert.deepEqual(errors, []);
  await context.close();
});

test('the overview says its opening order in words: no column claims it with an arrow until clicked', async () => {
  const {context, frame, errors} = await open(browser, `${base}/#gpu_advisor`);
  await frame.waitForFunction(() => document.querySelector('#overview')?.dataset.pending === '0', null, {
    timeout: 120000,
  });
  const headers = () =>
    frame.$$eval('#overview-table th', (n) => n.map((h) => [h.textContent, h.getAttribute('aria-sort')]));
  // rows worst first, by their saving: before issue 48 the Status column read "Status ▲" meanwhile
  const opening = await headers();
  assert.ok(
    opening.every(([text, sort]) => !/[▲▼]/.test(text) && sort === 'none'),
    JSON.stringify(opening),
  );
  assert.match(await frame.$eval('#overview-order', (n) => n.textContent), /^Worst first: the largest saving first/);
  const savings = await frame.$$eval('#overview-table tr.run-row td:nth-child(7)', (n) =>
    n.map((x) => (x.textContent === '—' ? 0 : parseFloat(x.textContent))),
  );
  assert.deepEqual(
    savings,
    [...savings].sort((a, b) => b - a),
  );
  // a click on Status sorts by it, the most severe first, and says so
  await frame.click('#overview-table button.sort[data-key="status"]');
  const byStatus = await headers();
  assert.deepEqual(byStatus[0], ['Status ▲', 'ascending']);
  assert.equal(await frame.$('#overview-order'), null);
  const statuses = await frame.$$eval('#overview-table tr.run-row', (n) => n.map((r) => r.dataset.status));
  const rank = {critical: 0, error: 1, warning: 2, info: 3, pass: 4};
  assert.deepEqual(
    statuses,
    [...statuses].sort((a, b) => rank[a] - rank[b]),
  );
  assert.deepEqual(errors, []);
  await context.close();
});
