// Browser tests: a real TensorBoard over a copy of demo_logs/ (plus a hostile and a corrupt run),
// Debian's Chromium driven by playwright-core. Screenshots of each view go to artifacts/screenshots/.
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {cpSync, mkdirSync, readdirSync, statSync, writeFileSync} from 'node:fs';
import {join} from 'node:path';
import {test} from 'node:test';
import {PYTHON, ROOT, SHOTS, getJson, hashFor, openPanel as open, serveLogdir} from './harness.mjs';

const INPUT_RUN = '02_input_bound/2026_11_22_10_00_00';
const HOST = 'gpu-worker-0';
const CORRUPT_RUN = 'zz_corrupt/2026_01_01_00_00_00';

let base;
let browser;
let logdir;

serveLogdir(
  'browser',
  (logdir) => {
    cpSync(join(ROOT, 'demo_logs'), logdir, {recursive: true});
    execFileSync(PYTHON, [join(ROOT, 'tests', 'support', 'hostile_profile.py'), logdir]);
    const bad = join(logdir, 'zz_corrupt', 'plugins', 'profile', '2026_01_01_00_00_00');
    mkdirSync(bad, {recursive: true});
    writeFileSync(join(bad, `${HOST}.xplane.pb`), Buffer.from('this is not a profile'));
  },
  (s) => ({base, browser, logdir} = s),
);

const openPanel = (url) => open(browser, url);
const report = (run, host) => getJson(base, 'report', {run, host});

// first in the file: no test before it has opened the overview, so no analysis has started yet
test('the overview shows its progress while it analyses every profile: how many of how many, bytes read', async () => {
  const {context, frame, errors} = await openPanel(`${base}/#gpu_advisor`);
  // every state of the progress while the analyses run: profiles done, the note, the bar
  await frame.waitForSelector('#overview', {timeout: 30000});
  await frame.evaluate(() => {
    const card = document.querySelector('#overview');
    const seen = (window.__progress = []);
    const record = () => {
      const bar = document.querySelector('#overview-progress');
      seen.push({
        progress: card.dataset.progress,
        note: document.querySelector('#overview-note').textContent,
        barShown: !bar.hidden,
        pct: Number(bar.getAttribute('aria-valuenow')),
      });
    };
    record();
    new MutationObserver(record).observe(card, {attributes: true, attributeFilter: ['data-progress']});
  });
  await frame.waitForFunction(() => document.querySelector('#overview')?.dataset.pending === '0', null, {
    timeout: 240000,
  });
  const seen = (await frame.evaluate(() => window.__progress)).filter((p) => p.progress);
  const running = seen.filter((p) => p.progress !== '41/41');
  // 41 profiles on a shared machine take seconds: the analysis is seen under way, counted up
  assert.ok(running.length > 0, JSON.stringify(seen));
  const done = seen.map((p) => Number(p.progress.split('/')[0]));
  assert.deepEqual(
    done,
    [...done].sort((a, b) => a - b),
  );
  // the bytes: the profile files' sizes on disk, summed here (fmtBytes' MiB with one decimal)
  const bytes = profileFiles(logdir).reduce((n, f) => n + statSync(f).size, 0);
  const mib = (bytes / 1024 / 1024).toFixed(1);
  for (const p of running) {
    assert.ok(p.barShown);
    assert.match(p.note, new RegExp(`^Analysing: \\d+ of 41 profiles done, [\\d.]+ (B|KiB|MiB) of ${mib} MiB read…$`));
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('the tab appears and the input-bound run shows input.bound as critical with its share', async () => {
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run: INPUT_RUN})}`);
  await page.waitForSelector('text=GPU ADVISOR', {timeout: 30000});
  const card = await frame.waitForSelector('.finding[data-check="input.bound"]', {timeout: 30000});
  assert.equal(await card.getAttribute('data-status'), 'critical');
  const head = await card.$eval('.head', (n) => n.textContent);
  assert.match(head, /Input-bound: 61\.7% of each step waits for input/); // the problem, with its number
  // the saving: its range where the report gives one (the input model's error on its held-out pairs,
  // the profiler's cost's range, the host's pace and the capture's step spread on this run), else the
  // point; the point estimate stays in the body
  // the saving is the step re-timed with the input wait gone, without the profiler (docs/whatif.md)
  assert.match(head, /saves 9\.4–17\.4 ms\/step/);
  assert.match(await card.$eval('.saving-basis', (n) => n.textContent), /14\.17 ms\/step \(60\.1%\)/);
  // and the step it predicts, and what sets it
  assert.equal(
    await card.$eval('.whatif', (n) => n.textContent),
    'If fixed: step 23.6 → 9.4 ms; waiting for input sets it now, the GPU after the fix (without the profiler; input simulated)',
  );
  assert.match(
    await frame.$eval('.step-model', (n) => n.textContent),
    /^Without the profiler: 23\.55 ms a step \(23\.57 ms captured, the profiler 0\.1% of it\); waiting for input sets the step\./,
  );
  assert.equal(await frame.$eval('#run-select', (n) => n.value), INPUT_RUN);
  assert.equal(await frame.$eval('#kpi-busy .v', (n) => n.textContent), '39.3%');
  // the headline says how each number is measured, and judges it
  assert.equal(await frame.$eval('#kpi-busy', (n) => n.dataset.judged), 'bad');
  assert.match(await frame.$eval('#kpi-busy', (n) => n.getAttribute('title')), /union of all its streams/);
  // the top finding is open; the others show their summary line
  assert.equal(await card.$eval('.head', (n) => n.getAttribute('aria-expanded')), 'true');
  const second = await frame.$('.finding:nth-of-type(2)');
  assert.equal(await second.$eval('.head', (n) => n.getAttribute('aria-expanded')), 'false');
  assert.ok((await second.$eval('.summary-line', (n) => n.textContent)).length > 20);
  // the recommendation renders `code` as code
  assert.ok(await card.$$eval('.rec code', (n) => n.some((c) => c.textContent === 'prefetch')));
  assert.ok(!(await card.$eval('.rec', (n) => n.textContent)).includes('`'));
  // the checklist hides passes and not-applicable checks when there are findings; unticked, every host check of
  // the catalogue (job checks are the job view's)
  assert.equal(await frame.$eval('#checklist-filter', (n) => n.checked), true);
  const shown = await frame.$$eval('#checklist .check', (n) => n.map((x) => x.dataset.status));
  assert.ok(shown.length >= 2 && shown.every((s) => ['critical', 'warning', 'info'].includes(s)), String(shown));
  await frame.click('#checklist-filter');
  const catalogue = (await getJson(base, 'checks', {})).checks;
  const hostChecks = catalogue.filter((c) => (c.scope ?? 'host') === 'host').length;
  assert.ok(hostChecks >= 37, String(hostChecks));
  assert.equal(await frame.$$eval('#checklist .check', (n) => n.length), hostChecks);
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
  await page.screenshot({path: join(SHOTS, 'finding.png')});
  assert.deepEqual(errors, []);
  await context.close();
});

test('the copied link opened in a new page restores run, host and finding', async () => {
  const run = '16_two_hosts/2026_11_22_10_00_00';
  const {context, frame} = await openPanel(`${base}/#gpu_advisor`);
  await frame.waitForSelector('#overview-table', {timeout: 30000});
  await frame.selectOption('#run-select', run);
  await frame.waitForSelector('#findings');
  await frame.selectOption('#host-select', 'gpu-worker-1');
  await frame.waitForSelector('.finding[data-check="input.bound"]', {timeout: 30000});
  await frame.click('.finding[data-check="input.bound"] .head');
  await frame.click('#copy-link');
  const link = await frame.$eval('#share-link', (n) => n.value);
  assert.match(link, /^http:\/\/127\.0\.0\.1:\d+\/#gpu_advisor&/);
  // and the call that gives an agent the same: the finding's evidence (tests/serve/test_mcp.py runs it)
  assert.equal(
    await frame.$eval('#share-mcp', (n) => n.value),
    `evidence {"run": "${run}", "host": "gpu-worker-1", "finding": "input.bound"}`,
  );
  await frame.click('#copy-mcp');
  assert.match(await frame.$eval('#share-note', (n) => n.textContent), /^(Agent call copied|Press Ctrl\+C to copy)$/);
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
  assert.ok(text.includes('ampere_sgemm_<script>window.top.__xss=2</script>_128x64_nn'), 'kernel name shown as text');
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

test('the overview opens first: every run and host with its status, worst first, sortable; a click opens the run', async () => {
  const {context, page, frame, errors} = await openPanel(`${base}/#gpu_advisor`);
  await frame.waitForSelector('#overview-table tr.run-row', {timeout: 30000});
  await frame.waitForFunction(() => document.querySelector('#overview')?.dataset.pending === '0', null, {
    timeout: 120000,
  });
  const rows = await frame.$$eval('#overview-table tr.run-row', (n) =>
    n.map((r) => ({run: r.dataset.run, host: r.dataset.host, status: r.dataset.status, text: r.textContent})),
  );
  // 20 XSpace demo runs (one with two hosts), 2 PyTorch runs, two 8-rank PyTorch jobs, the hostile run and
  // the corrupt one: 41 hosts, and a row of its own for each job (the two-host run and the two DDP jobs)
  const jobs = rows.filter((r) => r.host === '*');
  assert.deepEqual(jobs.map((r) => r.run).sort(), [
    '16_two_hosts/2026_11_22_10_00_00',
    '20_ddp_straggler_8_ranks',
    '21_ddp_exposed_allreduce_8_ranks',
  ]);
  assert.equal(rows.length, 41 + 3);
  // the progress: every profile done (the corrupt one as an error), the bar hidden once all are
  assert.equal(await frame.$eval('#overview', (n) => n.dataset.progress), '41/41');
  assert.equal(await frame.$eval('#overview-progress', (n) => n.hidden), true);
  // a job's own findings on its row, above its ranks, whose worst is only a capture note
  for (const [run, title] of [
    [
      '20_ddp_straggler_8_ranks',
      /all 8 ranks \(the job\)Straggler: rank 5 \(node1_1005\) spends 9\.8 ms more per step/,
    ],
    ['21_ddp_exposed_allreduce_8_ranks', /all 8 ranks \(the job\)Exposed communication: 37\.4% of the step/],
  ]) {
    const at = rows.findIndex((r) => r.run === run);
    assert.equal(rows[at].host, '*');
    assert.equal(rows[at].status, 'critical');
    assert.match(rows[at].text, title);
    const ranks = rows.slice(at + 1, at + 9);
    assert.ok(ranks.every((r) => r.run === run && r.host !== '*' && /record_shapes off/.test(r.text)));
  }
  // worst first: runs in the order of their largest saving (a capture note, without one, after them)
  const saving = (t) => (/([\d.]+) ms\/step$/.exec(t) ? parseFloat(/([\d.]+) ms\/step$/.exec(t)[1]) : 0);
  const best = [];
  for (const [i, r] of rows.entries()) {
    if (i === 0 || rows[i - 1].run !== r.run) best.push(0);
    best[best.length - 1] = Math.max(best[best.length - 1], saving(r.text));
  }
  assert.deepEqual(
    best,
    [...best].sort((a, b) => b - a),
  );
  assert.equal(rows[0].run, 'pytorch_resnet50_num_workers_0');
  assert.equal(rows[0].status, 'critical');
  assert.ok(rows.some((r) => r.run === CORRUPT_RUN && r.status === 'error'));
  // the run picker shows each run's worst status
  const option = await frame.$eval(`#run-select option[value="${INPUT_RUN}"]`, (o) => o.textContent);
  assert.equal(option, `${INPUT_RUN} · critical`);
  // a job's run: its job's status, not its ranks' capture notes
  const ddp = await frame.$eval('#run-select option[value="20_ddp_straggler_8_ranks"]', (o) => o.textContent);
  assert.equal(ddp, '20_ddp_straggler_8_ranks · critical');
  await page.screenshot({path: join(SHOTS, 'overview.png')});
  // sort by step time, longest first
  await frame.click('#overview-table button.sort[data-key="step_ms"]');
  const steps = await frame.$$eval('#overview-table tr.run-row td:nth-child(5)', (n) => n.map((x) => x.textContent));
  const ms = steps.filter((x) => x.endsWith(' ms')).map((x) => parseFloat(x));
  assert.deepEqual(
    ms,
    [...ms].sort((a, b) => b - a),
  );
  await frame.click(`#overview-table tr.run-row[data-run="${INPUT_RUN}"]`);
  await frame.waitForSelector('.finding[data-check="input.bound"]', {timeout: 30000});
  assert.match(page.url(), /p\.gpu_advisor\.run=02_input_bound/);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a job's own row in the overview opens the job: every rank side by side, the straggler named", async () => {
  const {context, frame, errors} = await openPanel(`${base}/#gpu_advisor`);
  await frame.waitForSelector('#overview-table tr.job-row[data-run="20_ddp_straggler_8_ranks"]', {timeout: 120000});
  await frame.click('#overview-table tr.job-row[data-run="20_ddp_straggler_8_ranks"]');
  await frame.waitForSelector('#all-hosts tr.host-row', {timeout: 60000});
  assert.equal(await frame.$eval('#host-select', (n) => n.value), '*');
  assert.match(await frame.$eval('#stragglers', (n) => n.textContent), /: rank 5 \(node1_1005\)\.$/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a multi-host run opens on its straggler; the all-hosts view reads the run as a job', async () => {
  const run = '16_two_hosts/2026_11_22_10_00_00';
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run})}`);
  await frame.waitForSelector('.finding[data-check="input.bound"]', {timeout: 60000});
  assert.equal(await frame.$eval('#host-select', (n) => n.value), 'gpu-worker-1');
  // the hosts' statuses come once they are analysed, also on a run opened by link before any overview
  await frame.waitForFunction(
    () =>
      [...document.querySelectorAll('#host-select option')].filter((o) => o.textContent.includes(' · ')).length === 2,
    undefined,
    {timeout: 30000},
  );
  const options = await frame.$$eval('#host-select option', (n) => n.map((o) => o.textContent));
  assert.deepEqual(options, ['all hosts', 'gpu-worker-0 · warning', 'gpu-worker-1 · critical']);
  await frame.selectOption('#host-select', '*');
  await frame.waitForSelector('#all-hosts tr.host-row', {timeout: 30000});
  const text = await frame.$eval('#all-hosts', (n) => n.textContent);
  // a synchronous job: worker 1 waits for input, worker 0 waits for it in the all-reduce
  assert.match(text, /Job 16_two_hosts: 2 ranks\. /);
  assert.match(text, /Straggler \(its own work an outlier while the other ranks wait in collectives\): gpu-worker-1/);
  const fired = await frame.$$eval('#job-checks li', (n) => n.map((l) => l.dataset.check));
  assert.deepEqual(fired, ['job.straggler', 'job.wait']); // the wait for worker 1, not transfer (issue 50)
  const hosts = await frame.$$eval('#all-hosts tr.host-row', (n) => n.map((r) => r.textContent));
  assert.match(hosts[0], /gpu-worker-0.*11\.65 ms.*97\.7%.*6\.69 ms.*4\.70 ms \(4\.70 ms\)/);
  // its all-reduce finding reads that time as transfer: the job says how much is the wait for worker 1
  assert.match(
    hosts[0],
    /All-reduce: 40\.3% of the step in gradient transfers \(3\.80 ms of it waiting for the straggler\)/,
  );
  assert.doesNotMatch(hosts[1], /waiting for the straggler/);
  assert.match(hosts[1], /gpu-worker-1straggler.*11\.64 ms.*65\.1%.*6\.68 ms.*900 µs \(900 µs\).*Input-bound/);
  assert.match(page.url(), /p\.gpu_advisor\.host=\*/);
  await page.screenshot({path: join(SHOTS, 'multi-host.png')});
  await frame.click('#all-hosts tr.host-row[data-host="gpu-worker-0"]');
  await frame.waitForSelector('#findings', {timeout: 30000});
  assert.equal(await frame.$eval('#host-select', (n) => n.value), 'gpu-worker-0');
  // the rank's own page says the same under its all-reduce finding, as the CLI does
  const note = await frame.$eval('.finding[data-check="allreduce.cost"] .job-wait', (n) => n.textContent);
  assert.equal(
    note,
    'In the job: 3.80 ms of it per step is waiting for the straggler gpu-worker-1 (job.straggler): fix that first.',
  );
  assert.deepEqual(errors, []);
  await context.close();
});

test('an 8-rank PyTorch job: the all-hosts view names rank 5, lists the job checks, and a click opens that rank', async () => {
  const run = '20_ddp_straggler_8_ranks';
  const straggler = 'node1_1005.1700000000000';
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run})}`);
  await frame.waitForSelector('#findings', {timeout: 60000});
  assert.equal(await frame.$eval('#host-select', (n) => n.value), straggler); // opens on the straggler
  await frame.selectOption('#host-select', '*');
  await frame.waitForSelector('#all-hosts tr.host-row', {timeout: 60000});
  const text = await frame.$eval('#stragglers', (n) => n.textContent);
  assert.match(text, /^Job 20_ddp_straggler_8_ranks: 8 of 8 ranks\. /);
  assert.match(text, /: rank 5 \(node1_1005\)\.$/);
  const fired = await frame.$$eval('#job-checks li', (n) => n.map((l) => l.dataset.check));
  assert.deepEqual(fired, ['job.straggler', 'job.imbalance', 'job.wait', 'job.allreduce-count']);
  const rows = await frame.$$eval('#all-hosts tr.host-row', (n) =>
    n.map((r) => ({host: r.dataset.host, text: r.textContent, badge: !!r.querySelector('.badge')})),
  );
  assert.equal(rows.length, 8);
  assert.deepEqual(
    rows.filter((r) => r.badge).map((r) => r.host),
    [straggler],
  );
  // rank 5 computes 29.40 ms a step and waits 2 ms in collectives; the others 19.60 ms and 17 ms
  assert.match(rows.find((r) => r.host === straggler).text, /rank 5 \(node1_1005\)straggler.*29\.40 ms.*2\.00 ms/);
  assert.match(
    rows.find((r) => r.host === 'node0_1000.1700000000000').text,
    /rank 0 \(node0_1000\).*19\.60 ms.*17\.00 ms/,
  );
  await frame.click(`#all-hosts tr.host-row[data-host="${straggler}"]`);
  await frame.waitForSelector('#findings', {timeout: 30000});
  assert.equal(await frame.$eval('#host-select', (n) => n.value), straggler);
  assert.match(page.url(), /p\.gpu_advisor\.host=node1_1005\.1700000000000/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('timeline: hover names the event and the time; the highlight covers the evidence rows only; a step click zooms to it', async () => {
  const rep = await report(INPUT_RUN, HOST);
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run: INPUT_RUN})}`);
  await frame.waitForFunction(() => Number(document.querySelector('canvas.timeline')?.dataset.loaded) > 0, null, {
    timeout: 30000,
  });
  // the first view frames the steps, not the whole capture
  const ds0 = await frame.$eval('canvas.timeline', (c) => ({...c.dataset}));
  const first = rep.step_breakdown[0];
  const last = rep.step_breakdown[rep.step_breakdown.length - 1];
  assert.ok(Number(ds0.windowStart) <= first.start_ms && Number(ds0.windowEnd) >= last.end_ms);
  assert.ok(Number(ds0.windowEnd) - Number(ds0.windowStart) < 1.1 * (last.end_ms - first.start_ms));
  // tick labels share one unit
  const units = new Set(ds0.ticks.split('|').map((t) => t.split(' ')[1]));
  assert.equal(units.size, 1);
  // hover a kernel on GPU 0's compute stream
  const canvas = await frame.$('canvas.timeline');
  const box = await canvas.boundingBox();
  const width = Math.round(box.width - Number(ds0.labelWidth));
  const tl = await getJson(base, 'timeline', {
    run: INPUT_RUN,
    host: HOST,
    start_ms: ds0.windowStart,
    end_ms: ds0.windowEnd,
    width,
  });
  const row = tl.tracks.findIndex((t) => t.id === 'gpu0/stream7');
  const seg = tl.tracks[row].segments.find(
    (s) => s[1] - s[0] > (Number(ds0.windowEnd) - Number(ds0.windowStart)) / 100,
  );
  const t = (seg[0] + seg[1]) / 2;
  assert.ok((await getJson(base, 'event', {run: INPUT_RUN, host: HOST, track: 'gpu0/stream7', t_ms: t})).event);
  const span = Number(ds0.windowEnd) - Number(ds0.windowStart);
  const x = box.x + Number(ds0.labelWidth) + ((t - Number(ds0.windowStart)) / span) * width;
  const y = box.y + Number(ds0.rowsTop) + row * Number(ds0.rowHeight) + Number(ds0.rowHeight) / 2;
  await page.mouse.move(x, y);
  await frame.waitForSelector('.tl-tip:not([hidden])', {timeout: 10000});
  await frame.waitForFunction(() => document.querySelector('canvas.timeline')?.dataset.hovered);
  const tip = await frame.$eval('.tl-tip', (n) => n.innerText);
  const cursor = Number(await frame.$eval('canvas.timeline', (c) => c.dataset.cursor));
  assert.ok(Math.abs(cursor - t) <= span / width, `cursor ${cursor} for ${t}`);
  // the event the route finds there, with the panel's tolerance of 1.5 pixels
  const there = await getJson(base, 'event', {
    run: INPUT_RUN,
    host: HOST,
    track: 'gpu0/stream7',
    t_ms: cursor,
    tolerance_ms: (1.5 * span) / width,
  });
  assert.ok(tip.startsWith(there.event.name), tip);
  assert.match(tip, /µs, from|ms, from/);
  assert.match(tip, /cursor .* · GPU 0 · Stream #7\(Compute\)/);
  await page.screenshot({path: join(SHOTS, '10-timeline-hover.png')});
  // the evidence of input.bound is on the tf.data get-next thread: only that row is highlighted
  await frame.click('.finding[data-check="input.bound"] .evidence li[data-index="0"] .show-on-timeline');
  await frame.waitForFunction(() => document.querySelector('canvas.timeline')?.dataset.highlight === 'input.bound:0');
  await frame.waitForFunction(() => document.querySelector('canvas.timeline')?.dataset.highlightRows !== '');
  const rows = (await frame.$eval('canvas.timeline', (c) => c.dataset.highlightRows)).split(',').map(Number);
  const tracks = (await getJson(base, 'timeline', {run: INPUT_RUN, host: HOST, width: 100})).tracks;
  assert.deepEqual(
    rows.map((r) => tracks[r].id),
    ['host/tf_data_iterator_get_next'],
  );
  // a step clicked in the breakdown: the timeline shows that step
  const step = rep.step_breakdown[3];
  await frame.click(`.breakdown-chart .step-bar[data-step="${step.step}"]`);
  const ds = await frame.$eval('canvas.timeline', (c) => ({...c.dataset}));
  assert.ok(Number(ds.windowStart) <= step.start_ms && Number(ds.windowEnd) >= step.end_ms);
  assert.ok(Number(ds.windowEnd) - Number(ds.windowStart) < 1.2 * (step.end_ms - step.start_ms));
  assert.deepEqual(errors, []);
  await context.close();
});

test('compare with the run before a change: deltas shown, and the copied link opens the same comparison', async () => {
  const run = '19_mixed_precision_after_08/2026_11_22_10_00_00';
  const baseRun = '08_fp32_on_tensor_core_gpu/2026_11_22_10_00_00';
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run})}`);
  await frame.waitForSelector('.finding', {timeout: 30000});
  await frame.selectOption('#compare-select', JSON.stringify([baseRun, HOST]));
  await frame.waitForSelector('#comparison', {timeout: 30000});
  const steps = await frame.$eval('#compare-steps', (n) => n.textContent);
  assert.match(
    steps,
    /17\.21 ms .* → 7\.39 ms .*−9\.83 ms \(-57\.1%\) per step, 95% interval −9\.87 ms to −9\.78 ms\.$/,
  );
  // the verdict names its basis: the profiler costs next to nothing in these TensorFlow captures
  assert.match(
    await frame.$eval('#compare-basis', (n) => n.textContent),
    /^Verdict: faster, on the captured steps: −9\.83 ms \(-57\.1%\), interval −9\.87 ms to −9\.78 ms/,
  );
  const compute = await frame.$eval('tr[data-category="device_compute"]', (n) => n.innerText);
  assert.match(compute, /16\.71 ms\s+6\.88 ms\s+−9\.83 ms/);
  const verdicts = await frame.$$eval('table.compare-checks tr[data-check]', (n) =>
    n.map((r) => [r.dataset.check, r.dataset.verdict]),
  );
  // the input copy, the same 0.39 ms a step in both, is a warning of a shorter step: exposed by the fix
  assert.deepEqual(verdicts, [
    ['input.bound', 'exposed'],
    ['precision.mixed-off', 'fixed'],
    ['tensorcore.unused', 'fixed'],
  ]);
  assert.match(await frame.$eval('#movers-kernels', (n) => n.innerText), /volta_scudnn_128x64_relu_interior_nn_v1/);
  await page.screenshot({path: join(SHOTS, 'compare.png')});
  assert.match(page.url(), /p\.gpu_advisor\.compare=08_fp32/);
  await frame.click('#copy-link');
  const link = await frame.$eval('#share-link', (n) => n.value);
  await context.close();

  const again = await openPanel(link);
  await again.frame.waitForSelector('#comparison', {timeout: 30000});
  assert.equal(await again.frame.$eval('#compare-select', (n) => n.value), JSON.stringify([baseRun, HOST]));
  assert.match(await again.frame.$eval('#compare-steps', (n) => n.textContent), /−9\.83 ms/);
  await again.frame.click('#compare-back');
  await again.frame.waitForSelector('.finding', {timeout: 30000});
  assert.doesNotMatch(again.page.url(), /compare=/);
  assert.deepEqual(errors, []);
  assert.deepEqual(again.errors, []);
  await again.context.close();
});

test('a compare link without compare_host: the only host is picked, else the panel says what is missing', async () => {
  const run = '19_mixed_precision_after_08/2026_11_22_10_00_00';
  const one = '08_fp32_on_tensor_core_gpu/2026_11_22_10_00_00'; // a single host
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run, host: HOST, compare: one})}`);
  await frame.waitForSelector('#comparison', {timeout: 30000});
  assert.equal(await frame.$eval('#compare-before', (n) => n.textContent), one);
  assert.match(
    await frame.$eval('#compare-basis', (n) => n.textContent),
    /^Verdict: faster, on the captured steps: −9\.83 ms/,
  );
  assert.match(page.url(), /p\.gpu_advisor\.compare_host=gpu-worker-0/);
  await context.close();
  const two = '16_two_hosts/2026_11_22_10_00_00';
  const other = await openPanel(`${base}/${hashFor({run, host: HOST, compare: two})}`);
  const text = await (await other.frame.waitForSelector('[role="alert"]', {timeout: 30000})).textContent();
  assert.match(
    text,
    /^Cannot compare with 16_two_hosts\/2026_11_22_10_00_00: it has 2 hosts \(.+, .+\) and the link names none\./,
  );
  assert.equal(await other.frame.$('#comparison'), null);
  const gone = await openPanel(`${base}/${hashFor({run, host: HOST, compare: 'no_such_run'})}`);
  const said = await (await gone.frame.waitForSelector('[role="alert"]', {timeout: 30000})).textContent();
  assert.equal(said, 'Cannot compare: the run no_such_run is not in this logdir.');
  assert.deepEqual([...errors, ...other.errors, ...gone.errors], []);
  await other.context.close();
  await gone.context.close();
});

test('compare: before and after are labelled and swap; the link keeps both', async () => {
  const after = '19_mixed_precision_after_08/2026_11_22_10_00_00';
  const before = '08_fp32_on_tensor_core_gpu/2026_11_22_10_00_00';
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run: after})}`);
  await frame.waitForSelector('.finding', {timeout: 30000});
  assert.match(await frame.$eval('label[for="compare-select"]', (n) => n.textContent), /^Before/);
  await frame.selectOption('#compare-select', JSON.stringify([before, HOST]));
  await frame.waitForSelector('#comparison', {timeout: 30000});
  // the run picked in the tab is the one after the change; the one picked as "Before" is the base
  assert.equal(await frame.$eval('#compare-before', (n) => n.textContent), before);
  assert.equal(await frame.$eval('#compare-after', (n) => n.textContent), after);
  assert.match(
    await frame.$eval('#compare-basis', (n) => n.textContent),
    /^Verdict: faster, on the captured steps: −9\.83 ms/,
  );
  await frame.click('#compare-swap');
  await frame.waitForFunction((r) => document.querySelector('#compare-before')?.textContent === r, after, {
    timeout: 30000,
  });
  assert.equal(await frame.$eval('#compare-after', (n) => n.textContent), before);
  assert.match(
    await frame.$eval('#compare-basis', (n) => n.textContent),
    /^Verdict: slower, on the captured steps: \+9\.83 ms \(\+133\.0%\)/,
  );
  // the link keeps both, the other way round now
  assert.match(page.url(), /p\.gpu_advisor\.run=08_fp32.*p\.gpu_advisor\.compare=19_mixed/);
  await frame.click('#copy-link');
  const link = await frame.$eval('#share-link', (n) => n.value);
  await context.close();
  const again = await openPanel(link);
  await again.frame.waitForSelector('#comparison', {timeout: 30000});
  assert.equal(await again.frame.$eval('#compare-before', (n) => n.textContent), after);
  assert.equal(await again.frame.$eval('#compare-after', (n) => n.textContent), before);
  assert.deepEqual(errors, []);
  assert.deepEqual(again.errors, []);
  await again.context.close();
});

test('history: each view is an entry, Back and Forward move between them, a pasted link applies without a reload', async () => {
  const other = '18_input_prefetched_after_02/2026_11_22_10_00_00';
  const {context, page, frame, errors} = await openPanel(`${base}/#gpu_advisor`);
  await frame.waitForSelector('#overview-table, .overview', {timeout: 30000});
  const length0 = await page.evaluate(() => history.length);
  await frame.selectOption('#run-select', INPUT_RUN);
  await frame.waitForSelector('.finding', {timeout: 30000});
  await frame.selectOption('#run-select', other);
  await waitUntil(async () => page.url().includes('p.gpu_advisor.run=18_input'), 'the second run in the URL');
  await frame.waitForSelector('.finding', {timeout: 30000});
  assert.equal(await page.evaluate(() => history.length), length0 + 2);
  await frame.evaluate(() => {
    window.__same_document = true;
  });
  const runShown = () => frame.$eval('#run-select', (n) => n.value);
  await page.goBack();
  await waitUntil(async () => (await runShown()) === INPUT_RUN, 'Back to the first run');
  assert.match(page.url(), /p\.gpu_advisor\.run=02_input_bound/);
  await page.goBack();
  await waitUntil(async () => (await runShown()) === '', 'Back to the overview');
  assert.ok(page.url().startsWith(base)); // still in TensorBoard
  await page.goForward();
  await waitUntil(async () => (await runShown()) === INPUT_RUN, 'Forward to the first run');
  // a link pasted into the open tab: applied in place, the panel not reloaded
  const launch = '05_launch_bound_small_kernels/2026_11_22_10_00_00';
  await page.goto(`${base}/${hashFor({run: launch})}`);
  await waitUntil(async () => (await runShown()) === launch, 'the pasted link');
  assert.equal(await frame.evaluate(() => window.__same_document), true);
  assert.deepEqual(errors, []);
  await context.close();
});

test('history: a host change is an entry too; Back returns to the host before, in place', async () => {
  const run = '16_two_hosts/2026_11_22_10_00_00';
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run})}`);
  await frame.waitForSelector('.finding', {timeout: 60000});
  const hostShown = () => frame.$eval('#host-select', (n) => n.value);
  assert.equal(await hostShown(), 'gpu-worker-1'); // the straggler
  await waitUntil(async () => page.url().includes('p.gpu_advisor.host=gpu-worker-1'), 'the host in the URL');
  await frame.evaluate(() => {
    window.__same_document = true;
  });
  const length0 = await page.evaluate(() => history.length);
  await frame.selectOption('#host-select', 'gpu-worker-0');
  await waitUntil(async () => page.url().includes('p.gpu_advisor.host=gpu-worker-0'), 'the other host in the URL');
  await frame.waitForSelector('.finding', {timeout: 30000});
  assert.equal(await page.evaluate(() => history.length), length0 + 1);
  await page.goBack();
  await waitUntil(async () => (await hostShown()) === 'gpu-worker-1', 'Back to the first host');
  assert.match(page.url(), /p\.gpu_advisor\.host=gpu-worker-1/);
  await frame.waitForSelector('.finding', {timeout: 30000});
  await page.goForward();
  await waitUntil(async () => (await hostShown()) === 'gpu-worker-0', 'Forward to the other host');
  assert.equal(await frame.evaluate(() => window.__same_document), true);
  assert.deepEqual(errors, []);
  await context.close();
});

/** The profiles of a logdir: XSpace and PyTorch trace files. */
function profileFiles(dir) {
  return readdirSync(dir, {recursive: true})
    .filter((f) => /\.xplane\.pb$|\.pt\.trace\.json(\.gz)?$/.test(f))
    .map((f) => join(dir, f));
}

async function waitUntil(fn, what) {
  const end = Date.now() + 30000;
  for (;;) {
    if (await fn().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('long kernel names are shortened in the tables, the full name on hover', async () => {
  // the real ResNet-50 trace: tensorcore.unused lists cuDNN kernels whose names run to 249 characters
  const run = 'pytorch_resnet50_num_workers_0';
  const {context, frame, errors} = await openPanel(`${base}/${hashFor({run, finding: 'tensorcore.unused'})}`);
  await frame.waitForSelector('.finding', {timeout: 30000});
  const names = await frame.$$eval('table.details .long-name', (n) =>
    n.map((s) => ({text: s.textContent, title: s.getAttribute('title')})),
  );
  assert.ok(names.length > 0);
  const longest = names.reduce((a, b) => (b.title.length > a.title.length ? b : a));
  assert.equal(longest.title.length, 249);
  assert.equal(longest.text.length, 60);
  assert.ok(longest.text.endsWith('…') && longest.title.startsWith(longest.text.slice(0, -1)));
  assert.deepEqual(errors, []);
  await context.close();
});
