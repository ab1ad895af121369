// heap-summary.mjs: what fills a page's heap, from a V8 heap snapshot that
// perf.mjs kept (PERF_HEAPSNAPSHOT). It sums the objects' own sizes by
// constructor (objects), or by kind (strings, arrays, code): how many and how
// many bytes, the largest first. Own sizes, not retained ones: a Map's
// entries count under the Map's backing array, a string under its kind.
//
//   node test/web/heap-summary.mjs page.heapsnapshot [--top N]

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: flags, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string' } } });
if (positionals.length !== 1) {
  process.stderr.write('usage: node test/web/heap-summary.mjs page.heapsnapshot [--top N]\n');
  process.exit(2);
}
const TOP = Number(flags.top ?? 25);
const { snapshot, nodes, strings } = JSON.parse(readFileSync(positionals[0], 'utf8'));
const fields = snapshot.meta.node_fields;
const types = snapshot.meta.node_types[0];
const [TYPE, NAME, SIZE] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));

const groups = new Map();
let total = 0;
for (let i = 0; i < nodes.length; i += fields.length) {
  const type = types[nodes[i + TYPE]];
  const size = nodes[i + SIZE];
  total += size;
  // Objects and closures by their constructor's or function's name; the rest by kind.
  const what = type === 'object' || type === 'closure' || type === 'native' || type === 'array'
    ? `${type} ${strings[nodes[i + NAME]].slice(0, 60)}`
    : type;
  const g = groups.get(what) ?? { n: 0, bytes: 0 };
  groups.set(what, { n: g.n + 1, bytes: g.bytes + size });
}
const MB = 2 ** 20;
process.stdout.write(`${(total / MB).toFixed(1)} MB in ${nodes.length / fields.length} objects\n`);
for (const [what, g] of [...groups].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, TOP)) {
  process.stdout.write(`${(g.bytes / MB).toFixed(2).padStart(8)} MB ${String(g.n).padStart(9)}×  ${what}\n`);
}
