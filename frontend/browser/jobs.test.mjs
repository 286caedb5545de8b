// Browser tests of the job view (issue 24): a real TensorBoard over demo_logs/20_ddp_straggler_8_ranks,
// an 8-rank job profiled twice and a larger synthetic job written by scripts/write_ddp_job.py (64 ranks;
// jobs1024.test.mjs paints 1,024 on a TensorBoard without torch-tb-profiler).
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {cpSync} from 'node:fs';
import {join} from 'node:path';
import {test} from 'node:test';
import {PYTHON, ROOT, SHOTS, hashFor, openPanel as open, serveLogdir, waitFor} from './harness.mjs';

const DEMO = '20_ddp_straggler_8_ranks';
const STRAGGLER = 'node1_1005.1700000000000';
const TWO_CYCLES = 'ddp_two_cycles';
const MANY = 'ddp_many_ranks';
const MANY_RANKS = Number(process.env.JOBVIEW_RANKS ?? 64);

let base;
let browser;

serveLogdir(
  'jobs',
  (logdir) => {
    cpSync(join(ROOT, 'demo_logs', DEMO), join(logdir, DEMO), {recursive: true});
    const write = (run, ...args) =>
      execFileSync(PYTHON, [join(ROOT, 'scripts', 'write_ddp_job.py'), logdir, run, ...args]);
    write(TWO_CYCLES, '--ranks', '8', '--cycles', '2', '--slow-rank', '5');
    write(MANY, '--ranks', String(MANY_RANKS), '--slow-rank', String(Math.floor((2 * MANY_RANKS) / 3)), '--small');
  },
  (s) => ({base, browser} = s),
);

const openPanel = (url) => open(browser, url);
const jobView = (frame, ms = 300000) => frame.waitForSelector('#all-hosts[data-render-ms]', {timeout: ms});

/** The centre of rank index `i`'s cell in band `b` of the heat map, in the canvas's own pixels. */
async function cell(frame, i, b) {
  const l = JSON.parse(await frame.$eval('#rank-strip', (n) => n.dataset.layout));
  return {
    x: l.gutter + (i % l.cols) * l.cellW + l.cellW / 2,
    y: l.bandTop[b] + Math.floor(i / l.cols) * l.cellH + l.cellH / 2,
  };
}

test('the demo job: rank 5 marked in the table and the heat map, sortable, a click on its cell opens it', async () => {
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run: DEMO, host: '*'})}`);
  await jobView(frame);
  assert.match(await frame.$eval('#stragglers', (n) => n.textContent), /: rank 5 \(node1_1005\)\.$/);
  assert.equal(await frame.$eval('#rank-strip', (n) => n.dataset.ranks), '8');
  const rows = await frame.$$eval('#rank-table tr.host-row', (n) =>
    n.map((r) => ({
      rank: r.dataset.rank,
      straggler: r.classList.contains('straggler'),
      odd: [...r.querySelectorAll('td.outlier')].map((td) => td.textContent),
    })),
  );
  assert.deepEqual(
    rows.map((r) => r.rank),
    ['0', '1', '2', '3', '4', '5', '6', '7'],
  );
  // rank 5 computes 29.40 ms a step against 19.60 ms, and waits 2 ms in collectives against 17 ms
  assert.deepEqual(
    rows.filter((r) => r.straggler || r.odd.length),
    [{rank: '5', straggler: true, odd: ['29.40 ms ▲', '2.00 ms (1.00 ms) ▼']}],
  );
  // sorted by compute, most first: rank 5 leads; again, least first: it is last
  await frame.click('#rank-table button.sort[data-key="compute_ms"]');
  assert.equal(await frame.$eval('#rank-table tr.host-row', (n) => n.dataset.rank), '5');
  assert.equal(await frame.$eval('#rank-table th[aria-sort="descending"] button', (n) => n.dataset.key), 'compute_ms');
  await frame.click('#rank-table button.sort[data-key="compute_ms"]');
  const order = await frame.$$eval('#rank-table tr.host-row', (n) => n.map((r) => r.dataset.rank));
  assert.equal(order[order.length - 1], '5');
  // hover names the rank; the screenshot shows the view with the tooltip
  const at = await cell(frame, 5, 0);
  await frame.hover('#rank-strip', {position: at});
  await frame.waitForSelector('#rank-tip:not([hidden])');
  assert.match(
    await frame.$eval('#rank-tip', (n) => n.textContent),
    /^rank 5 \(node1_1005\) · straggler.*compute 29\.40 ms/,
  );
  await page.screenshot({path: join(SHOTS, 'job-view.png')});
  // dark mode follows TensorBoard: the heat map is drawn again on the dark scale
  await page.evaluate(() => document.body.classList.add('dark-mode'));
  await frame.waitForFunction(() => document.body.classList.contains('dark'));
  await page.screenshot({path: join(SHOTS, 'job-view-dark.png')});
  await page.evaluate(() => document.body.classList.remove('dark-mode'));
  await frame.click('#rank-strip', {position: await cell(frame, 5, 1)}); // its collective-wait cell
  await frame.waitForSelector('#findings', {timeout: 30000});
  assert.equal(await frame.$eval('#host-select', (n) => n.value), STRAGGLER);
  assert.match(page.url(), /p\.gpu_advisor\.host=node1_1005\.1700000000000/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('keyboard: the arrow keys move along the heat map, Enter opens the rank; Enter on a row opens it', async () => {
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run: DEMO, host: '*'})}`);
  await jobView(frame);
  await frame.focus('#rank-strip');
  // the first press lands on rank 0; Down goes a row on, past the last rank it stays on the last
  for (const key of ['ArrowRight', 'ArrowDown', 'ArrowLeft', 'ArrowLeft']) await frame.press('#rank-strip', key);
  assert.match(await frame.$eval('#rank-tip', (n) => n.textContent), /^rank 5 \(/);
  for (const key of ['ArrowUp', 'ArrowRight', 'ArrowRight', 'ArrowRight', 'ArrowRight', 'ArrowRight'])
    await frame.press('#rank-strip', key);
  assert.match(await frame.$eval('#rank-tip', (n) => n.textContent), /^rank 5 \(/);
  await frame.press('#rank-strip', 'Enter');
  await frame.waitForSelector('#findings', {timeout: 30000});
  assert.equal(await frame.$eval('#host-select', (n) => n.value), STRAGGLER);
  await frame.selectOption('#host-select', '*');
  await jobView(frame);
  await frame.focus('#rank-table tr.host-row[data-rank="2"]');
  await page.keyboard.press('Enter');
  await frame.waitForSelector('#findings', {timeout: 30000});
  assert.equal(await frame.$eval('#host-select', (n) => n.value), 'node0_1002.1700000000000');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the cycle picker switches cycle; the copied link restores job, rank and cycle', async () => {
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run: TWO_CYCLES, host: '*'})}`);
  await jobView(frame);
  // the latest complete cycle first: every rank alike there
  assert.equal(await frame.$eval('#cycle-select', (n) => n.value), '1');
  assert.deepEqual(await frame.$$eval('#cycle-select option', (n) => n.map((o) => o.textContent)), [
    'cycle 1 of 2 · 8 ranks',
    'cycle 2 of 2 · 8 ranks',
  ]);
  assert.match(
    await frame.$eval('#stragglers', (n) => n.textContent),
    /2 profiling cycles \(cycle 2 compared\)\. No straggler/,
  );
  await frame.selectOption('#cycle-select', '0');
  await frame.waitForFunction(() => document.querySelector('#cycle-select')?.value === '0');
  await jobView(frame);
  assert.match(
    await frame.$eval('#stragglers', (n) => n.textContent),
    /\(cycle 1 compared\)\. Straggler .*: rank 5 \(node000_10005\)\.$/,
  );
  const hosts = await frame.$$eval('#rank-table tr.host-row', (n) => n.map((r) => r.dataset.host));
  assert.equal(hosts.length, 8);
  assert.ok(
    hosts.every((h) => h.endsWith('.1700000000000')),
    hosts.join(),
  );
  assert.match(page.url(), /p\.gpu_advisor\.cycle=0/);
  await frame.click('#copy-link');
  const jobLink = await frame.$eval('#share-link', (n) => n.value);
  // beside it, the MCP call that gives a teammate's agent the same job view
  assert.match(await frame.$eval('#share-mcp', (n) => n.value), /^job \{"run": ".+", "cycle": 0\}$/);
  assert.match(
    jobLink,
    /p\.gpu_advisor\.host=\*.*p\.gpu_advisor\.cycle=0|p\.gpu_advisor\.cycle=0.*p\.gpu_advisor\.host=\*/,
  );
  // a rank of that cycle opened: the link names the rank and the cycle
  await frame.click('#rank-table tr.host-row[data-rank="5"]');
  await frame.waitForSelector('#findings', {timeout: 30000});
  await frame.click('#copy-link');
  const rankLink = await frame.$eval('#share-link', (n) => n.value);
  assert.match(
    await frame.$eval('#share-mcp', (n) => n.value),
    /^analyze \{"run": ".+", "host": "node000_10005\.1700000000000"\}$/,
  );
  assert.match(rankLink, /p\.gpu_advisor\.host=node000_10005\.1700000000000/);
  assert.match(rankLink, /p\.gpu_advisor\.cycle=0/);
  await context.close();

  const again = await openPanel(jobLink);
  await jobView(again.frame);
  assert.equal(await again.frame.$eval('#cycle-select', (n) => n.value), '0');
  assert.equal(await again.frame.$eval('#rank-table tr.straggler', (n) => n.dataset.rank), '5');
  await again.context.close();

  const rank = await openPanel(rankLink);
  await rank.frame.waitForSelector('#findings', {timeout: 60000});
  assert.equal(await rank.frame.$eval('#host-select', (n) => n.value), 'node000_10005.1700000000000');
  await rank.frame.selectOption('#host-select', '*'); // back to the job, in the cycle of the link
  await jobView(rank.frame);
  assert.equal(await rank.frame.$eval('#cycle-select', (n) => n.value), '0');
  assert.deepEqual([...errors, ...again.errors, ...rank.errors], []);
  await rank.context.close();
});

test('a cycle the job does not have, in a pasted link, says so', async () => {
  const {context, frame} = await openPanel(`${base}/${hashFor({run: TWO_CYCLES, host: '*', cycle: '7'})}`);
  await frame.waitForSelector('.error[role="alert"]', {timeout: 60000});
  assert.match(
    await frame.$eval('.error[role="alert"]', (n) => n.textContent),
    /job ddp_two_cycles has 2 profiling cycles; no cycle 7/,
  );
  await context.close();
});

test(`${MANY_RANKS} synthetic ranks: the heat map and the table render in under 2 s from the answer`, async () => {
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run: MANY, host: '*'})}`);
  // the analyses are not timed: wait for them (the view appears when the answer does)
  await jobView(frame, 600000);
  const t = await frame.evaluate(() => {
    const view = document.querySelector('#all-hosts');
    const answer = performance
      .getEntriesByType('resource')
      .filter((e) => e.name.includes('/report?') && !e.name.includes('host='))
      .pop();
    return {
      parsedToPainted: Number(view.dataset.renderMs),
      // from the answer's last byte (the browser's own timing) to the picture painted: parsing included
      arrivedToPainted: Number(view.dataset.paintedAt) - answer.responseEnd,
      bytes: answer.encodedBodySize,
    };
  });
  console.log(
    `${MANY_RANKS} ranks: answer (${(t.bytes / 1e6).toFixed(1)} MB gzipped) to picture painted ${t.arrivedToPainted.toFixed(0)} ms, parsed answer to painted ${t.parsedToPainted.toFixed(0)} ms`,
  );
  assert.ok(t.arrivedToPainted < 2000, JSON.stringify(t));
  assert.equal(await frame.$eval('#rank-strip', (n) => n.dataset.ranks), String(MANY_RANKS));
  assert.equal(await frame.$$eval('#rank-table tr.host-row', (n) => n.length), MANY_RANKS);
  const slow = Math.floor((2 * MANY_RANKS) / 3);
  assert.equal(await frame.$eval('#rank-table tr.straggler', (n) => n.dataset.rank), String(slow));
  await frame.hover('#rank-strip', {position: await cell(frame, slow, 0)});
  await waitFor(async () => /straggler/.test(await frame.$eval('#rank-tip', (n) => n.textContent)), 5000, 'tooltip');
  await page.screenshot({path: join(SHOTS, `job-view-${MANY_RANKS}-ranks.png`)});
  assert.deepEqual(errors, []);
  await context.close();
});
