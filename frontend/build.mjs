// Builds the panel into the Python package (one ES module), or, with --tests, the unit tests for
// node's test runner. Output is deterministic for a given esbuild version (pinned in package.json).
import {build} from 'esbuild';
import {readdirSync} from 'node:fs';

const common = {
  bundle: true,
  format: 'esm',
  target: 'es2020',
  legalComments: 'none',
  logLevel: 'warning',
  charset: 'utf8',
};

if (process.argv.includes('--tests')) {
  const tests = readdirSync('test')
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/${f}`);
  await build({...common, entryPoints: tests, outdir: 'build/test', platform: 'node', outExtension: {'.js': '.mjs'}});
} else {
  const outfile = process.argv[2] ?? '../tb_gpu_advisor/static/index.js';
  await build({
    ...common,
    entryPoints: ['src/index.ts'],
    outfile,
    platform: 'browser',
    banner: {js: '// Built from frontend/src by frontend/build.mjs; do not edit.'},
  });
}
