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
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { FEATURES, checkLinks, fixExternrefExport, trainingLinks } from '../../../scripts/split-verdict.mjs';

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
const namesOf = (b) => {
  const u = (i) => {
    let v = 0;
    let s = 0;
    for (;;) {
      const x = b[i++];
      v += (x & 0x7f) * 2 ** s;
      s += 7;
      if (x < 0x80) return [v, i];
    }
  };
  let imported = 0;
  const names = new Map();
  for (let i = 8; i < b.length; ) {
    const id = b[i];
    const [size, start] = u(i + 1);
    if (id === 2) {
      let [n, j] = u(start);
      for (; n > 0; n--) {
        let l;
        [l, j] = u(j);
        j += l;
        [l, j] = u(j);
        j += l;
        const kind = b[j++];
        if (kind === 0) {
          [, j] = u(j);
          imported++;
        } else if (kind === 1) {
          j++;
          const f = b[j++];
          [, j] = u(j);
          if (f & 1) [, j] = u(j);
        } else if (kind === 2) {
          const f = b[j++];
          [, j] = u(j);
          if (f & 1) [, j] = u(j);
        } else if (kind === 3) j += 2;
      }
    }
    if (id === 0) {
      let [l, j] = u(start);
      const name = b.subarray(j, j + l).toString();
      j += l;
      while (name === 'name' && j < start + size) {
        const sub = b[j];
        const [ss, k] = u(j + 1);
        if (sub === 1) {
          let [n, q] = u(k);
          for (; n > 0; n--) {
            let f;
            let ln;
            [f, q] = u(q);
            [ln, q] = u(q);
            names.set(f - imported, b.subarray(q, q + ln).toString());
            q += ln;
          }
        }
        j = k + ss;
      }
    }
    i = start + size;
  }
  return names;
};
const named = namesOf(readFileSync(at('whole.named.wasm')));
const modelRow = [...named].find(([, n]) => n.endsWith('catalog::compiled::model_row'))?.[0];
if (modelRow === undefined) fail('no catalog::compiled::model_row in the program');

// The glue, as a module that also exports its import table and instance hook.
const glueText = readFileSync(at('verdict.js'), 'utf8');
let glues = 0;
const glue = async () => {
  const f = at(`glue-${glues++}.mjs`);
  writeFileSync(f, `${glueText}\nexport { __wbg_get_imports, __wbg_finalize_init };\n`);
  return import(pathToFileURL(f).href);
};
const html = readFileSync(join(root, 'index.html'), 'utf8');
const exampleIds = [...new Set([...html.matchAll(/data-example="([^"]+)"/g)].map((m) => m[1]))];
const opening = (c) => (Array.isArray(c) ? c : [c, undefined, undefined]);

// 2. Which functions each kind of link runs.
const called = async (kind) => {
  run(wasmSplit, ['--instrument', ...FEATURES, at('whole.wasm'), '-o', at(`${kind}.instr.wasm`)]);
  const module = new WebAssembly.Module(fixExternrefExport(readFileSync(at(`${kind}.instr.wasm`)), fail));
  const g = await glue();
  const wasm = g.__wbg_finalize_init(new WebAssembly.Instance(module, g.__wbg_get_imports()), module);
  const links = trainingLinks(root, kind, exampleIds);
  for (const c of links) g.first_verdict(...opening(c));
  const size = 1 << 20;
  const ptr = wasm.__wbindgen_malloc(size, 1);
  const n = wasm.__write_profile(ptr, size);
  const p = Buffer.from(new Uint8Array(wasm.memory.buffer, ptr, n));
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
const leb = (b, i) => {
  let v = 0;
  let shift = 0;
  for (;;) {
    if (i >= b.length || shift > 49) throw new Error('split-verdict: a number runs past the end of the module');
    const x = b[i++];
    v += (x & 0x7f) * 2 ** shift;
    shift += 7;
    if (x < 0x80) return [v, i];
  }
};
function funcTableLimits(bytes, fail) {
  const b = Buffer.from(bytes);
  let i = 8;
  while (i < b.length) {
    const id = b[i];
    const [size, start] = leb(b, i + 1);
    if (id === 4) {
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
    i = start + size;
  }
  fail('a part has no function table');
  return null;
}
function raiseTableImportMax(bytes, max, fail) {
  const b = Buffer.from(bytes);
  let i = 8;
  while (i < b.length) {
    const id = b[i];
    const [size, start] = leb(b, i + 1);
    if (id === 2) {
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
              if (max < old) fail(`the table import's maximum would shrink (${old} -> ${max})`);
              const delta = bytesOf(max).length - (j - at);
              return Buffer.concat([b.subarray(0, i + 1), Buffer.from(bytesOf(size + delta)), b.subarray(start, at), Buffer.from(bytesOf(max)), b.subarray(j)]);
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
    i = start + size;
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
const models = readdirSync(join(root, 'catalog', 'models'))
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(root, 'catalog', 'models', f), 'utf8')));
const drafters = ['qwen3-0.6b', 'qwen3-1.7b', 'qwen3-4b', 'llama-3.2-1b-instruct'].filter((id) => models.some((m) => m.id === id));
const beside = [];
for (const m of models) {
  const c = Buffer.from(JSON.stringify(m.config)).toString('base64url');
  for (const id of exampleIds.filter(Boolean)) for (const f of ['', '&util=0.95', '&tp=2', '&max-model-len=8192']) beside.push(`?v=1&example=${id}${f}#config=${c}`);
  for (const d of drafters) for (const f of ['', '&tp=2', '&num-speculative-tokens=3']) beside.push(`?v=1&gpu=h100-sxm-80gb&spec=draft_model&draft-model=${d}${f}#config=${c}`);
}
{
  run(wasmSplit, ['--instrument', ...FEATURES, at('whole.wasm'), '-o', at('beside.instr.wasm')]);
  const module = new WebAssembly.Module(fixExternrefExport(readFileSync(at('beside.instr.wasm')), fail));
  const g = await glue();
  const wasm = g.__wbg_finalize_init(new WebAssembly.Instance(module, g.__wbg_get_imports()), module);
  for (const l of beside) g.first_verdict(l, undefined, undefined);
  const size = 1 << 20;
  const ptr = wasm.__wbindgen_malloc(size, 1);
  const n = wasm.__write_profile(ptr, size);
  writeFileSync(at('beside.profile'), Buffer.from(new Uint8Array(wasm.memory.buffer, ptr, n)));
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
