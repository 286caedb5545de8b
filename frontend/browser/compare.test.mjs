// The Before/after view on real H200 pairs (tests/data/gpu_pairs): the verdict names its basis (the
// captured steps, or the steps without the profiler with the model's measured error) as the command's
// text does, an uncertain verdict is not coloured as a speed-up, durations under a millisecond read in
// µs, and beside the verdict the before-run's prediction for the findings gone against what the step did
// (on held-out pairs, tests/support/pairs.py: loader_w0 → loader_w4, rn50_b64_sync → rn50_b64_fp32).
import assert from 'node:assert/strict';
import {cpSync} from 'node:fs';
import {join} from 'node:path';
import {test} from 'node:test';
import {ROOT, SHOTS, getJson, hashFor, openPanel, serveLogdir} from './harness.mjs';

const RUNS = ['loader_w0', 'loader_w4', 'rn50_b64_fp32', 'rn50_b64_bf16', 'rn50_b64_sync', 'jax_slow_input', 'jax_jit'];

let base;
let browser;

serveLogdir(
  'compare',
  (logdir) => {
    for (const r of RUNS) cpSync(join(ROOT, 'tests', 'data', 'gpu_pairs', r), join(logdir, r), {recursive: true});
  },
  (s) => ({base, browser} = s),
);

/** The run's name as the tab lists it (a JAX capture's folder holds its session) and its one host. */
async function named(prefix) {
  const {runs} = await getJson(base, 'runs', {});
  const r = runs.find((x) => x.run === prefix || x.run.startsWith(prefix + '/'));
  return {run: r.run, host: r.hosts[0].host};
}

async function comparison(before, after) {
  const [b, a] = [await named(before), await named(after)];
  const opened = await openPanel(
    browser,
    `${base}/${hashFor({run: a.run, host: a.host, compare: b.run, compare_host: b.host})}`,
  );
  await opened.frame.waitForSelector('#comparison', {timeout: 120000});
  return opened;
}

const text = (frame, selector) => frame.$eval(selector, (n) => n.textContent.replace(/\s+/g, ' ').trim());

test('DataLoader 0 -> 4 workers: faster on the captured steps, in green; input wait in ms, launch wait in µs', async () => {
  const {context, page, frame, errors} = await comparison('loader_w0', 'loader_w4');
  assert.match(
    await text(frame, '#compare-steps'),
    /^Step time 37\.22 ms ± 4\.58 ms \(3 steps\) → 6\.64 ms ± 475 µs \(3 steps\), as captured: −30\.58 ms \(-82\.2%\) per step, 95% interval −35\.86 ms to −27\.63 ms\.$/,
  );
  const basis = await text(frame, '#compare-basis');
  assert.match(
    basis,
    /^Verdict: faster, on the captured steps: −30\.58 ms \(-82\.2%\), interval −37\.39 ms to −26\.11 ms \(the steps' 95% interval, widened by the profiler's cost, 1\.80 ms → 278 µs a step\)\.$/,
  );
  assert.equal(await frame.$eval('#compare-basis strong', (n) => getComputedStyle(n).color), 'rgb(24, 128, 56)');
  // the breakdown: the input wait's 28.74 ms gone; the launch wait's 0.399 and 0.025 ms in µs
  const row = (c) => frame.$eval(`tr[data-category="${c}"]`, (n) => [...n.cells].slice(1).map((x) => x.textContent));
  assert.deepEqual(await row('host_input_wait'), ['28.74 ms', '0 ms', '−28.74 ms']);
  assert.deepEqual(await row('kernel_launch_wait'), ['399 µs', '24.9 µs', '−374 µs']);
  assert.deepEqual(await row('memcpy_h2d'), ['574 µs', '118 µs', '−456 µs']);
  const verdicts = await frame.$$eval('table.compare-checks tr[data-check]', (n) =>
    n.map((r) => [r.dataset.check, r.dataset.verdict]),
  );
  assert.deepEqual(verdicts, [
    ['precision.mixed-off', 'exposed'],
    ['input.bound', 'fixed'],
    ['steps.gaps', 'fixed'],
  ]);
  assert.match(await text(frame, 'tr[data-check="input.bound"] .noise'), /^input wait: 28\.74 ms → 0 ms per step/);
  // the advisor's prediction judged by what the step did, in the text's colour: it judges the prediction
  assert.equal(
    await text(frame, '#compare-realised'),
    'Predicted against realised: input.bound gone: input predicted to save 26.2 ms a step (21.8–31.6), ' +
      'realised 26.7 (33.0 → 6.4 ms, both without the profiler): inside the range.',
  );
  const ink = (selector) => frame.$eval(selector, (n) => getComputedStyle(n).color);
  assert.equal(await ink('#compare-realised strong'), await ink('#compare-steps strong'));
  await page.screenshot({path: join(SHOTS, 'compare-basis.png')});
  assert.deepEqual(errors, []);
  await context.close();
});

test('bf16 on a host-bound ResNet-50: uncertain, on the steps without the profiler, not in green', async () => {
  const {context, frame, errors} = await comparison('rn50_b64_fp32', 'rn50_b64_bf16');
  const basis = await text(frame, '#compare-basis');
  assert.match(
    basis,
    /^Verdict: uncertain, on the steps without the profiler, as the model estimates them \(33\.09 ms → 32\.69 ms\): −400 µs \(-1\.2%\), interval −26\.46 ms to \+25\.66 ms \(the model's measured error: −28\.6% to \+64\.4% before, −28\.6% to \+64\.4% after\); the profiler's cost differs between the captures \(12\.04 → 15\.33 ms a step\)/,
  );
  assert.equal(await frame.$eval('#compare-basis', (n) => n.className), 'step-uncertain');
  const colour = await frame.$eval('#compare-basis strong', (n) => getComputedStyle(n).color);
  assert.notEqual(colour, 'rgb(24, 128, 56)');
  assert.match(
    await text(frame, '#compare-summary'),
    /EXPOSED xla\.off, steps\.host-work, kernels\.small, kernels\.launch-bound/i,
  );
  assert.deepEqual(errors, []);
  await context.close();
});

test('jax.jit after a slow input: the step and the launch wait under a millisecond read in µs', async () => {
  const {context, frame, errors} = await comparison('jax_slow_input', 'jax_jit');
  assert.match(await text(frame, '#compare-steps'), /→ 414 µs ± 149 µs \(5 steps\)/);
  assert.match(await text(frame, '#compare-basis'), /^Verdict: faster, on the captured steps: −10\.60 ms \(-96\.2%\)/);
  const row = await frame.$eval('tr[data-category="kernel_launch_wait"]', (n) =>
    [...n.cells].slice(1).map((x) => x.textContent),
  );
  assert.deepEqual(row, ['208 µs', '84.5 µs', '−124 µs']);
  assert.deepEqual(errors, []);
  await context.close();
});

test('syncs taken out of a host-bound ResNet-50: the prediction beside a step the model cannot tell', async () => {
  // the profiler costs 12.04 ms of the after-run's captured step: the change of the steps without it is
  // within the model's measured error, so the line gives the range that error allows, not a judgement
  const {context, frame, errors} = await comparison('rn50_b64_sync', 'rn50_b64_fp32');
  assert.match(await text(frame, '#compare-basis'), /^Verdict: uncertain, on the steps without the profiler/);
  assert.equal(
    await text(frame, '#compare-realised'),
    'Predicted against realised: steps.syncs gone: syncs predicted to save 0.78 ms a step (0.32–3.27), ' +
      "realised 0.06 (33.15 → 33.09 ms, both without the profiler): cannot tell, the model's measured error " +
      'allows a realised -26.18 to +26.30 ms.',
  );
  assert.deepEqual(errors, []);
  await context.close();
});
