// TypeScript types generated from tb_gpu_advisor/schema.json, the one definition of the JSON the
// advisor serves (tests/test_schema.py holds the Python side to it). Writes src/schema.gen.ts; with
// --check, fails when that file is not what the schema gives (npm run lint runs it).
import {readFileSync, writeFileSync} from 'node:fs';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const SCHEMA = join(HERE, '..', 'tb_gpu_advisor', 'schema.json');
const OUT = join(HERE, 'src', 'schema.gen.ts');

function literal(v) {
  return v === null ? 'null' : JSON.stringify(v).replace(/"/g, "'");
}

function key(name) {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : `'${name}'`;
}

function doc(s, indent) {
  return s.description ? `${indent}/** ${s.description} */\n` : '';
}

function type(s, indent = '') {
  if (s.$ref) return s.$ref.split('/').pop();
  if ('const' in s) return literal(s.const);
  if (s.enum) return s.enum.map(literal).join(' | ');
  if (s.oneOf) return s.oneOf.map((x) => type(x, indent)).join(' | ');
  const types = Array.isArray(s.type) ? s.type : [s.type];
  return types.map((t) => one(t, s, indent)).join(' | ');
}

function one(t, s, indent) {
  switch (t) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      if (s.prefixItems) return `[${s.prefixItems.map((x) => type(x, indent)).join(', ')}]`;
      return s.items ? `${wrap(type(s.items, indent))}[]` : 'unknown[]';
    case 'object':
      return object(s, indent);
    case undefined:
      return 'unknown';
    default:
      throw new Error(`unsupported type ${t}`);
  }
}

function wrap(t) {
  return /[ |]/.test(t) ? `(${t})` : t;
}

function object(s, indent) {
  const props = Object.entries(s.properties ?? {});
  const extra = s.additionalProperties;
  if (!props.length) {
    if (extra && extra !== true) return `Record<string, ${type(extra, indent)}>`;
    return 'Record<string, unknown>';
  }
  const inner = indent + '  ';
  const required = new Set(s.required ?? []);
  const lines = props.map(
    ([k, v]) => `${doc(v, inner)}${inner}${key(k)}${required.has(k) ? '' : '?'}: ${type(v, inner)};`,
  );
  if (extra === true) lines.push(`${inner}[key: string]: unknown;`);
  return `{\n${lines.join('\n')}\n${indent}}`;
}

export function generate(schema) {
  const out = [
    '// Generated from tb_gpu_advisor/schema.json by frontend/gen-types.mjs; do not edit.',
    '/* eslint-disable */',
    '',
  ];
  for (const [name, s] of Object.entries(schema.$defs)) {
    const t = type(s);
    out.push(doc(s, '') + (t.startsWith('{') ? `export interface ${name} ${t}` : `export type ${name} = ${t};`), '');
  }
  return out.join('\n');
}

const text = generate(JSON.parse(readFileSync(SCHEMA, 'utf8')));
if (process.argv.includes('--check')) {
  if (readFileSync(OUT, 'utf8') !== text) {
    console.error('src/schema.gen.ts is not what tb_gpu_advisor/schema.json gives: run `node gen-types.mjs`');
    process.exit(1);
  }
} else {
  writeFileSync(OUT, text);
}
