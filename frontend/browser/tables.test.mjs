// Browser tests of the table views: a real TensorBoard over demo runs, a real PyTorch trace with memory
// records, the hostile run and a 3,000-kernel trace written here; Debian's Chromium. What the user
// sees (text, order, links) is checked against the plugin's own `table` answers and hand counts.
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {cpSync, mkdirSync, readFileSync} from 'node:fs';
import {join} from 'node:path';
import {gunzipSync} from 'node:zlib';
import {test} from 'node:test';
import {PYTHON, ROOT, SHOTS, getJson, hashFor, openPanel as open, serveLogdir, waitFor} from './harness.mjs';

const FP32_RUN = '08_fp32_on_tensor_core_gpu/2026_11_22_10_00_00';
const INPUT_RUN = '02_input_bound/2026_11_22_10_00_00';
const HEALTHY_RUN = '01_healthy/2026_11_22_10_00_00';
const HOST = 'gpu-worker-0';
const TORCH_RUN = 'pytorch_resnet50_num_workers_0';
const TORCH_HOST = 'worker0.1623143089861';
const TORCH_FILE = join(ROOT, 'demo_logs', TORCH_RUN, `${TORCH_HOST}.pt.trace.json.gz`);
const HOSTILE_RUN = 'zz_hostile_<b>run</b>/2026_11_22_12_00_00';
const MANY_RUN = 'many_kernels';
const MANY_HOST = 'worker0.1'; // the file's name before .pt.trace.json.gz
const MANY = 3000;
// a real H100 capture (tests/data/gpu): an fp16 MLP whose GEMMs are CUTLASS's `Kernel2<..._align2>`
const H100_RUN = 'torch_fp16_odd_dims';
const STACKS_RUN = 'torch2_stacks';
const STACKS_HOST = 'worker0.2';
// PyTorch 2.x with_stack=True: python_function events, no `Call stack` argument (a frame, a
// built-in it calls and the op the built-in runs, nested in time)
const WRITE_STACKS = `
import json, sys
py = lambda name, ts, dur, i, parent: {"ph": "X", "cat": "python_function", "name": name, "pid": 1, "tid": 1,
                                      "ts": ts, "dur": dur, "args": {"Python id": i, "Python parent id": parent}}
events = [
    py("train.py(30): <module>", 0, 100, 1, None),
    py("model.py(12): my_layer", 10, 50, 2, 1),
    py("<built-in method mm of type object at 0x1>", 12, 40, 3, 2),
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 14, "dur": 30, "args": {}},
]
open(sys.argv[1], "w").write(json.dumps({"schemaVersion": 1, "traceEvents": events}))
`;

// 3,000 kernels of distinct names (one call each, 1..3000 µs: kernel #i runs i µs), in 3 steps
const WRITE_MANY = `
import sys
sys.path.insert(0, sys.argv[3])  # tests/: the writers are test support, not the package's
from support.kineto_writer import KinetoWriter
n, path = int(sys.argv[1]), sys.argv[2]
w = KinetoWriter()
t = 1000.0
for s in range(3):
    start = t
    for i in range(s * n // 3 + 1, (s + 1) * n // 3 + 1):
        w.op('aten::mm', t, 8.0)
        w.kernel(f'void gemm_kernel<float, {i}>(int)', t + 1.0, t + 9.0, float(i))
        t += i + 12.0
    w.step(s, start - 5.0, t - start + 10.0)
    t += 50.0
open(path, 'wb').write(w.to_bytes())
`;

let base;
let browser;

serveLogdir(
  'tables',
  (logdir) => {
    for (const run of ['08_fp32_on_tensor_core_gpu', '02_input_bound', '01_healthy', TORCH_RUN])
      cpSync(join(ROOT, 'demo_logs', run), join(logdir, run), {recursive: true});
    cpSync(join(ROOT, 'tests', 'data', 'gpu', H100_RUN), join(logdir, H100_RUN), {recursive: true});
    execFileSync(PYTHON, [join(ROOT, 'tests', 'support', 'hostile_profile.py'), logdir]);
    mkdirSync(join(logdir, MANY_RUN));
    const many = join(logdir, MANY_RUN, `${MANY_HOST}.pt.trace.json.gz`);
    execFileSync(PYTHON, ['-c', WRITE_MANY, String(MANY), many, join(ROOT, 'tests')], {
      env: {...process.env, PYTHONPATH: ROOT},
    });
    mkdirSync(join(logdir, STACKS_RUN));
    execFileSync(PYTHON, ['-c', WRITE_STACKS, join(logdir, STACKS_RUN, `${STACKS_HOST}.pt.trace.json`)]);
  },
  (s) => ({base, browser} = s),
);

const openPanel = (url) => open(browser, url);
const table = (params) => getJson(base, 'table', params);

/** Waits until the table shows the rows of the query named (sort, order, q), none pending. */
async function shown(frame, want = {}) {
  await frame.waitForFunction(
    (want) => {
      const t = document.querySelector('#data-table');
      if (!t || t.dataset.loading !== 'false' || !t.dataset.total) return false;
      if (document.querySelector('#data-table tr.vt-row.pending')) return false;
      return Object.entries(want).every(([k, v]) => t.dataset[k] === v);
    },
    want,
    {timeout: 60000},
  );
}

/** The texts of one column in the rows shown (and, for name columns, the full names on hover). */
function column(frame, key, attr = null) {
  return frame.evaluate(
    ({key, attr}) => {
      const ths = Array.from(document.querySelectorAll('#data-table thead th'));
      const i = ths.findIndex((th) => th.dataset.key === key);
      if (i < 0) throw new Error(`no column ${key}`);
      return Array.from(document.querySelectorAll('#data-table tr.vt-row')).map((tr) => {
        const td = tr.children[i];
        return attr ? td.getAttribute(attr) : td.textContent;
      });
    },
    {key, attr},
  );
}

const num = (s) => Number(s.replace(/,/g, ''));
const isSorted = (xs, desc) => xs.every((x, i) => i === 0 || (desc ? xs[i - 1] >= x : xs[i - 1] <= x));

test('kernels: sort by a column, filter by text, follow a row to the trace viewer, reload the shared URL', async () => {
  const {context, page, frame, errors} = await openPanel(`${base}/${hashFor({run: FP32_RUN})}`);
  await frame.waitForSelector('#findings', {timeout: 60000});
  await frame.click('#view-tables');
  await shown(frame, {sort: 'total_us', order: 'desc'});
  assert.equal(await frame.$eval('#view-tables', (n) => n.getAttribute('aria-selected')), 'true');
  assert.equal(await frame.$eval('.table-tab[data-table="kernels"]', (n) => n.getAttribute('aria-selected')), 'true');
  assert.equal(await frame.$('#findings').then((n) => n.isVisible()), false);
  const all = await table({run: FP32_RUN, host: HOST, table: 'kernels'});
  // the demo's V100 fp32 step: 7 kernel names, the scudnn convolution first with 48 calls
  assert.equal(all.total, 7);
  assert.equal(await frame.$eval('#table-count', (n) => n.textContent), '7 kernels');
  const names = await column(frame, 'short_name', 'title');
  assert.deepEqual(
    names,
    all.rows.map((r) => r.name),
  );
  assert.equal(names[0], 'volta_scudnn_128x64_relu_interior_nn_v1');
  const totals = (await column(frame, 'total_us')).map(num);
  assert.ok(isSorted(totals, true), String(totals));
  assert.deepEqual(
    totals,
    all.rows.map((r) => Math.round(r.total_us * 10) / 10),
  );
  assert.deepEqual((await column(frame, 'calls')).map(num).slice(0, 2), [48, 24]);
  // the full name is a hover, not a column of its own
  assert.equal(await frame.$('#data-table th[data-key="name"]'), null);

  // sort by calls: most first, then, clicked again, fewest first
  await frame.click('#data-table th[data-key="calls"] button');
  await shown(frame, {sort: 'calls', order: 'desc'});
  const callsDesc = (await column(frame, 'calls')).map(num);
  assert.ok(isSorted(callsDesc, true), String(callsDesc));
  assert.equal(callsDesc[0], 48);
  assert.equal(await frame.$eval('#data-table th[data-key="calls"]', (n) => n.getAttribute('aria-sort')), 'descending');
  await frame.click('#data-table th[data-key="calls"] button');
  await shown(frame, {sort: 'calls', order: 'asc'});
  const callsAsc = (await column(frame, 'calls')).map(num);
  assert.deepEqual(callsAsc, [...callsDesc].reverse());
  assert.equal(callsAsc[0], 6);

  // filter: the two sgemm kernels, fewest calls first still
  await frame.fill('#table-filter', 'SGEMM');
  await shown(frame, {q: 'SGEMM'});
  const filtered = await column(frame, 'short_name', 'title');
  assert.deepEqual(filtered.sort(), ['volta_sgemm_128x64_nn', 'volta_sgemm_64x64_tn']);
  assert.equal(await frame.$eval('#table-count', (n) => n.textContent), '2 of 7 kernels');

  // a row's trace link opens the trace viewer on its longest instance, and that data holds the kernel
  const q = {run: FP32_RUN, host: HOST, table: 'kernels', sort: 'calls', order: 'asc', q: 'SGEMM'};
  const rows = (await table(q)).rows;
  const href = await frame.$eval('#data-table tr.vt-row[data-index="0"] a.row-trace', (a) => a.getAttribute('href'));
  const p = new URLSearchParams(href.split('?')[1]);
  assert.ok(href.startsWith('/data/plugin/profile/trace_viewer_index.html?is_streaming=false&'));
  const tr = rows[0].trace;
  const len = tr.end_ms - tr.start_ms;
  assert.ok(len > 0.4, `${rows[0].name}: ${len} ms`); // the sgemm kernels run ~0.5 ms
  assert.ok(Math.abs(Number(p.get('view_start')) - (tr.start_ms - 0.1 * len)) < 1e-5, href);
  assert.ok(Math.abs(Number(p.get('view_end')) - (tr.end_ms + 0.1 * len)) < 1e-5, href);
  const data = await (await fetch(`${base}${p.get('trace_data_url')}`)).json();
  const hit = data.traceEvents.find(
    (e) => e.name === rows[0].name && Math.abs(e.ts / 1000 - tr.start_ms) < 1e-3 && Math.abs(e.dur / 1000 - len) < 1e-3,
  );
  assert.ok(hit, `the exported window holds ${rows[0].name} at ${tr.start_ms} ms`);

  // the URL keeps the view: a new page on it shows the same table, sort and filter
  const url = page.url();
  assert.match(url, /p\.gpu_advisor\.view=tables/);
  assert.match(url, /p\.gpu_advisor\.sort=calls&p\.gpu_advisor\.order=asc&p\.gpu_advisor\.filter=SGEMM/);
  await page.screenshot({path: join(SHOTS, 'tables-kernels.png')});
  assert.deepEqual(errors, []);
  await context.close();
  const again = await openPanel(url);
  await shown(again.frame, {sort: 'calls', order: 'asc', q: 'SGEMM'});
  assert.equal(await again.frame.$eval('#table-filter', (n) => n.value), 'SGEMM');
  assert.deepEqual(await column(again.frame, 'short_name', 'title'), [rows[0].name, rows[1].name]);
  assert.equal(
    await again.frame.$eval('#data-table th[data-key="calls"]', (n) => n.getAttribute('aria-sort')),
    'ascending',
  );
  assert.deepEqual(again.errors, []);
  await again.context.close();
});

test('kernels at 1,400 px: every column in view, readable names cut in their middle, the full one on hover', async () => {
  const context = await browser.newContext({viewport: {width: 1400, height: 900}});
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}/${hashFor({run: H100_RUN, view: 'tables', table: 'kernels'})}`);
  const frame = await waitFor(() => page.frames().find((f) => f.url().includes('plugin_entry.html?name=gpu_advisor')));
  await shown(frame, {sort: 'total_us'});
  const host = (await getJson(base, 'runs', {})).runs.find((r) => r.run === H100_RUN).hosts[0];
  const all = await table({run: H100_RUN, host: host.host ?? host, table: 'kernels', limit: 1000});
  // no sideways scroll: the table is as wide as its card, the Tensor Cores column inside it
  const fit = await frame.evaluate(() => {
    const s = document.querySelector('.vt-scroll');
    const tc = document.querySelector('#data-table th[data-key="tensor_cores"]').getBoundingClientRect();
    return {scroll: s.scrollWidth, client: s.clientWidth, right: s.getBoundingClientRect().right, tc: tc.right};
  });
  assert.ok(fit.scroll <= fit.client, JSON.stringify(fit));
  assert.ok(fit.tc <= fit.right, JSON.stringify(fit));
  // each kernel reads as its short name (cut where it shares its words with the names beside it, then
  // in its middle, where long), its full name on hover; the top ones are CUTLASS's GEMMs, shown by the
  // kernel Kernel2 wraps, their `_align2` in view
  const cells = await frame.$$eval('#data-table td.name[data-short]', (tds) =>
    tds.map((td) => ({text: td.textContent, short: td.dataset.short, title: td.getAttribute('title')})),
  );
  assert.ok(cells.length >= 10, String(cells.length));
  for (const [i, c] of cells.entries()) {
    assert.equal(c.title, all.rows[i].name);
    assert.equal(c.short, all.rows[i].short_name);
    if (c.text !== c.short) {
      const parts = c.text.split('…').filter(Boolean);
      assert.ok(c.short.startsWith(parts[0]) && c.short.endsWith(parts[parts.length - 1]), c.text);
    }
  }
  assert.match(all.rows[0].name, /^void cutlass::Kernel2<cutlass_80_tensorop_f16_s16816gemm_f16_\w+_align2>\(/);
  for (const c of cells.slice(0, 4)) {
    assert.ok(c.text.startsWith('cutlass_') && c.text.endsWith('_align2'), c.text);
    assert.ok(!c.text.includes('Kernel2'), c.text);
  }
  await page.screenshot({path: join(SHOTS, 'tables-kernels-1400.png')});
  assert.deepEqual(errors, []);
  await context.close();
});

test('kernels grouped by kernel and op: one row per name and launching op', async () => {
  const {context, frame, errors} = await openPanel(`${base}/${hashFor({run: FP32_RUN, view: 'tables'})}`);
  await shown(frame, {});
  await frame.selectOption('#table-group', 'name_op');
  await frame.waitForFunction(() => /p\.gpu_advisor\.group=name_op/.test(window.top.location.hash));
  const byOp = await table({run: FP32_RUN, host: HOST, table: 'kernels', group: 'name_op'});
  await frame.waitForFunction((n) => document.querySelector('#data-table')?.dataset.total === String(n), byOp.total);
  await shown(frame, {});
  assert.ok(byOp.total >= 7, `${byOp.total}`);
  const ops = await column(frame, 'op', 'title');
  assert.deepEqual(
    ops,
    byOp.rows.map((r) => r.op),
  );
  assert.deepEqual(errors, []);
  await context.close();
});

test('tables are virtual: a 3,000-kernel trace keeps ~40 rows in the DOM and pages as it scrolls', async () => {
  const {context, frame, errors} = await openPanel(
    `${base}/${hashFor({run: MANY_RUN, host: MANY_HOST, view: 'tables', table: 'kernels'})}`,
  );
  await shown(frame, {sort: 'total_us', order: 'desc'});
  assert.equal(await frame.$eval('#table-count', (n) => n.textContent), '3,000 kernels');
  const inDom = await frame.$$eval('#data-table tr.vt-row', (n) => n.length);
  assert.ok(inDom > 10 && inDom < 60, `${inDom} rows in the DOM`);
  // kernel #i runs i µs: the longest first
  assert.deepEqual((await column(frame, 'total_us')).slice(0, 3), ['3,000.0', '2,999.0', '2,998.0']);
  // the scroll bar spans every row
  const height = await frame.$eval('#data-table', (t) => t.getBoundingClientRect().height);
  assert.ok(Math.abs(height - (MANY * 24 + 30)) < 40, `table height ${height}`);
  // scroll to row 1,500 (page 1,400..1,599): that row is #1500 in the descending order, i.e. 1,500 µs
  await frame.$eval('.vt-scroll', (s) => (s.scrollTop = 1500 * 24));
  await frame.waitForFunction(() => {
    const t = document.querySelector('#data-table');
    return Number(t.dataset.first) <= 1500 && Number(t.dataset.last) > 1500 && t.dataset.loading === 'false';
  });
  const row = await frame.$eval('#data-table tr.vt-row[data-index="1500"]', (tr) =>
    Array.from(tr.children).map((td) => td.textContent),
  );
  assert.ok(row.includes('1,500.0'), row.join(' | '));
  assert.ok(
    (await frame.$$eval('#data-table tr.vt-row', (n) => n.map((r) => Number(r.dataset.index)))).every(
      (i) => i > 1400 && i < 1600,
    ),
  );
  // a filter matches on the server: names with "<float, 7" are #7, #70-79 and #700-799: 111 kernels
  await frame.fill('#table-filter', '<float, 7');
  await frame.press('#table-filter', 'Enter');
  await shown(frame, {q: '<float, 7'});
  assert.equal(await frame.$eval('#table-count', (n) => n.textContent), '111 of 3,000 kernels');
  assert.equal(await frame.$eval('.vt-scroll', (s) => s.scrollTop), 0);
  assert.deepEqual((await column(frame, 'total_us')).slice(0, 2), ['799.0', '798.0']);
  assert.deepEqual(errors, []);
  await context.close();
});

test('names from a profile render as text in the tables', async () => {
  const {context, page, frame, errors} = await openPanel(
    `${base}/${hashFor({run: HOSTILE_RUN, view: 'tables', table: 'kernels'})}`,
  );
  await shown(frame, {});
  const [name] = await column(frame, 'short_name', 'title');
  assert.equal(name, 'ampere_sgemm_<script>window.top.__xss=2</script>_128x64_nn');
  const ops = await column(frame, 'op');
  assert.ok(ops[0].includes('<img src=x onerror='), ops[0]);
  assert.equal(await frame.$$eval('#tables script, #tables img, #tables b', (n) => n.length), 0);
  await page.waitForTimeout(300);
  assert.equal(await frame.evaluate(() => window.top.__xss), undefined);
  assert.deepEqual(errors, []);
  await context.close();
});

test("input pipeline on a PyTorch trace: the DataLoader's waits and the batch's copies", async () => {
  // from the raw trace: the V100 ResNet-50 run without workers, its __next__ and host-to-device copies
  const events = JSON.parse(gunzipSync(readFileSync(TORCH_FILE))).traceEvents.filter((e) => e.ph === 'X');
  const sum = (xs) => xs.reduce((t, e) => t + e.dur, 0);
  const waits = events.filter((e) => e.name.includes('DataLoader') && e.name.endsWith('__next__'));
  const copies = events.filter((e) => e.name.startsWith('Memcpy HtoD'));
  assert.deepEqual([waits.length, sum(waits), copies.length, sum(copies)], [6, 415791, 12, 11492]);
  const {context, frame, errors} = await openPanel(
    `${base}/${hashFor({run: TORCH_RUN, view: 'tables', table: 'input'})}`,
  );
  await shown(frame, {sort: 'total_us', order: 'desc'});
  assert.equal(await frame.$('#table-message'), null);
  assert.deepEqual(await column(frame, 'stage', 'title'), [
    'enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__',
    'Memcpy HtoD (Pageable -> Device)',
  ]);
  assert.deepEqual(await column(frame, 'part'), ['wait', 'copy']);
  assert.deepEqual((await column(frame, 'calls')).map(num), [waits.length, copies.length]);
  assert.deepEqual((await column(frame, 'total_us')).map(num), [sum(waits), sum(copies)]);
  assert.equal(await frame.$eval('#input-options', (n) => n.textContent), 'worker processes: no · pin_memory: off');
  const notes = await frame.$$eval('.table-note', (ns) => ns.map((n) => n.textContent));
  assert.ok(
    notes.some((n) => /num_workers=0/.test(n)),
    notes.join(' | '),
  );
  assert.ok(
    notes.some((n) => /12 host-to-device copies of the batch, from pageable memory/.test(n)),
    notes.join(' | '),
  );
  assert.deepEqual(errors, []);
  await context.close();
});

test("a finding's link opens its table filtered to its own kernels; clearing the filter shows them all", async () => {
  const rep = await getJson(base, 'report', {run: FP32_RUN, host: HOST});
  const link = rep.checks.find((c) => c.id === 'tensorcore.unused').table;
  assert.equal(link.table, 'kernels');
  // the fp32 convolutions: the two scudnn kernels that do not use Tensor Cores
  assert.deepEqual([...link.name].sort(), [
    'volta_scudnn_128x128_stridedB_splitK_small_nn_v1',
    'volta_scudnn_128x64_relu_interior_nn_v1',
  ]);
  const {context, page, frame, errors} = await openPanel(
    `${base}/${hashFor({run: FP32_RUN, finding: 'tensorcore.unused'})}`,
  );
  const button = await frame.waitForSelector('.finding[data-check="tensorcore.unused"] .table-link', {
    timeout: 60000,
  });
  assert.equal(await button.textContent(), 'Show these 2 kernels in the Kernels table');
  await button.click();
  await shown(frame, {});
  assert.equal(await frame.$eval('#table-names', (n) => n.textContent.trim()), "The finding's 2 kernels✕");
  assert.deepEqual((await column(frame, 'short_name', 'title')).sort(), [...link.name].sort());
  assert.equal(await frame.$eval('#table-count', (n) => n.textContent), '2 of 7 kernels');
  // 48 + 24 calls, as the unfiltered table counts them
  assert.deepEqual((await column(frame, 'calls')).map(num), [48, 24]);
  assert.match(page.url(), /p\.gpu_advisor\.names=/);
  // Back returns to the finding
  await page.goBack();
  await frame.waitForSelector('#findings', {state: 'visible'});
  assert.match(page.url(), /p\.gpu_advisor\.finding=tensorcore\.unused/);
  await page.goForward();
  await shown(frame, {});
  assert.equal(await frame.$eval('#table-count', (n) => n.textContent), '2 of 7 kernels');
  await frame.click('#table-names-clear');
  await frame.waitForFunction(() => document.querySelector('#table-count')?.textContent === '7 kernels');
  assert.doesNotMatch(page.url(), /p\.gpu_advisor\.names=/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('operators: grouped by op, sorted by calls; op and input shape as a second grouping', async () => {
  const {context, frame, errors} = await openPanel(
    `${base}/${hashFor({run: TORCH_RUN, host: TORCH_HOST, view: 'tables', table: 'ops'})}`,
  );
  await shown(frame, {sort: 'device_us', order: 'desc'});
  const all = await table({run: TORCH_RUN, host: TORCH_HOST, table: 'ops'});
  assert.equal(await frame.$eval('#table-count', (n) => n.textContent), `${all.total} operators`);
  assert.equal((await column(frame, 'name'))[0], all.rows[0].name);
  await frame.click('#data-table th[data-key="calls"] button');
  await shown(frame, {sort: 'calls', order: 'desc'});
  const calls = (await column(frame, 'calls')).map(num);
  assert.ok(isSorted(calls, true), String(calls));
  const byCalls = await table({run: TORCH_RUN, host: TORCH_HOST, table: 'ops', sort: 'calls', order: 'desc'});
  assert.deepEqual(
    calls.slice(0, 10),
    byCalls.rows.slice(0, 10).map((r) => r.calls),
  );
  await frame.selectOption('#table-group', 'op_shape');
  const byShape = await table({run: TORCH_RUN, host: TORCH_HOST, table: 'ops', group: 'op_shape'});
  await frame.waitForFunction(
    (n) => document.querySelector('#table-count')?.textContent === `${n} operators`,
    byShape.total.toLocaleString('en-US'),
  );
  assert.deepEqual(errors, []);
  await context.close();
});

test("operators: a PyTorch 2.x op's Python frames in the stack column, in full on hover", async () => {
  const {context, frame, errors} = await openPanel(
    `${base}/${hashFor({run: STACKS_RUN, host: STACKS_HOST, view: 'tables', table: 'ops'})}`,
  );
  await shown(frame);
  assert.deepEqual(await column(frame, 'name'), ['aten::mm']);
  // innermost first, only Python frames (the built-in is not one), as the old `Call stack` argument
  const want = 'model.py(12): my_layer;train.py(30): <module>';
  assert.deepEqual(await column(frame, 'stack', 'title'), [want]);
  assert.equal((await table({run: STACKS_RUN, host: STACKS_HOST, table: 'ops'})).rows[0].stack, want);
  assert.deepEqual(errors, []);
  await context.close();
});

test("memory on XSpace: a TensorFlow allocator's stack-reserved and free memory at the peak", async () => {
  const doc = await table({run: HEALTHY_RUN, host: HOST, table: 'memory'});
  const row = doc.rows.find((r) => r.allocator === 'GPU_0_bfc');
  assert.ok(row && row.stack_reserved_bytes !== null && row.free_bytes !== null);
  const {context, frame, errors} = await openPanel(
    `${base}/${hashFor({run: HEALTHY_RUN, host: HOST, view: 'tables', table: 'memory'})}`,
  );
  await frame.waitForSelector('#memory-view[data-loading="false"] .memory-device[data-device="0"] svg', {
    timeout: 60000,
  });
  const facts = await frame.$eval('.memory-device[data-device="0"] .memory-facts', (n) => n.textContent);
  assert.match(facts, / · stack reserved \S+ \S+ · free \S+ \S+ · /);
  assert.doesNotMatch(facts, /peak reserved/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('memory: the GPU curve with its peak where the raw allocator records put it', async () => {
  // the oracle: the trace's [memory] records of GPU 0 (Device Type 1) summed in time order from 0
  const trace = JSON.parse(gunzipSync(readFileSync(TORCH_FILE)));
  const zero = Math.min(...trace.traceEvents.filter((e) => 'ts' in e).map((e) => e.ts));
  let sum = 0;
  let peak = 0;
  let peakTs = 0;
  for (const e of trace.traceEvents
    .filter((e) => e.name === '[memory]' && e.args['Device Type'] === 1 && e.args['Device Id'] === 0)
    .sort((a, b) => a.ts - b.ts)) {
    sum += e.args.Bytes;
    if (sum > peak) [peak, peakTs] = [sum, e.ts];
  }
  assert.equal(peak, 2791636480); // 2.6 GiB
  const {context, page, frame, errors} = await openPanel(
    `${base}/${hashFor({run: TORCH_RUN, host: TORCH_HOST, view: 'tables', table: 'memory'})}`,
  );
  await frame.waitForSelector('#memory-view[data-loading="false"] .memory-device[data-device="0"] svg', {
    timeout: 60000,
  });
  const marker = await frame.$eval('.memory-device[data-device="0"] .peak-marker', (c) => ({...c.dataset}));
  assert.equal(Number(marker.bytes), peak);
  assert.ok(Math.abs(Number(marker.t) - (peakTs - zero) / 1000) < 0.002, `${marker.t} ms`);
  const facts = await frame.$eval('.memory-device[data-device="0"] .memory-facts', (n) => n.textContent);
  assert.match(
    facts,
    /^Peak allocated 2\.6 GiB at 122\.067 ms · peak reserved n\/a · capacity 31\.7 GiB · headroom 29\.1 GiB/,
  );
  assert.match(
    await frame.$eval('.memory-device[data-device="0"] .peak-label', (n) => n.textContent),
    /^peak 2\.6 GiB at 122\.067 ms$/,
  );
  // the allocations before the peak, the last of them the one that reached it
  const ops = await frame.$$eval('.memory-device[data-device="0"] table.around-peak tr', (rows) =>
    rows.slice(1).map((r) => Array.from(r.children).map((td) => td.textContent)),
  );
  assert.ok(ops.length > 0);
  assert.deepEqual(ops[ops.length - 1], ['aten::empty', '54.0 MiB', '122.067 ms']);
  // the note says how allocated memory is counted on this old trace
  assert.match(await frame.$eval('.table-note', (n) => n.textContent), /no allocator totals/);
  await page.screenshot({path: join(SHOTS, 'tables-memory.png')});
  assert.deepEqual(errors, []);
  await context.close();
});

test('input pipeline: the tf.data stages, the slowest marked, prefetch and parallel map present', async () => {
  const {context, frame, errors} = await openPanel(
    `${base}/${hashFor({run: INPUT_RUN, view: 'tables', table: 'input'})}`,
  );
  await shown(frame, {sort: 'self_us', order: 'desc'});
  const stages = await column(frame, 'stage', 'title');
  assert.deepEqual(stages, [
    'Iterator::Root::Prefetch::ParallelMapV2::Shuffle::TFRecord',
    'Iterator::Root::Prefetch::ParallelMapV2',
    'Iterator::Root::Prefetch::ParallelMapV2::Shuffle',
  ]);
  // the reader is the slowest: 428 ms of its own over 30 calls
  assert.equal(await frame.$eval('#data-table tr.vt-row.slowest td', (n) => n.getAttribute('title')), stages[0]);
  assert.equal(await frame.$$eval('#data-table .slowest-badge', (n) => n.length), 1);
  assert.deepEqual((await column(frame, 'self_us')).map(num), [428469.7, 150, 150]);
  assert.equal(await frame.$eval('#input-options', (n) => n.textContent), 'prefetch: present · parallel map: present');
  assert.deepEqual(errors, []);
  await context.close();
});

test('idle time: per stream by cause, and the launch delay', async () => {
  const {context, page, frame, errors} = await openPanel(
    `${base}/${hashFor({run: TORCH_RUN, host: TORCH_HOST, view: 'tables', table: 'idle'})}`,
  );
  await shown(frame, {sort: 'idle_us', order: 'desc'});
  const a = await table({run: TORCH_RUN, host: TORCH_HOST, table: 'idle'});
  const r = a.rows[0];
  assert.deepEqual(await column(frame, 'stream'), [String(r.stream)]);
  // the causes add up to the idle time, and the bar splits it the same way
  assert.ok(Math.abs(r.host_wait_us + r.kernel_wait_us + r.other_us - r.idle_us) < 1);
  const widths = await frame.$$eval('#data-table .idle-bar span', (n) =>
    n.map((s) => [s.dataset.cause, parseFloat(s.style.width)]),
  );
  assert.deepEqual(
    widths.map(([k]) => k),
    ['host_wait_us', 'kernel_wait_us'].filter((k) => r[k] > 0),
  );
  assert.ok(Math.abs(widths[0][1] - (100 * r.host_wait_us) / r.idle_us) < 0.01);
  const d = a.launch_delay;
  const us = (v) => `${v.toLocaleString('en-US', {minimumFractionDigits: 1, maximumFractionDigits: 1})} µs`;
  assert.equal(
    await frame.$eval('#launch-delay', (n) => n.textContent),
    `Launch delay over ${d.count.toLocaleString('en-US')} launches: mean ${us(d.mean_us)}, p50 ${us(d.p50_us)}, ` +
      `p95 ${us(d.p95_us)}, max ${us(d.max_us)}`,
  );
  await page.evaluate(() => document.body.classList.add('dark-mode'));
  await frame.waitForFunction(() => document.body.classList.contains('dark'));
  await page.screenshot({path: join(SHOTS, 'tables-idle-dark.png')});
  assert.deepEqual(errors, []);
  await context.close();
});

test('keyboard: arrows move between the tables, Enter on a column header sorts by it', async () => {
  const {context, page, frame, errors} = await openPanel(
    `${base}/${hashFor({run: FP32_RUN, view: 'tables', table: 'kernels'})}`,
  );
  await shown(frame, {sort: 'total_us'});
  await frame.focus('.table-tab[data-table="kernels"]');
  await page.keyboard.press('ArrowRight');
  await shown(frame, {sort: 'device_us', order: 'desc'});
  assert.equal(await frame.evaluate(() => document.activeElement?.dataset.table), 'ops');
  assert.match(page.url(), /p\.gpu_advisor\.table=ops/);
  await page.keyboard.press('ArrowLeft');
  await shown(frame, {sort: 'total_us'});
  await frame.focus('#data-table th[data-key="mean_us"] button');
  await page.keyboard.press('Enter');
  await shown(frame, {sort: 'mean_us', order: 'desc'});
  const means = (await column(frame, 'mean_us')).map(num);
  assert.ok(isSorted(means, true), String(means));
  assert.equal(means[0], 1321); // the scudnn splitK kernel: 1,321.0 µs per call
  assert.deepEqual(errors, []);
  await context.close();
});
