import assert from 'node:assert/strict';
import {test} from 'node:test';
import {
  compareHostMissing,
  formatHash,
  formatNames,
  mcpCall,
  parseHash,
  parseNames,
  profileTabUrl,
  viewWindow,
  readState,
  shareUrl,
  tableOf,
  tableState,
  tbBase,
  traceViewerUrl,
  traceViewerWindowUrl,
  writeState,
} from '../src/urlstate';

test('parse and format TensorBoard hashes', () => {
  const p = parseHash('#scalars&tagFilter=loss&p.gpu_advisor.run=a%2Fb');
  assert.equal(p.tab, 'scalars');
  assert.deepEqual(p.params, [
    ['tagFilter', 'loss'],
    ['p.gpu_advisor.run', 'a/b'],
  ]);
  assert.equal(formatHash(p), '#scalars&tagFilter=loss&p.gpu_advisor.run=a%2Fb');
  assert.deepEqual(parseHash(''), {tab: '', params: []});
  assert.deepEqual(parseHash('#gpu_advisor'), {tab: 'gpu_advisor', params: []});
});

test('state round-trips through the hash, other keys kept, our tab selected', () => {
  const state = {run: 'job/a b&c=d#e/2026_11_22', host: 'worker-0', finding: 'input.bound:2'};
  const hash = writeState('#scalars&smoothing=0.6&p.gpu_advisor.run=old', state);
  assert.ok(hash.startsWith('#gpu_advisor&smoothing=0.6&'));
  assert.ok(!hash.includes('old'));
  assert.deepEqual(readState(hash), state);
  assert.deepEqual(readState('#gpu_advisor&p.other.run=x'), {});
  assert.deepEqual(readState(writeState('', {run: 'ü/é'})), {run: 'ü/é'});
});

test('share links replace the hash of the current URL', () => {
  const url = shareUrl('http://host:6006/tb/?darkMode=true#timeseries', {run: 'r/s', host: 'h', finding: 'steps.gaps'});
  assert.equal(
    url,
    'http://host:6006/tb/?darkMode=true#gpu_advisor&p.gpu_advisor.run=r%2Fs&p.gpu_advisor.host=h&p.gpu_advisor.finding=steps.gaps',
  );
  assert.equal(shareUrl('http://h/', {run: 'r'}), 'http://h/#gpu_advisor&p.gpu_advisor.run=r');
});

test('TensorBoard base path from the panel location', () => {
  assert.equal(tbBase('/data/plugin_entry.html'), '');
  assert.equal(tbBase('/tb/data/plugin_entry.html'), '/tb');
  assert.equal(tbBase('/experiment/abc/data/plugin_entry.html'), '/experiment/abc');
});

test('trace viewer link opens the advisor export of the evidence on its window, with a margin', () => {
  const url = traceViewerUrl('/tb', 'train/2026_11_22', 'gpu&0', 'input.bound', 2, 12.5, 14.5);
  assert.ok(
    url.startsWith('/tb/data/plugin/profile/trace_viewer_index.html?is_streaming=false&is_oss=true&trace_data_url='),
  );
  const q = new URLSearchParams(url.split('?')[1]);
  assert.equal(q.get('view_start'), '12.3');
  assert.equal(q.get('view_end'), '14.7');
  assert.equal(
    q.get('trace_data_url'),
    '/tb/data/plugin/gpu_advisor/export?run=train%2F2026_11_22&host=gpu%260&finding=input.bound&evidence=2',
  );
  // a tiny window still opens on at least 10 µs either side, never before zero
  assert.deepEqual(viewWindow(0.001, 0.002), [0, 0.012]);
});

test('Profile tab link names run, tool and host in the query string', () => {
  assert.equal(profileTabUrl('', 'r/s', 'h'), '/?run=r%2Fs&tool=trace_viewer%40&host=h#profile');
  assert.equal(
    profileTabUrl('/tb', 'r', 'h', 10, 20),
    '/tb/?run=r&tool=trace_viewer%40&host=h&view_start=9&view_end=21#profile',
  );
});

test('a table view round-trips through the URL: table, group, sort, order, filter, names', () => {
  const names = ['void gemm<float, 128>(a&b, c=d)', 'ampere_sgemm_128x64_nn', '名前 #1'];
  const view = {table: 'kernels', group: 'name_op', sort: 'calls', order: 'asc' as const, filter: 'conv 3', names};
  const hash = writeState('#scalars', {run: 'r/1', host: 'h', ...tableState(view)});
  const back = readState(hash);
  assert.equal(back.run, 'r/1');
  assert.equal(back.finding, undefined);
  assert.deepEqual(tableOf(back), view);
  // a shared link restores the same view in a new page
  const url = shareUrl('http://tb:6006/#timeseries', back);
  assert.deepEqual(tableOf(readState(url.slice(url.indexOf('#')))), view);
  // the findings (no view key) have no table view; a view key alone opens the kernels
  assert.equal(tableOf(readState('#gpu_advisor&p.gpu_advisor.run=r')), null);
  assert.deepEqual(tableOf({view: 'tables'}), {table: 'kernels'});
  // a hand-edited URL with a bad order or names is read as none, never an error
  assert.deepEqual(tableOf({view: 'tables', table: 'ops', order: 'sideways', names: '{not json'}), {table: 'ops'});
  assert.deepEqual(parseNames('["a", 3, "b"]'), ['a', 'b']);
  assert.deepEqual(parseNames('"a"'), []);
  assert.equal(formatNames([]), undefined);
});

test("a table row's trace viewer link opens the export of a window around its longest instance", () => {
  const url = traceViewerWindowUrl('/tb', 'r/s', 'h&1', 12.5, 14.5);
  assert.ok(url.startsWith('/tb/data/plugin/profile/trace_viewer_index.html?is_streaming=false&is_oss=true&'));
  const q = new URLSearchParams(url.split('?')[1]);
  // the viewer opens on the instance with a tenth of its length either side
  assert.equal(q.get('view_start'), '12.3');
  assert.equal(q.get('view_end'), '14.7');
  // the data is the events from a window its length (at least 1 ms) either side, for context
  assert.equal(
    q.get('trace_data_url'),
    '/tb/data/plugin/gpu_advisor/export?run=r%2Fs&host=h%261&start_ms=10.5&end_ms=16.5',
  );
  const short = new URLSearchParams(traceViewerWindowUrl('', 'r', 'h', 0.2, 0.25).split('?')[1]);
  assert.equal(short.get('trace_data_url'), '/data/plugin/gpu_advisor/export?run=r&host=h&start_ms=0&end_ms=1.25');
});

test("a job's view keeps its profiling cycle in the hash, with the rank open or all of them", () => {
  for (const state of [
    {run: 'ddp', host: '*', cycle: '0'},
    {run: 'ddp', host: 'node1_1005.1700000000000', cycle: '1', finding: 'input.bound'},
  ]) {
    const hash = writeState('#gpu_advisor', state);
    assert.match(hash, /p\.gpu_advisor\.cycle=/);
    assert.deepEqual(readState(hash), state);
  }
  assert.doesNotMatch(writeState('', {run: 'r', host: 'h'}), /cycle/); // no cycle named, none written
});

test('a comparison link without compare_host: what is missing, in the user’s terms', () => {
  assert.equal(compareHostMissing('gone/1', []), 'Cannot compare: the run gone/1 is not in this logdir.');
  const hosts = ['w0', 'w1', 'w2', 'w3', 'w4', 'w5', 'w6'];
  const m = compareHostMissing('job/1', hosts);
  assert.match(
    m,
    /^Cannot compare with job\/1: it has 7 hosts \(w0, w1, w2, w3, w4, and 2 more\) and the link names none\./,
  );
  assert.match(m, /add compare_host to the link\.$/);
});

test('the MCP call gives an agent the view: overview, findings, a finding, a table, a job, a comparison', () => {
  const run = '02_input_bound/2026_11_22_10_00_00';
  const host = 'gpu-worker-0';
  assert.equal(mcpCall({}), 'list_runs {}');
  assert.equal(mcpCall({run, view: 'overview'}), 'list_runs {}');
  assert.equal(mcpCall({run, host}), `analyze {"run": "${run}", "host": "${host}"}`);
  assert.equal(
    mcpCall({run, host, finding: 'input.bound:1'}),
    `evidence {"run": "${run}", "host": "${host}", "finding": "input.bound"}`,
  );
  assert.equal(
    mcpCall({run, host, view: 'tables', table: 'ops', sort: 'calls', order: 'asc', filter: 'conv'}),
    `table {"run": "${run}", "host": "${host}", "kind": "ops", "sort": "calls", "order": "asc", "q": "conv"}`,
  );
  assert.equal(
    mcpCall({run, host, view: 'tables', table: 'kernels', names: '["a \\"b\\""]'}),
    `table {"run": "${run}", "host": "${host}", "kind": "kernels", "names": ["a \\"b\\""]}`,
  );
  assert.equal(mcpCall({run: 'job', host: '*', cycle: '1'}), 'job {"run": "job", "cycle": 1}');
  assert.equal(mcpCall({run: 'job', host: '*', cycle: 'x'}), 'job {"run": "job"}');
  assert.equal(
    mcpCall({run, host, compare: 'before/s', compare_host: 'h0'}),
    `diff {"before": "before/s", "after": "${run}", "before_host": "h0", "after_host": "${host}"}`,
  );
  // names are JSON strings: quotes and newlines escaped, never a broken call
  assert.equal(mcpCall({run: 'a"b\nc', host: 'h'}), 'analyze {"run": "a\\"b\\nc", "host": "h"}');
});
