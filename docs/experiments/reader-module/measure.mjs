// The config reader as a module of the catalog links' verdict program: what its parts would
// weigh (DESIGN.md, "The reader as a module of the catalog links' program, measured in bytes").
// An experiment, not part of the build: run it on a checkout with unified.patch applied
// (`git apply docs/experiments/reader-module/unified.patch`, which adds the `unified` feature:
// the pasted config's program with every model row and the examples, handing nothing over).
//
//   node docs/experiments/reader-module/measure.mjs [OUT_DIR]
//
// It builds the program as scripts/inline-loader.mjs does (std built again, immediate-abort
// panics, wasm-bindgen, wasm-opt -Oz), profiles it on the catalog links' and the pasted
// configs' training states (scripts/split-verdict.mjs), splits it with binaryen 108's
// wasm-split in three chained runs into C (both run), K (catalog links only), R (configs only)
// and X (neither), checks in Node that C+K answers the catalog states and C+R the config states
// as the whole program does (placeholders throw; a state that reaches another part is planned
// again with all four), and prints each part's gzip -9 and zopfli sizes.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { FEATURES, catalogModels, checkLinks, fixExternrefExport, importGlue, leb, opening, profileOf, trainingLinks } from '../../../scripts/split-verdict.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const out = resolve(process.argv[2] ?? join(root, 'target', 'reader-module'));
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const at = (n) => join(out, n);
const fail = (m) => {
  throw new Error(m);
};
const bin = join(root, 'node_modules', '.bin');
const env = {
  ...process.env,
  PATH: `${bin}:${process.env.HOME}/.cargo/bin:${process.env.PATH}`,
  RUSTC_BOOTSTRAP: '1',
  RUSTFLAGS: '-Zunstable-options -Cpanic=immediate-abort',
  CARGO_TARGET_DIR: join(root, 'target', 'verdict'),
};
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, env, encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'inherit'] });
const wasmSplit = join(root, 'tools', 'binaryen-108', 'usr', 'bin', 'wasm-split');
const { gzipAsync } = createRequire(join(root, 'scripts', 'inline-loader.mjs'))('@gfx/zopfli');
const zgz = async (bytes) => (await gzipAsync(bytes, { numiterations: 15 })).length;
const gz9 = (b) => gzipSync(b, { level: 9 }).length;
// A module's sections: [id, start of its contents, end, start of its size].
function* sections(b) {
  for (let i = 8; i < b.length; ) {
    const [size, start] = leb(b, i + 1);
    yield [b[i], start, start + size, i + 1];
    i = start + size;
  }
}

// 1. The program, as the hook builds it, without names (binaryen then names each function by
//    its index, which the profiles and --keep-funcs share).
const built = run('cargo', ['build', '-Zbuild-std=std,panic_abort', '--target', 'wasm32-unknown-unknown', '--profile', 'wasm-release', '--bin', 'headroom-verdict', '--no-default-features', '--features', 'verdict,catalog-compiled,config-reader,unified', '--message-format=json-render-diagnostics']);
const artifact = built
  .split('\n')
  .filter((l) => l.startsWith('{'))
  .map((l) => JSON.parse(l))
  .find((m) => m.reason === 'compiler-artifact' && m.target?.name === 'headroom-verdict')
  ?.filenames?.find((f) => f.endsWith('.wasm'));
if (!artifact) fail('cargo built no headroom-verdict .wasm: is unified.patch applied?');
run('wasm-bindgen', ['--target', 'web', '--no-typescript', '--out-dir', out, '--out-name', 'verdict', artifact]);
run('wasm-opt', ['-Oz', '--one-caller-inline-max-function-size', '0', ...FEATURES, at('verdict_bg.wasm'), '-o', at('whole.wasm')]);
const whole = readFileSync(at('whole.wasm'));
// The same with its name section, to find a function by name (the same functions, in the same
// order).
run('wasm-opt', ['-Oz', '-g', '--one-caller-inline-max-function-size', '0', ...FEATURES, at('verdict_bg.wasm'), '-o', at('whole.named.wasm')]);
// Each defined function's name, by its index among the defined functions (a profile's order).
const namesOf = (b) => {
  const imported = WebAssembly.Module.imports(new WebAssembly.Module(b)).filter((i) => i.kind === 'function').length;
  const names = new Map();
  for (const [id, start, end] of sections(b)) {
    if (id !== 0) continue;
    let [l, j] = leb(b, start);
    if (b.subarray(j, j + l).toString() !== 'name') continue;
    for (j += l; j < end; ) {
      const sub = b[j];
      const [size, k] = leb(b, j + 1);
      if (sub === 1) {
        let [n, q] = leb(b, k);
        for (; n > 0; n--) {
          let f;
          let len;
          [f, q] = leb(b, q);
          [len, q] = leb(b, q);
          names.set(f - imported, b.subarray(q, q + len).toString());
          q += len;
        }
      }
      j = k + size;
    }
  }
  return names;
};
const named = namesOf(readFileSync(at('whole.named.wasm')));
const modelRow = [...named].find(([, n]) => n.endsWith('catalog::compiled::model_row'))?.[0];
if (modelRow === undefined) fail('no catalog::compiled::model_row in the program');

// A fresh copy of the glue for each instance (scripts/split-verdict.mjs's importGlue).
let glues = 0;
const glue = () => importGlue(out, at('verdict.js'), `copy-${glues++}`);
const html = readFileSync(join(root, 'index.html'), 'utf8');
const exampleIds = [...new Set([...html.matchAll(/data-example="([^"]+)"/g)].map((m) => m[1]))];

// 2. Which functions each kind of link runs.
const profiled = async (tag, calls) => {
  run(wasmSplit, ['--instrument', ...FEATURES, at('whole.wasm'), '-o', at(`${tag}.instr.wasm`)]);
  const profile = await profileOf({ tmp: out, prefix: tag, glueFile: at('verdict.js'), instrumented: readFileSync(at(`${tag}.instr.wasm`)), calls, fail });
  writeFileSync(at(`${tag}.profile`), profile);
  return profile;
};
const called = async (kind) => {
  const links = trainingLinks(root, kind, exampleIds);
  const p = await profiled(kind, links);
  const set = new Set();
  for (let f = 0; 8 + 4 * f + 4 <= p.length; f++) if (p.readUInt32LE(8 + 4 * f)) set.add(f);
  console.log(`${kind}: ${links.length} training states run ${set.size} functions`);
  return set;
};
const cat = await called('catalog');
const cfg = await called('config');
const C = [...cat].filter((f) => cfg.has(f));
const K = [...cat].filter((f) => !cfg.has(f));
const R = [...cfg].filter((f) => !cat.has(f));
console.log(`functions: C ${C.length} (both), K ${K.length} (catalog links only), R ${R.length} (configs only)`);
const keep = (name, list) => writeFileSync(at(name), `${list.join('\n')}\n`);
keep('CKR.funcs', [...C, ...K, ...R]);
keep('CK.funcs', [...C, ...K]);
keep('C.funcs', C);
// And C without `compiled::model_row` (every catalog row's values), which the config's default
// row is read through: what C would weigh if that row had a function of its own.
keep('C-rows.funcs', C.filter((f) => f !== modelRow));

// 3. Three chained splits; names kept (-g) so that each run finds the functions by index name.
const split = (input, funcs, one, two) => {
  run(wasmSplit, ['-g', ...FEATURES, `--keep-funcs=@${at(funcs)}`, '--placeholder-namespace=placeholder', '--import-namespace=primary', at(input), '-o1', at(one), '-o2', at(two)]);
  writeFileSync(at(one), fixExternrefExport(readFileSync(at(one)), fail));
};
split('whole.wasm', 'CKR.funcs', 'P1.wasm', 'X.wasm');
split('P1.wasm', 'CK.funcs', 'A.wasm', 'R.wasm');
split('A.wasm', 'C.funcs', 'C.wasm', 'K.wasm');
split('A.wasm', 'C-rows.funcs', 'C-rows.wasm', 'K-rows.wasm');
const parts = {};
for (const n of ['C', 'K', 'R', 'X', 'C-rows', 'K-rows']) {
  run('wasm-opt', ['-Oz', '--one-caller-inline-max-function-size', '0', ...FEATURES, at(`${n}.wasm`), '-o', at(`${n}.opt.wasm`)]);
  parts[n] = readFileSync(at(`${n}.opt.wasm`));
}

// Each later part imports the function table C had when it was split off; C's grew after.
// funcTableLimits and raiseTableImportMax as 4643406's scripts/split-verdict.mjs had them.
function funcTableLimits(bytes, fail) {
  const b = Buffer.from(bytes);
  for (const [id, start] of sections(b)) {
    if (id !== 4) continue;
    let [n, j] = leb(b, start);
    for (; n > 0; n--) {
      const type = b[j++];
      const flags = b[j++];
      let min;
      let max = null;
      [min, j] = leb(b, j);
      if (flags & 1) [max, j] = leb(b, j);
      if (type === 0x70) return [min, max];
    }
  }
  fail('a part has no function table');
  return null;
}
function raiseTableImportMax(bytes, max, fail) {
  const b = Buffer.from(bytes);
  const bytesOf = (v) => {
    const out = [];
    do {
      let x = v & 0x7f;
      v = Math.floor(v / 128);
      if (v > 0) x |= 0x80;
      out.push(x);
    } while (v > 0);
    return out;
  };
  for (const [id, start, end, sizeAt] of sections(b)) {
    if (id !== 2) continue;
    let [n, j] = leb(b, start);
    for (; n > 0; n--) {
      let len;
      [len, j] = leb(b, j);
      j += len;
      [len, j] = leb(b, j);
      j += len;
      const kind = b[j++];
      if (kind === 0) [, j] = leb(b, j);
      else if (kind === 1) {
        const type = b[j++];
        const flags = b[j++];
        [, j] = leb(b, j);
        if (flags & 1) {
          const at = j;
          let old;
          [old, j] = leb(b, j);
          if (type === 0x70) {
            if (max < old) fail(`the table import's maximum would shrink (${old} -> ${max})`);
            const delta = bytesOf(max).length - (j - at);
            return Buffer.concat([b.subarray(0, sizeAt), Buffer.from(bytesOf(end - start + delta)), b.subarray(start, at), Buffer.from(bytesOf(max)), b.subarray(j)]);
          }
        }
      } else if (kind === 2) {
        const flags = b[j++];
        [, j] = leb(b, j);
        if (flags & 1) [, j] = leb(b, j);
      } else if (kind === 3) j += 2;
      else fail(`an import of kind ${kind} this reader does not know`);
    }
  }
  fail('the part imports no function table with a maximum');
  return null;
}

const [, max] = funcTableLimits(parts.C, fail);
const modules = { C: new WebAssembly.Module(parts.C) };
for (const n of ['K', 'R', 'X']) modules[n] = new WebAssembly.Module(raiseTableImportMax(parts[n], max, fail));

// 4. The check: each kind of link on its two parts, else on all four, against the whole.
const reached = {};
const placeholder = { placeholder: new Proxy({}, { get: () => () => { throw reached; } }) };
const wholeGlue = await glue();
const wholeModule = new WebAssembly.Module(whole);
wholeGlue.__wbg_finalize_init(new WebAssembly.Instance(wholeModule, wholeGlue.__wbg_get_imports()), wholeModule);
const linked = async (names) => {
  const g = await glue();
  const i = new WebAssembly.Instance(modules.C, { ...g.__wbg_get_imports(), ...placeholder });
  for (const n of names) new WebAssembly.Instance(modules[n], { primary: i.exports });
  g.__wbg_finalize_init(i, modules.C);
  return g;
};
const everything = await linked(['K', 'R', 'X']);
for (const [kind, with_] of [['catalog', 'K'], ['config', 'R']]) {
  let g = await linked([with_]);
  let answered = 0;
  let needAll = 0;
  let differ = 0;
  const links = [...trainingLinks(root, kind, exampleIds), ...checkLinks(root, kind, exampleIds)];
  for (const c of links) {
    const args = opening(c);
    const want = JSON.stringify(wholeGlue.first_verdict(...args));
    let got;
    try {
      got = JSON.stringify(g.first_verdict(...args));
      answered++;
    } catch (e) {
      if (e !== reached) throw e;
      needAll++;
      g = await linked([with_]);
      got = JSON.stringify(everything.first_verdict(...args));
    }
    if (got !== want) differ++;
  }
  console.log(`check ${kind}: C+${with_} answered ${answered} of ${links.length} states, ${needAll} needed all four parts, ${differ} differ from the whole program`);
}

// 5. The same program split for the links the program with everything takes today (a pasted
//    config beside a seed example or a drafter named by draft-model): its first part.
const models = catalogModels(root);
// The drafter the shell's tests name (tests/browser/shell.test.mjs).
const drafters = ['qwen3-4b'];
if (!drafters.every((id) => models.some((m) => m.id === id))) fail(`the catalog has no row ${drafters.join(', ')}`);
const beside = [];
for (const m of models) {
  const c = Buffer.from(JSON.stringify(m.config)).toString('base64url');
  for (const id of exampleIds.filter(Boolean)) for (const f of ['', '&util=0.95', '&tp=2', '&max-model-len=8192']) beside.push(`?v=1&example=${id}${f}#config=${c}`);
  for (const d of drafters) for (const f of ['', '&tp=2', '&num-speculative-tokens=3']) beside.push(`?v=1&gpu=h100-sxm-80gb&spec=draft_model&draft-model=${d}${f}#config=${c}`);
}
{
  await profiled('beside', beside);
  run(wasmSplit, [...FEATURES, `--profile=${at('beside.profile')}`, '--placeholder-namespace=placeholder', '--import-namespace=primary', at('whole.wasm'), '-o1', at('beside1.wasm'), '-o2', at('beside2.wasm')]);
  writeFileSync(at('beside1.wasm'), fixExternrefExport(readFileSync(at('beside1.wasm')), fail));
  run('wasm-opt', ['-Oz', '--one-caller-inline-max-function-size', '0', ...FEATURES, at('beside1.wasm'), '-o', at('beside1.opt.wasm')]);
  parts.beside = readFileSync(at('beside1.opt.wasm'));
  console.log(`a config beside an example or a drafter: ${beside.length} links (drafters ${drafters.join(', ')})`);
}

// 6. Sizes.
const row = async (name, bytes) => console.log(`${name.padEnd(8)} ${String(bytes.length).padStart(7)} B raw ${String(gz9(bytes)).padStart(7)} B gzip -9 ${String(await zgz(bytes)).padStart(7)} B zopfli`);
await row('whole', whole);
for (const n of ['C', 'K', 'R', 'X']) await row(n, parts[n]);
await row('C then K', Buffer.concat([parts.C, parts.K]));
await row('C then R', Buffer.concat([parts.C, parts.R]));
await row('C without model_row', parts['C-rows']);
await row('K with model_row', parts['K-rows']);
await row('first part for a config beside an example or a drafter', parts.beside);
