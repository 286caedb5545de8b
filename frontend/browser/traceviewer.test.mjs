// The advice in a trace viewer, in a real TensorBoard under --path_prefix and Debian's Chromium: a
// finding's "Open in trace viewer" opens the profile plugin's trace viewer page on the advisor's own
// export, and what the viewer has loaded and shows is asserted (its model and visible window), not the
// link; the Profile tab link opens the Profile tab, whose own trace data holds the evidence's events
// inside the link's window. Runs: three demo runs and a tensorflow-cpu capture made here.
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {cpSync} from 'node:fs';
import {join} from 'node:path';
import {test} from 'node:test';
import {PYTHON, ROOT, SHOTS, getJson, hashFor, openPanel, serveLogdir, waitFor} from './harness.mjs';

const PREFIX = '/tb';
let base;
let browser;
let captureRun;

serveLogdir(
  'viewer',
  (logdir) => {
    cpSync(join(ROOT, 'demo_logs'), logdir, {recursive: true});
    // a real capture: tf.data whose map sleeps 40 ms a batch, an input-bound run
    execFileSync(
      PYTHON,
      [join(ROOT, 'scripts', 'capture_tf_cpu.py'), join(logdir, 'real_capture'), '--steps', '6', '--slow-map-ms', '40'],
      {stdio: 'ignore', env: {...process.env, TF_CPP_MIN_LOG_LEVEL: '3'}},
    );
  },
  async (s) => {
    ({base, browser} = s);
    const runs = await getJson(base, 'runs', {});
    captureRun = runs.runs.find((r) => r.run.startsWith('real_capture/')).run;
  },
  {prefix: PREFIX},
);

/** What the viewer page has loaded and shows: its visible window (ms) and, for each process, each
 * thread's slices (title, start and end in ms). */
async function viewerState(viewer) {
  await viewer.waitForFunction(
    () => {
      const el = document.querySelector('tf-trace-viewer');
      return el?._traceModel && el._traceViewer?.trackView?.viewport?.currentDisplayTransform;
    },
    null,
    {timeout: 60000},
  );
  await viewer.waitForTimeout(300);
  return viewer.evaluate(() => {
    const el = document.querySelector('tf-trace-viewer');
    const range = el._trackViewRange(el._traceViewer.trackView);
    const processes = Object.values(el._traceModel.processes).map((p) => ({
      pid: p.pid,
      name: p.name,
      threads: Object.values(p.threads).map((t) => ({
        name: t.name,
        slices: t.sliceGroup.slices.map((s) => [s.title, s.start, s.start + s.duration]),
      })),
    }));
    return {range: {min: range.min, max: range.max}, processes};
  });
}

/** Click the advice slice on the viewer's canvas, as a user would; the text the viewer then shows. */
async function clickAdvice(viewer, check, startMs) {
  const at = await viewer.evaluate(
    ({check, startMs}) => {
      const el = document.querySelector('tf-trace-viewer');
      const thread = Object.values(el._traceModel.processes[0].threads).find((t) => t.name.includes(` ${check}: `));
      const slice = thread.sliceGroup.slices.find((s) => Math.abs(s.start - startMs) < 1e-6);
      const tv = el._traceViewer.trackView;
      const dt = tv.viewport.currentDisplayTransform;
      const canvas = tv.modelTrackContainer_.canvas;
      const r = canvas.getBoundingClientRect();
      const lo = Math.max(slice.start, dt.xViewToWorld(0));
      const hi = Math.min(slice.start + slice.duration, dt.xViewToWorld(canvas.width));
      const x = r.left + dt.xWorldToView((lo + hi) / 2) / (window.devicePixelRatio || 1);
      const track = Array.from(document.querySelectorAll('*')).find((n) => n.thread === thread);
      const t = track.getBoundingClientRect();
      return {x, y: t.top + t.height / 2};
    },
    {check, startMs},
  );
  await viewer.mouse.click(at.x, at.y);
  await viewer.waitForFunction(() => document.querySelector('tr-ui-a-single-event-sub-view'), null, {
    timeout: 10000,
  });
  return viewer.evaluate(() => document.body.innerText);
}

const CASES = [
  {run: '02_input_bound/2026_11_22_10_00_00', host: 'gpu-worker-0', check: 'input.bound'},
  {run: '05_launch_bound_small_kernels/2026_11_22_10_00_00', host: 'gpu-worker-0', check: 'kernels.launch-bound'},
  {run: '12_multi_gpu_imbalance/2026_11_22_10_00_00', host: 'gpu-worker-0', check: 'multigpu.imbalance'},
  {run: null, check: 'input.bound'}, // the real capture
  // the same under TensorBoard's experiment URLs
  {run: '02_input_bound/2026_11_22_10_00_00', host: 'gpu-worker-0', check: 'input.bound', experiment: 'exp1'},
];

for (const c of CASES) {
  const where = `${c.run ?? 'real tensorflow-cpu capture'}${c.experiment ? ', under /experiment/' + c.experiment : ''}`;
  test(`Open in trace viewer shows ${c.check}'s evidence and advice (${where})`, async () => {
    const run = c.run ?? captureRun;
    const host = c.host ?? (await getJson(base, 'runs', {})).runs.find((r) => r.run === run).hosts[0].host;
    const rep = await getJson(base, 'report', {run, host});
    const finding = rep.checks.find((x) => x.id === c.check);
    assert.ok(['critical', 'warning'].includes(finding.status), `${c.check} is ${finding.status}`);
    const ev = finding.evidence[0];

    const page0 = c.experiment ? `${base}/experiment/${c.experiment}` : base;
    const {context, frame, errors} = await openPanel(browser, `${page0}/${hashFor({run, host, finding: c.check})}`);
    const link = await frame.waitForSelector(
      `.finding[data-check="${c.check}"] .evidence li[data-index="0"] .trace-viewer-link`,
      {timeout: 60000},
    );
    const href = await link.getAttribute('href');
    // TensorBoard loads the panel from <prefix>/data/plugin_entry.html even under /experiment/<id>/
    // URLs; the links are built from the panel's own location, so they follow it
    const panelPath = new URL(frame.url()).pathname;
    assert.equal(panelPath, `${PREFIX}/data/plugin_entry.html`);
    const path = `${PREFIX}/data/plugin`;
    assert.ok(href.startsWith(`${path}/profile/trace_viewer_index.html?`), href);
    const q = new URLSearchParams(href.split('?')[1]);
    assert.ok(q.get('trace_data_url').startsWith(`${path}/gpu_advisor/export?`), q.get('trace_data_url'));
    const [viewer] = await Promise.all([context.waitForEvent('page'), link.click()]);
    const state = await viewerState(viewer);

    // the viewer opened on the link's window, which holds the evidence window
    assert.ok(Math.abs(state.range.min - Number(q.get('view_start'))) < 1e-6, JSON.stringify(state.range));
    assert.ok(Math.abs(state.range.max - Number(q.get('view_end'))) < 1e-6, JSON.stringify(state.range));
    assert.ok(state.range.min <= ev.start_ms && ev.end_ms <= state.range.max);
    const visible = (s) => s[2] > state.range.min && s[1] < state.range.max;

    // the events the evidence names are loaded, on its own thread or stream, inside the visible window
    const own = state.processes
      .filter((p) => (ev.device_id === null ? p.pid === 1 : p.name.startsWith(`GPU ${ev.device_id}:`)))
      .flatMap((p) => p.threads)
      .filter((t) => (ev.thread ? t.name === ev.thread : ev.stream_id === null || ev.where.endsWith(t.name)));
    const shown = own.flatMap((t) => t.slices.filter(visible));
    assert.ok(shown.length > 0, `no event of ${ev.where} in the window`);
    if (ev.events.length) {
      assert.ok(
        shown.some((s) => ev.events.includes(s[0])),
        `none of ${ev.events.slice(0, 2)} in ${ev.where} in the window`,
      );
    }
    // and the GPU Advisor track holds the finding's slice there; selecting it shows the advice
    const advisor = state.processes.find((p) => p.pid === 0);
    assert.equal(advisor.name, 'GPU Advisor');
    const track = advisor.threads.find((t) => t.name.includes(` ${c.check}: `));
    assert.ok(track.slices.some((s) => Math.abs(s[1] - ev.start_ms) < 1e-6 && visible(s)));
    const text = await clickAdvice(viewer, c.check, ev.start_ms);
    assert.ok(text.includes(`"${c.check}"`), 'the check id in the selected slice');
    assert.ok(text.includes('what to do') && text.includes(finding.recommendation.slice(0, 40)));
    assert.ok(text.includes(`"${finding.title}"`), 'the finding title in the selected slice');
    if (c.check === 'input.bound' && c.run) {
      await viewer.screenshot({path: join(SHOTS, '08-trace-viewer-with-advice.png')});
    }
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('the Profile tab link opens the Profile tab in place on the run, host and trace viewer; its data holds the evidence in the window', async () => {
  const run = '02_input_bound/2026_11_22_10_00_00';
  const host = 'gpu-worker-0';
  const rep = await getJson(base, 'report', {run, host});
  const ev = rep.checks.find((x) => x.id === 'input.bound').evidence[0];
  const {context, page, frame, errors} = await openPanel(
    browser,
    `${base}/${hashFor({run, host, finding: 'input.bound'})}`,
  );
  const link = await frame.waitForSelector(
    '.finding[data-check="input.bound"] .evidence li[data-index="0"] .profile-tab-link',
    {timeout: 60000},
  );
  // the link names what the Profile tab reads from TensorBoard's URL, and the window
  const href = new URL(await link.getAttribute('href'), page.url());
  assert.equal(href.pathname, `${PREFIX}/`);
  assert.equal(href.hash, '#profile');
  assert.equal(href.searchParams.get('run'), run);
  assert.equal(href.searchParams.get('host'), host);
  assert.equal(href.searchParams.get('tool'), 'trace_viewer@');
  const lo = Number(href.searchParams.get('view_start'));
  const hi = Number(href.searchParams.get('view_end'));
  assert.ok(lo <= ev.start_ms && ev.end_ms <= hi);
  const traceData = page.waitForResponse(
    (r) => r.url().includes(`${PREFIX}/data/plugin/profile/data?`) && r.url().includes('trace_viewer'),
    {timeout: 120000},
  );
  await page.evaluate(() => {
    window.__same_document = true;
  });
  const entries = await page.evaluate(() => history.length);
  await link.click();
  // TensorBoard shows its Profile tab, as when its own tab is clicked: the page not reloaded, one
  // history entry more, the panel still there
  await waitFor(
    () =>
      page.evaluate(() =>
        /profile/i.test(document.querySelector('.active-plugin-list [role="tab"][aria-selected="true"]')?.textContent),
      ),
    60000,
    'the Profile tab selected',
  );
  assert.equal(await page.evaluate(() => window.__same_document), true);
  assert.ok((await page.evaluate(() => history.length)) > entries);
  assert.ok(page.frames().some((f) => f.url().includes('plugin_entry.html?name=gpu_advisor')));
  const response = await traceData;
  const url = new URL(response.url());
  assert.equal(url.searchParams.get('run'), run);
  assert.equal(url.searchParams.get('host'), host);
  const events = (await response.json()).traceEvents.filter((e) => e.ph === 'X');
  // the Profile tab's own trace data, in its own time base (µs): the evidence's events in the window
  const inside = events.filter(
    (e) => ev.events.includes(e.name) && e.ts < hi * 1000 && e.ts + (e.dur ?? 0) > lo * 1000,
  );
  assert.ok(inside.length > 0, 'the evidence events are in the Profile tab trace data within the window');
  assert.ok(inside.some((e) => Math.abs(e.ts - ev.start_ms * 1000) < 1000 * (ev.end_ms - ev.start_ms)));
  await waitFor(() => page.frames().some((f) => f.url().includes('trace_viewer_index.html')), 60000, 'viewer');
  await page.screenshot({path: join(SHOTS, '09-profile-tab-from-link.png')});
  // back by TensorBoard's own tab bar: the Profile tab dropped the hash, the panel keeps its view and
  // puts it back in the URL
  assert.doesNotMatch(page.url(), /p\.gpu_advisor\./);
  await page.click('[data-plugin-id="gpu_advisor"]');
  await waitFor(() => page.url().includes('p.gpu_advisor.finding=input.bound'), 30000, 'the view back in the URL');
  assert.equal(await frame.$eval('#run-select', (n) => n.value), run);
  assert.equal(await frame.$eval('#host-select', (n) => n.value), host);
  assert.ok(await frame.$('.finding.selected[data-check="input.bound"]'));
  assert.equal(await page.evaluate(() => window.__same_document), true);
  assert.deepEqual(errors, []);
  await context.close();
});
