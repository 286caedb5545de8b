// Browser tests of the kernel figures in the headline (kernels running, est. SM efficiency, est.
// achieved occupancy per GPU) and per step in the breakdown: a real TensorBoard over one real PyTorch
// ResNet-50 trace, one rank of a real NCCL job (no SM count: its kernels' recorded blocks per SM give
// SM efficiency), the same rank with the kernels' `blocks per SM` taken out (no SM efficiency) and an
// XSpace demo run (no occupancy).
// What the user sees must be the report's JSON; the report's figures are checked against
// torch-tb-profiler 0.4.3's own on these files in tests/test_pytorch_plugin_oracle.py
// (test_real_traces_kernel_figures_agree_with_the_plugin).
import assert from 'node:assert/strict';
import {cpSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs';
import {gunzipSync} from 'node:zlib';
import {join} from 'node:path';
import {test} from 'node:test';
import {ROOT, SHOTS, getJson, hashFor, openPanel as open, serveLogdir} from './harness.mjs';

const TORCH_RUN = 'resnet50';
const TORCH_HOST = 'worker0.1623143089861';
const RANK_RUN = 'two_ranks';
const RANK_HOST = 'rank0.1700000000000';
const BARE_RUN = 'two_ranks_without_blocks_per_sm';
const XSPACE_RUN = '17_multi_gpu_partial_capture/2026_11_22_10_00_00';
const XSPACE_HOST = 'bert-8gpu-host';
const FIGURES = ['gpu_utilization_pct', 'sm_efficiency_pct', 'achieved_occupancy_pct'];
const LABELS = ['kernels running', 'est. SM efficiency', 'est. achieved occupancy'];

let base;
let browser;

// one file per PyTorch run: a plain TensorBoard also loads torch-tb-profiler, a process per trace file
serveLogdir(
  'kernelfigures',
  (logdir) => {
    const data = join(ROOT, 'tests', 'data', 'pytorch');
    for (const [run, from, host] of [
      [TORCH_RUN, 'resnet50_num_workers_0', TORCH_HOST],
      [RANK_RUN, 'two_ranks_of_128', RANK_HOST],
    ]) {
      mkdirSync(join(logdir, run), {recursive: true});
      cpSync(join(data, from, `${host}.pt.trace.json.gz`), join(logdir, run, `${host}.pt.trace.json.gz`));
    }
    // the rank again, its kernels' recorded `blocks per SM` taken out: nothing left to estimate SM efficiency from
    const doc = JSON.parse(
      gunzipSync(readFileSync(join(data, 'two_ranks_of_128', `${RANK_HOST}.pt.trace.json.gz`))).toString(),
    );
    for (const e of doc.traceEvents) if (e.args) delete e.args['blocks per SM'];
    mkdirSync(join(logdir, BARE_RUN), {recursive: true});
    writeFileSync(join(logdir, BARE_RUN, `${RANK_HOST}.pt.trace.json`), JSON.stringify(doc));
    const demo = XSPACE_RUN.split('/')[0];
    cpSync(join(ROOT, 'demo_logs', demo), join(logdir, demo), {recursive: true});
  },
  (s) => ({base, browser} = s),
);

const pct = (v) => `${v.toFixed(1)}%`; // the report's number as fmtPct and the text report write it

/** The kernel figure cells of each GPU row of the headline: {gpu: {key: {text, title}}}. */
async function figureCells(frame) {
  await frame.waitForSelector('#headline table.per-gpu td[data-key="sm_efficiency_pct"]', {timeout: 120000});
  return frame.evaluate((keys) => {
    const out = {};
    for (const tr of document.querySelectorAll('#headline table.per-gpu tr[data-gpu]')) {
      out[tr.dataset.gpu] = {};
      for (const k of keys) {
        const td = tr.querySelector(`td[data-key="${k}"]`);
        out[tr.dataset.gpu][k] = {text: td.textContent, title: td.getAttribute('title')};
      }
    }
    return out;
  }, FIGURES);
}

test('a real PyTorch trace: each GPU and each step shows the report’s kernel figures, defined on hover', async () => {
  const {context, frame, errors} = await open(browser, `${base}/${hashFor({run: TORCH_RUN})}`);
  const cells = await figureCells(frame);
  const report = await getJson(base, 'report', {run: TORCH_RUN, host: TORCH_HOST});
  const {definitions} = await getJson(base, 'checks', {});
  assert.deepEqual(
    Object.keys(cells),
    report.headline.per_gpu.map((g) => String(g.device_id)),
  );
  for (const g of report.headline.per_gpu)
    for (const k of FIGURES) {
      // this V100 trace has all three (deviceProperties give 80 SMs; kernels their occupancy)
      assert.equal(typeof g[k], 'number', k);
      assert.equal(cells[g.device_id][k].text, pct(g[k]), k);
      assert.equal(cells[g.device_id][k].title, definitions[k]);
      assert.ok(definitions[k].length > 40, k);
    }
  // the headers carry the same definitions, and their labels are the text report's words
  const heads = await frame.$$eval('#headline table.per-gpu th', (ths) =>
    ths.map((th) => [th.textContent, th.getAttribute('title')]),
  );
  for (const [i, k] of FIGURES.entries())
    assert.ok(
      heads.some(([text, title]) => text === LABELS[i] && title === definitions[k]),
      JSON.stringify(heads),
    );
  assert.equal(await frame.$$eval('#headline .kernel-na', (n) => n.length), 0);
  await (await frame.$('#headline')).screenshot({path: join(SHOTS, 'headline-kernel-figures.png')});

  // per step: the breakdown's hover on each step (the GPU's own steps: one GPU)
  const steps = report.step_breakdown;
  assert.ok(steps.length >= 2, String(steps.length));
  const titles = await frame.$$eval('#breakdown .step-bar', (bars) =>
    bars.map((b) => [b.dataset.step, b.querySelector(':scope > rect:last-of-type title').textContent]),
  );
  assert.equal(titles.length, steps.length);
  for (const [i, s] of steps.entries()) {
    assert.equal(titles[i][0], String(s.step));
    const line = FIGURES.map((k, j) => `${LABELS[j]} ${pct(s[k])}`).join(' · ');
    assert.ok(titles[i][1].includes(line), `${titles[i][1]} lacks ${line}`);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('a rank with no SM count shows the SM efficiency its kernels record', async () => {
  const {context, frame, errors} = await open(browser, `${base}/${hashFor({run: RANK_RUN, host: RANK_HOST})}`);
  const cells = await figureCells(frame);
  const report = await getJson(base, 'report', {run: RANK_RUN, host: RANK_HOST});
  assert.equal(report.devices[0].sm_count, null);
  for (const g of report.headline.per_gpu) {
    // torch-tb-profiler gives 20.8% on this rank (tests/test_pytorch_plugin_oracle.py)
    assert.equal(cells[g.device_id].sm_efficiency_pct.text, '20.8%');
    assert.equal(cells[g.device_id].sm_efficiency_pct.text, pct(g.sm_efficiency_pct));
  }
  assert.equal(await frame.$$eval('#headline .kernel-na', (n) => n.length), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('n/a with the reason: a rank with no SM count nor blocks per SM, an XSpace capture with no occupancy', async () => {
  for (const [run, host, key, reason] of [
    [
      BARE_RUN,
      RANK_HOST,
      'sm_efficiency_pct',
      "the trace gives neither the GPU's SM count nor its kernels' blocks per SM",
    ],
    [XSPACE_RUN, XSPACE_HOST, 'achieved_occupancy_pct', 'no kernel in the trace gives its achieved occupancy'],
  ]) {
    const {context, frame, errors} = await open(browser, `${base}/${hashFor({run, host})}`);
    const cells = await figureCells(frame);
    const report = await getJson(base, 'report', {run, host});
    const gpus = report.headline.per_gpu;
    assert.ok(gpus.length >= 1);
    for (const g of gpus) {
      assert.equal(g[key], null, `${run}: ${key}`);
      assert.equal(cells[g.device_id][key].text, 'n/a');
      assert.ok(cells[g.device_id][key].title.startsWith(`n/a: ${reason}.`), cells[g.device_id][key].title);
      // the figures it has are shown as the report gives them
      for (const k of FIGURES.filter((k) => k !== key)) assert.equal(cells[g.device_id][k].text, pct(g[k]));
    }
    const label = LABELS[FIGURES.indexOf(key)];
    const notes = await frame.$$eval('#headline .kernel-na', (n) => n.map((p) => p.textContent));
    assert.deepEqual(notes, [`${label} n/a on GPU ${gpus.map((g) => g.device_id).join(', GPU ')}: ${reason}.`]);
    assert.deepEqual(errors, []);
    await context.close();
  }
});
