// Kernel names told apart at 1,400 px (issue 48), on real GPT-2 captures of an H200
// (tests/data/gpu_pairs): the ten largest kernels of a run read as ten different names without
// scrolling sideways. Before, the name column was 124-226 px of a 1,340 px table and names were cut to
// about 26-29 characters in their middle, so GEMMs of different tiles and layouts all read
// `sm90_xmma_…_segment_k_off` or `sm80_xmma_…_aligna4_alignc4`. Each is cut where it shares its words
// with the names beside it; its short name and full name stay on hover and in the table's exports.
import assert from 'node:assert/strict';
import {cpSync} from 'node:fs';
import {join} from 'node:path';
import {test} from 'node:test';
import {ROOT, SHOTS, getJson, hashFor, openPanel, serveLogdir, waitFor} from './harness.mjs';

const PAIRS = join(ROOT, 'tests', 'data', 'gpu_pairs');
const RUNS = ['gpt2_fp32', 'gpt2_tf32'];

let base;
let browser;

serveLogdir(
  'kernelnames',
  (logdir) => {
    for (const run of RUNS) cpSync(join(PAIRS, run), join(logdir, run), {recursive: true});
  },
  (s) => ({base, browser} = s),
);

const at1400 = (url) => openPanel(browser, url, {width: 1400, height: 900});

for (const run of RUNS)
  test(`${run} at 1,400 px: the ten largest kernels read as ten different names, no sideways scroll`, async () => {
    const host = (await getJson(base, 'runs', {})).runs.find((r) => r.run === run).hosts[0].host;
    const {context, page, frame, errors} = await at1400(`${base}/${hashFor({run, view: 'tables', table: 'kernels'})}`);
    await frame.waitForSelector('#data-table td.name[data-short]', {timeout: 180000});
    const answer = await getJson(base, 'table', {run, host, table: 'kernels', limit: 10});
    const fit = await frame.evaluate(() => {
      const s = document.querySelector('.vt-scroll');
      return {scroll: s.scrollWidth, client: s.clientWidth};
    });
    assert.ok(fit.scroll <= fit.client, JSON.stringify(fit));
    const cells = await frame.$$eval('#data-table td.name[data-short]', (tds) =>
      tds.slice(0, 10).map((td) => ({text: td.textContent, short: td.dataset.short, title: td.getAttribute('title')})),
    );
    assert.equal(cells.length, 10);
    // the largest ten by total time, as the route ranks them; each shown as ten different names
    assert.deepEqual(
      cells.map((c) => c.title),
      answer.rows.map((r) => r.name),
    );
    assert.equal(new Set(cells.map((c) => c.text)).size, 10, JSON.stringify(cells.map((c) => c.text)));
    for (const [i, c] of cells.entries()) {
      assert.equal(c.short, answer.rows[i].short_name);
      // what is shown is the short name's own parts, in order: its first word and its last kept
      const parts = c.text
        .split('…')
        .flatMap((p) => p.split('_'))
        .filter(Boolean);
      let from = 0;
      for (const p of parts) {
        const at = c.short.indexOf(p, from);
        assert.ok(at >= 0, `${c.text}: ${p} not in ${c.short}`);
        from = at + p.length;
      }
      assert.ok(c.short.startsWith(parts[0]) && c.short.endsWith(parts[parts.length - 1]), c.text);
    }
    // a GEMM's tile and layout stay in view (`_nt_`, `128x256`): what sets four GEMMs apart
    assert.ok(
      cells.filter((c) => /_(nn|nt|tn)_/.test(c.text) && /\d+x\d+/.test(c.text)).length >= 4,
      JSON.stringify(cells.map((c) => c.text)),
    );
    await page.screenshot({path: join(SHOTS, `kernel-names-${run}-1400.png`)});
    assert.deepEqual(errors, []);
    await context.close();
  });

test('precision.mixed-off on fp32 GPT-2 shows TF32 with its own saving beside bf16', async () => {
  const host = (await getJson(base, 'runs', {})).runs.find((r) => r.run === 'gpt2_fp32').hosts[0].host;
  const report = await getJson(base, 'report', {run: 'gpt2_fp32', host});
  const mixed = report.checks.find((c) => c.id === 'precision.mixed-off');
  const {context, frame, errors} = await at1400(
    `${base}/${hashFor({run: 'gpt2_fp32', host, finding: 'precision.mixed-off'})}`,
  );
  const alt = await frame.waitForSelector('.finding[data-check="precision.mixed-off"] .whatif.alternative', {
    timeout: 180000,
  });
  const text = await alt.evaluate((n) => n.textContent);
  const tf32 = mixed.alternatives.find((a) => a.change === 'tf32');
  assert.match(text, /^Or tf32 alone: saves [\d.]+ ms\/step: step [\d.]+ → [\d.]+ ms/);
  assert.ok(text.includes(`step ${tf32.step_ms.toFixed(1)} → ${tf32.new_step_ms.toFixed(1)} ms`), text);
  assert.deepEqual(errors, []);
  await context.close();
});
