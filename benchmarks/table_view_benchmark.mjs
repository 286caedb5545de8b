// The panel's kernels table on a 100,000-kernel PyTorch trace (100,000 distinct kernel names: 100,000
// rows), served by a real TensorBoard, in Debian's Chromium: how long a sort, a filter and a jump to
// the middle take from the user's action until the rows are shown (performance.now() in the page), and
// how many rows are in the DOM. Each time is split into the route's own (its Server-Timing) and the
// browser's (request sent, answer parsed, rows built and laid out).
//
//   node benchmarks/table_view_benchmark.mjs [--kernels 100000] [--repeat 5]
//
// Needs the frontend's node_modules (playwright-core) and the project's .venv (or PYTHON=...).
import {execFileSync} from 'node:child_process';
import {mkdirSync, mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {parseArgs} from 'node:util';
import {PYTHON, ROOT, hashFor, launchBrowser, openPanel, startTensorBoard} from '../frontend/browser/harness.mjs';

const {values} = parseArgs({
  options: {
    kernels: {type: 'string', default: '100000'},
    repeat: {type: 'string', default: '5'},
  },
});
const KERNELS = Number(values.kernels);
const REPEAT = Number(values.repeat);
const RUN = 'bench';
const HOST = 'worker0.1'; // the file's name before .pt.trace.json.gz

// kernels with distinct templated names, each launched by an ATen op, in 10 profiler steps
const WRITE = `
import random, sys
from support.kineto_writer import KinetoWriter
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(0)
w = KinetoWriter()
ops = ['aten::conv2d', 'aten::mm', 'aten::add_', 'aten::relu_', 'aten::batch_norm']
t = 1000.0
steps = 10
for s in range(steps):
    start = t
    for i in range(s * n // steps, (s + 1) * n // steps):
        dur = rng.uniform(2.0, 40.0)
        w.op(ops[i % len(ops)], t, 8.0)
        w.kernel(f"void at::native::kernel_{i % 97}<float, {i % 256}>(at::TensorIterator&, int)#{i}", t + 1.0, t + 9.0, dur)
        t += dur + 10.0
    w.step(s, start - 5.0, t - start + 10.0)
    t += 50.0
with open(path, 'wb') as f:
    f.write(w.to_bytes())
`;

const root = mkdtempSync(join(tmpdir(), 'tbga-table-bench-'));
const logdir = join(root, 'logs');
mkdirSync(join(logdir, RUN), {recursive: true});
let tb;
let browser;
try {
  let t = performance.now();
  const file = join(logdir, RUN, `${HOST}.pt.trace.json.gz`);
  execFileSync(PYTHON, ['-c', WRITE, String(KERNELS), file], {
    env: {...process.env, PYTHONPATH: [ROOT, join(ROOT, 'tests')].join(':')}, // tests/support: the writers
  });
  console.log(
    `trace: ${KERNELS.toLocaleString('en-US')} kernels written in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  let base;
  ({proc: tb, base} = await startTensorBoard(logdir));
  t = performance.now();
  for (;;) {
    const r = await fetch(`${base}/data/plugin/gpu_advisor/table?run=${RUN}&host=${HOST}&table=kernels&limit=1`);
    if (r.status === 200) break;
    if (r.status !== 202) throw new Error(`table: ${r.status} ${await r.text()}`);
  }
  console.log(`analysis and the first table answer: ${((performance.now() - t) / 1000).toFixed(1)} s`);
  browser = await launchBrowser();
  const {frame, errors} = await openPanel(
    browser,
    `${base}/${hashFor({run: RUN, host: HOST, view: 'tables', table: 'kernels'})}`,
  );
  await frame.waitForSelector('#data-table[data-loading="false"][data-total]', {
    timeout: 120000,
  });
  const total = Number(await frame.$eval('#data-table', (n) => n.dataset.total));
  console.log(`rows: ${total.toLocaleString('en-US')}`);

  // one user action, timed in the page until the rows it asks for are shown
  const timed = (action) =>
    frame.evaluate(async (action) => {
      const table = document.querySelector('#data-table');
      const scroller = document.querySelector('.vt-scroll');
      const filter = document.querySelector('#table-filter');
      const t0 = performance.now();
      let done;
      if (action.sort) {
        document.querySelector(`th[data-key="${action.sort}"] button`).click();
        done = () => table.dataset.sort === action.sort && table.dataset.order === action.order;
      } else if (action.q !== undefined) {
        filter.value = action.q;
        filter.dispatchEvent(new Event('input'));
        filter.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'}));
        done = () => table.dataset.q === action.q;
      } else {
        scroller.scrollTop = action.row * 24;
        done = () => Number(table.dataset.first) <= action.row && Number(table.dataset.last) > action.row;
      }
      for (;;) {
        await new Promise((r) => requestAnimationFrame(r));
        if (done() && table.dataset.loading === 'false' && !document.querySelector('tr.vt-row.pending')) break;
      }
      const end = performance.now();
      // the route's own time (Server-Timing) and the browser's after the last answer came
      const answers = performance
        .getEntriesByType('resource')
        .filter((e) => e.name.includes('/gpu_advisor/table?') && e.startTime >= t0);
      performance.clearResourceTimings();
      const server = Math.max(0, ...answers.flatMap((e) => e.serverTiming.map((x) => x.duration)));
      const lastAnswer = Math.max(t0, ...answers.map((e) => e.responseEnd));
      return {
        ms: end - t0,
        server,
        browser: end - lastAnswer + (answers.length ? answers[0].startTime - t0 : 0),
        rowsInDom: document.querySelectorAll('tr.vt-row').length,
        total: Number(table.dataset.total),
        first: document.querySelector('tr.vt-row td')?.getAttribute('title') ?? '',
      };
    }, action);

  const report = async (label, actions) => {
    const runs = [];
    for (let i = 0; i < REPEAT; i++) for (const a of actions) runs.push(await timed(a));
    const median = (k) => {
      const xs = runs.map((r) => r[k]).sort((a, b) => a - b);
      return xs[Math.floor(xs.length / 2)].toFixed(1);
    };
    const max = Math.max(...runs.map((r) => r.ms)).toFixed(1);
    const last = runs[runs.length - 1];
    console.log(
      `${label}: median ${median('ms')} ms (route ${median('server')} ms, browser ${median('browser')} ms), ` +
        `max ${max} ms; ${runs.length} runs, ${last.total.toLocaleString('en-US')} rows match, ` +
        `${last.rowsInDom} rows in the DOM`,
    );
  };
  await report('sort by mean time (desc/asc)', [
    {sort: 'mean_us', order: 'desc'},
    {sort: 'mean_us', order: 'asc'},
  ]);
  await report('sort by kernel name (asc/desc)', [
    {sort: 'short_name', order: 'asc'},
    {sort: 'short_name', order: 'desc'},
  ]);
  await report('filter (type, Enter)', [{q: 'kernel_42<'}, {q: '#9999'}, {q: ''}]);
  await report('jump to a row in the middle and back', [{row: Math.floor(total / 2)}, {row: 0}]);
  if (errors.length) console.log('page errors:', errors);
} finally {
  await browser?.close();
  tb?.kill();
  rmSync(root, {recursive: true, force: true});
}
