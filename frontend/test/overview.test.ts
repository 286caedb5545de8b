import assert from 'node:assert/strict';
import {test} from 'node:test';
import {RunsResponse} from '../src/schema.gen';
import {overviewProgress, progressText} from '../src/views/overview';

function host(name: string, size: number, state: string, progress: number) {
  return {host: name, size, mtime: 0, analysis: {state, progress}};
}

test('the overview counts the profiles done and the bytes read, the running ones by their progress', () => {
  const runs = {
    runs: [
      {run: 'a', hosts: [host('h0', 40_000_000, 'done', 1), host('h1', 20_000_000, 'running', 0.5)]},
      {run: 'b', hosts: [host('h0', 10_000_000, 'error', 0), host('h1', 30_000_000, 'queued', 0)]},
    ],
    legacy: [],
  } as unknown as RunsResponse;
  const p = overviewProgress(runs);
  assert.deepEqual(p, {done: 2, total: 4, bytesRead: 60_000_000, bytes: 100_000_000});
  assert.equal(progressText(p), 'Analysing: 2 of 4 profiles done, 57.2 MiB of 95.4 MiB read');
  assert.deepEqual(overviewProgress({runs: [], legacy: []} as unknown as RunsResponse), {
    done: 0,
    total: 0,
    bytesRead: 0,
    bytes: 0,
  });
});
