// The job view at scale: a synchronous DDP job of N ranks (default 1,024; scripts/write_ddp_job.py,
// small Kineto traces), served by a real TensorBoard with its own plugins and ours only (no
// torch-tb-profiler, which starts a process per file), opened in Chromium on the job view. The analyses
// are waited for and not timed; what is timed is the panel: from the answer's last byte (the browser's
// resource timing) to the heat map and the table painted, and from the parsed answer to painted.
//
//   PYTHON=.venv/bin/python node benchmarks/jobview_benchmark.mjs [RANKS] [REPEATS]
import {execFileSync} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {PYTHON, ROOT, hashFor, launchBrowser, openPanel, startTensorBoard} from '../frontend/browser/harness.mjs';

const RANKS = Number(process.argv[2] ?? 1024);
const REPEATS = Number(process.argv[3] ?? 3);
const RUN = `ddp_${RANKS}_ranks`;
const dir = mkdtempSync(join(tmpdir(), 'gpu-advisor-jobview-'));
const slow = Math.floor((2 * RANKS) / 3);
execFileSync(PYTHON, [
  join(ROOT, 'scripts', 'write_ddp_job.py'),
  dir,
  RUN,
  '--ranks',
  String(RANKS),
  '--slow-rank',
  String(slow),
  '--small',
]);
const {proc, base} = await startTensorBoard(dir, {onlyOurs: true});
let browser;
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    proc.kill();
    rmSync(dir, {recursive: true, force: true});
    process.exit(130);
  });
try {
  const t0 = Date.now();
  let bytes = 0;
  for (;;) {
    const r = await fetch(`${base}/data/plugin/gpu_advisor/report?run=${RUN}&wait=60`);
    const body = await r.arrayBuffer();
    if (r.status === 200) {
      bytes = body.byteLength;
      break;
    }
    if (r.status !== 202) throw new Error(`report: ${r.status} ${new TextDecoder().decode(body).slice(0, 300)}`);
  }
  console.log(
    `${RANKS} ranks analysed in ${((Date.now() - t0) / 1000).toFixed(0)} s (not timed below); answer ${(bytes / 1e6).toFixed(1)} MB`,
  );
  browser = await launchBrowser();
  for (let i = 0; i < REPEATS; i++) {
    const {context, frame} = await openPanel(browser, `${base}/${hashFor({run: RUN, host: '*'})}`);
    await frame.waitForSelector('#all-hosts[data-render-ms]', {
      timeout: 300000,
    });
    const t = await frame.evaluate((slowRank) => {
      const view = document.querySelector('#all-hosts');
      const answer = performance
        .getEntriesByType('resource')
        .filter((e) => e.name.includes('/report?') && !e.name.includes('host='))
        .pop();
      return {
        arrived: Number(view.dataset.paintedAt) - answer.responseEnd,
        parsed: Number(view.dataset.renderMs),
        gz: answer.encodedBodySize,
        cells: Number(document.querySelector('#rank-strip').dataset.ranks),
        rows: document.querySelectorAll('#rank-table tr.host-row').length,
        straggler: document.querySelector('#rank-table tr.straggler')?.dataset.rank === String(slowRank),
      };
    }, slow);
    console.log(
      `run ${i + 1}: answer (${(t.gz / 1e6).toFixed(1)} MB gzipped) to picture painted ${t.arrived.toFixed(0)} ms; ` +
        `parsed answer to painted ${t.parsed.toFixed(0)} ms; ${t.cells} cells, ${t.rows} rows, straggler rank ${slow} marked: ${t.straggler}`,
    );
    await context.close();
  }
} finally {
  await browser?.close();
  proc.kill();
  rmSync(dir, {recursive: true, force: true});
}
