// The verdict program split by what links run, by wasm-split (Debian's binaryen 108, unpacked
// by scripts/setup.sh), into six parts (splitParts): C, every function the common links of both
// kinds run; B, what catalog links and a config beside a seed example or a drafter run and a
// pasted config alone does not (the examples' builders, their rows and the drafter's); K, what
// only catalog links run (the other model rows); R, what only a pasted config.json runs (the
// reader, its JSON parser, vLLM's registry); V, what the uncommon flags and the refused inputs
// run (older vLLM releases' rules, --quantization, --dtype, an attention backend, measured
// values, a typo's message); X, the rest (rare layer kinds, error paths no training link takes).
// Used by scripts/inline-loader.mjs.
//
// Why: on a phone on slow 4G (the bench's 1.6 Mbit/s, 150 ms RTT, CPU / 4) the program's bytes
// are most of the first verdict's wait, about 5 ms per KB. A catalog link's stream brings C,
// then B, K, V, X and R; a pasted config's C, then R, V, X, B and K; a config beside a model,
// an example or a drafter C, then R, B, V, K and X (ORDERS, scripts/gzip-parts.mjs).
// public/early.js compiles each part as soon as its bytes are in, and public/boot.js runs the
// link on C with the parts in so far: a link that reaches a function of a part not linked yet (a
// placeholder the first part imports, which throws) is planned again once the stream's next
// part is in, on a fresh instance with it linked too: the same answer, after more of the stream.
//
// The split is checked here: every training state and a set of states outside the training give
// the same answer from the parts as from the whole program, in Node, or the build fails.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { constants as zlib, gunzipSync } from 'node:zlib';

// The import modules wasm-split names: the first part's placeholders (a function of a later
// part, until that part fills its table slot) and, in the later parts, the first part's exports.
// One letter each, as public/boot.js links them: the first part imports some 220 placeholders
// (0.2 KB of deflate less than "placeholder" and "primary").
export const NS = { placeholders: 'p', first: 'c' };

// wasm-opt's passes for the verdict program and each of its parts. -Oz, with no inlining of a
// function into its one caller beyond -Oz's own small sizes: by default wasm-opt merges the
// chain first_verdict -> plan -> plan_given into one 87 KB function, and the browser compiles a
// function whole on its first call (V8 compiles wasm lazily), branches never taken included;
// the rows then merge into the first part too (a config beside an example or a drafter waits
// for 4.4 KB more of deflate). --low-memory-unused: the program never reads or writes below
// address 1024 (rustc's wasm32 layout puts the 1 MiB stack first, growing down from 1 MiB,
// and the data and heap above it), so wasm-opt may fold a constant added to a pointer into
// the access's offset; the parts are 0.5 KB of deflate smaller (2026-12-07).
export const OPTIMISE = ['-Oz', '--one-caller-inline-max-function-size', '0', '--low-memory-unused'];

// The WebAssembly features wasm-opt and wasm-split must accept to read wasm-bindgen 0.2.130's
// output.
export const FEATURES = ['--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext', '--enable-mutable-globals', '--enable-reference-types', '--enable-multivalue'];

// Unsigned LEB128 at `i`: [value, next index].
export const leb = (b, i) => {
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

// The bytes of `v` in unsigned LEB128.
const uleb = (v) => {
  const out = [];
  do {
    let x = v & 0x7f;
    v = Math.floor(v / 128);
    if (v > 0) x |= 0x80;
    out.push(x);
  } while (v > 0);
  return out;
};

// binaryen 108 writes the export of wasm-bindgen's externref table (`__wbindgen_externrefs`)
// with the index of the module's first table, the function table, in every module it writes
// (fixed in later releases; npm's 132 has no wasm-split). The glue then fails at its first
// `table.set`. This puts the export back on the externref table, in place (both indices are
// below 128, one byte each); `fail` names what it did not find.
export function fixExternrefExport(bytes, fail) {
  const b = Buffer.from(bytes);
  let importedTables = 0;
  let externref = -1;
  let exportAt = -1;
  for (const [id, start] of sections(b)) {
    if (id === 2) {
      for (const imported of imports(b, start, fail)) if (imported.kind === 1) importedTables++;
    } else if (id === 4) {
      for (const [t, table] of [...tables(b, start)].entries()) if (table.type === 0x6f) externref = importedTables + t;
    } else if (id === 7) {
      let [n, j] = leb(b, start);
      for (; n > 0; n--) {
        let len;
        [len, j] = leb(b, j);
        const name = b.subarray(j, j + len).toString('utf8');
        j += len;
        const kind = b[j++];
        if (name === '__wbindgen_externrefs' && kind === 1) exportAt = j;
        [, j] = leb(b, j);
      }
    }
  }
  if (exportAt < 0) fail('the program exports no table __wbindgen_externrefs');
  if (externref < 0 || externref > 127) fail('the program has no externref table (or one past index 127)');
  if (b[exportAt] > 127) fail('the externref table export has an index past 127');
  b[exportAt] = externref;
  return b;
}

// A module's sections: [id, start of its contents, end, start of its size].
function* sections(b) {
  for (let i = 8; i < b.length; ) {
    const [size, start] = leb(b, i + 1);
    yield [b[i], start, start + size, i + 1];
    i = start + size;
  }
}

// A table's or a memory's limits at `j`: its minimum, its maximum (null without one), where the
// maximum is written (-1 without one) and where the limits end.
const limits = (b, j) => {
  const flags = b[j++];
  let min;
  [min, j] = leb(b, j);
  if (!(flags & 1)) return { min, max: null, maxAt: -1, end: j };
  const maxAt = j;
  let max;
  [max, j] = leb(b, j);
  return { min, max, maxAt, end: j };
};

// Each import of an import section (its contents at `start`): its kind (0 a function, 1 a
// table, 2 a memory, 3 a global), and a table's element type and a table's or memory's limits.
function* imports(b, start, fail) {
  let [n, j] = leb(b, start);
  for (; n > 0; n--) {
    let len;
    [len, j] = leb(b, j);
    j += len;
    [len, j] = leb(b, j);
    j += len;
    const kind = b[j++];
    if (kind === 0) {
      [, j] = leb(b, j);
      yield { kind };
    } else if (kind === 1 || kind === 2) {
      const type = kind === 1 ? b[j++] : null;
      const l = limits(b, j);
      j = l.end;
      yield { kind, type, ...l };
    } else if (kind === 3) {
      j += 2;
      yield { kind };
    } else fail(`an import of kind ${kind} this reader does not know`);
  }
}

// Each table a table section (its contents at `start`) defines: its element type and limits.
function* tables(b, start) {
  let [n, j] = leb(b, start);
  for (; n > 0; n--) {
    const type = b[j++];
    const l = limits(b, j);
    j = l.end;
    yield { type, ...l };
  }
}

// The shortest start of a gzip stream (`gz`) that decompresses to its first `n` bytes: what of
// a split program's .gz the first verdict waits for (scripts/measure-budgets.mjs, the tests).
export function gzPrefix(gz, n) {
  const out = (k) => {
    try {
      return gunzipSync(gz.subarray(0, k), { finishFlush: zlib.Z_SYNC_FLUSH }).length;
    } catch {
      return 0;
    }
  };
  let lo = 1;
  let hi = gz.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (out(mid) >= n) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// The catalog's model rows, in file order.
export const catalogModels = (root) =>
  readdirSync(join(root, 'catalog', 'models'))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(root, 'catalog', 'models', f), 'utf8')));
// A row's link: by id for a catalog link, as its pasted config.json (in the fragment) for a
// config's.
const baseLink = (m, kind) => (kind === 'catalog' ? `?v=1&model=${m.id}` : `?v=1#config=${Buffer.from(JSON.stringify(m.config)).toString('base64url')}`);
// More keys for a link, in its query (before a fragment).
const withKeysOf = (link, keys) => {
  const hash = link.indexOf('#');
  return hash < 0 ? `${link}&${keys}` : `${link.slice(0, hash)}&${keys}${link.slice(hash)}`;
};

// The links the program's parts are trained on: what people share. For catalog links, every
// catalog model (by id and by its Hugging Face repo) on a spread of GPUs and grids, every GPU,
// the common flags, the measurements a startup log gives and recent vLLM releases on each
// model, and the seed examples with a key of their own; for a pasted config.json, every
// catalog model's config with the same spread. The uncommon flags and the inputs the page
// refuses are V's (uncommonLinks); the error paths of rare shapes are left to X.
export function trainingLinks(root, kind, exampleIds) {
  const models = catalogModels(root);
  const gpus = ['h100-sxm-80gb', 'a100-sxm4-40gb', 'l40s-48gb', 'rtx-4090-24gb', 'b200-192gb', 'mi300x-192gb'];
  const flags = ['max-model-len=8192', 'max-model-len=32768', 'util=0.95', 'util=0.8', 'kv-dtype=fp8', 'max-num-seqs=512', 'eager=true', 'pp=2', 'max-num-batched-tokens=16384', 'unit=gb', 'dp=2', 'ep=true', 'block-size=32', 'kv-bytes=20GiB', 'max-model-len=auto', 'avg-len=2000', 'vllm=0.20', 'vllm=0.25', 'vllm=0.30', 'vllm=0.33', 'weights=30GiB', 'activation=2GiB', 'cuda-graph=1GiB', 'non-torch=0.5GiB', 'free=78GiB', 'available-kv=20GiB', 'weights=30GiB&activation=2GiB&cuda-graph=1GiB&available-kv=20GiB'];
  const allGpus = JSON.parse(readFileSync(join(root, 'catalog', 'gpus.json'), 'utf8')).map((g) => g.id);
  const withKeys = (m, keys) => withKeysOf(baseLink(m, kind), keys);
  const links = [];
  for (const m of models) {
    for (const gpu of gpus) for (const tp of [1, 2, 4, 8]) links.push(withKeys(m, `gpu=${gpu}&tp=${tp}`));
    for (const f of flags) links.push(withKeys(m, `gpu=h100-sxm-80gb&tp=2&${f}`));
    if (kind === 'catalog' && m.hf_repo) links.push(`?v=1&model=${m.hf_repo}&gpu=h100-sxm-80gb&tp=2`, `?v=1&model=${m.hf_repo.toLowerCase()}`);
  }
  for (const gpu of allGpus) for (const m of [models[0], models[models.length - 1]]) for (const tp of [1, 2]) links.push(withKeys(m, `gpu=${gpu}&tp=${tp}`));
  if (kind === 'catalog') {
    links.push('?v=1', '?v=1&unit=gb');
    for (const id of exampleIds) for (const f of ['', '&util=0.95', '&max-model-len=8192', '&unit=gb', '&tp=2']) links.push(`?v=1&example=${id}${f}`);
    links.push('?v=1&model=qwen3-32b&gpu=h100-sxm-80gb&tp=2&max-model-len=16384');
  }
  // And a text typed with a character beyond ASCII (the glue passes it another way).
  return [...links, ...reopened(links, ['util=0.9', 'max-model-len=8192', 'tp=4']), [links[0], undefined, `${links[0]}\nutil=0,9\u00e9`]];
}

// The flags a shared link uses less often, each valid: older vLLM releases and their rules,
// --quantization, --dtype, an attention backend, a checkpoint's size, a GPU's memory or count
// given, a block count, speculative decoding, the hybrid KV cache manager or async scheduling
// off, measured values, other tenants, unified memory, a margin, a walkthrough's step.
export const UNCOMMON = ['vllm=0.10.2', 'vllm=0.11.0', 'vllm=0.13', 'vllm=0.15', 'quantization=fp8', 'quantization=awq', 'quantization=bitsandbytes', 'dtype=float32', 'dtype=float16', 'attention-backend=FLASHINFER', 'attention-backend=FLASH_ATTN', 'attention-backend=TRITON_ATTN', 'checkpoint-bytes=70GB', 'gpu-memory=80GiB', 'gpus=8', 'num-gpu-blocks-override=1000', 'spec=mtp', 'spec=draft_model&drafter=1GiB', 'spec-tokens=3', 'no-hybrid=true', 'no-async=true', 'load-peak=20GiB', 'tenants=2GiB', 'mem-available=100GiB', 'headroom=1GiB', 'overhead=2GiB', 'step=2'];
// What a typo in a link looks like: the page refuses each, naming the key.
export const REFUSED = ['util=1.5', 'tp=3', 'max-model-len=0', 'gpu=nope', 'kv-bytes=abc', 'pp=2&pp-partition=1,1'];

// The links V is trained on (splitParts), of either kind: every uncommon flag on every catalog
// model (catalog links by id, pasted configs by their config.json) on one of three GPUs, an
// explicit pipeline partition of its layers, and on every fourth model the measurements of a
// startup log on GPUs without bfloat16 (a T4, a V100), a GB10's unified memory with the memory
// the system reports available, and the inputs the page refuses; for
// catalog links, a seed example and an unknown one with a refused input and an unknown model
// too, and for pasted configs an empty config.json and architectures vLLM removed. Such a link
// waits for its stream up to the end of V: a catalog link for C, B, K and V, a pasted config
// for C, R and V.
export function uncommonLinks(root, kind, exampleIds) {
  const models = catalogModels(root);
  const gpus = ['h100-sxm-80gb', 'a100-sxm4-40gb', 'l40s-48gb'];
  const measured = ['weights=30GiB', 'free=70GiB', 'available-kv=20GiB', 'activation=3GiB', 'cuda-graph=2GiB', 'non-torch=1GiB'];
  const links = [];
  models.forEach((m, n) => {
    const put = (keys) => links.push(withKeysOf(baseLink(m, kind), keys));
    for (const f of UNCOMMON) put(`gpu=${gpus[n % gpus.length]}&tp=2&${f}`);
    const layers = m.config?.num_hidden_layers ?? m.config?.text_config?.num_hidden_layers;
    if (Number.isInteger(layers) && layers > 2) put(`gpu=h100-sxm-80gb&pp=2&pp-partition=${Math.ceil(layers / 2) + 1},${Math.floor(layers / 2) - 1}`);
    if (n % 4 !== 0) return;
    for (const gpu of ['t4-16gb', 'v100-sxm2-16gb']) for (const f of measured) put(`gpu=${gpu}&tp=2&${f}`);
    for (const tp of [1, 2]) put(`gpu=gb10-128gb&tp=${tp}&mem-available=100GiB`);
    for (const bad of REFUSED) put(bad);
  });
  if (kind === 'catalog') {
    for (const id of [exampleIds[0], 'no-such-example']) for (const bad of ['util=1.5', 'max-model-len=0']) links.push(`?v=1&example=${id}&${bad}`);
    links.push('?v=1&model=no-such-model', '?v=1&model=no-such-model&gpu=h100-sxm-80gb&tp=2');
  } else {
    links.push('?v=1#config=e30', '?v=1&gpu=h100-sxm-80gb&tp=2#config=e30');
    // A config.json of an architecture vLLM has removed (the verdict says until which release
    // it served it), under the newest release and under one that still served it.
    for (const architecture of ['MPTForCausalLM', 'BaichuanForCausalLM', 'ArcticForCausalLM']) {
      for (const m of [models[0], models[models.length - 1]]) {
        const config = `?v=1#config=${Buffer.from(JSON.stringify({ ...m.config, architectures: [architecture] })).toString('base64url')}`;
        for (const keys of ['gpu=h100-sxm-80gb&tp=2', 'gpu=h100-sxm-80gb&tp=2&vllm=0.20']) links.push(withKeysOf(config, keys));
      }
    }
  }
  return links;
}

// The other ways a page opens (public/early.js, src/verdict.rs's opening_texts): a link without a
// state of its own opens on the state stored by the last visit, and a reload of a tab on the texts
// typed there (`HREF\nKEY=TEXT&...`, percent-encoded; one text changed here, `edit`). Every
// tenth link of `links` so, as [link, stored, typed].
const reopened = (links, edits) =>
  links
    .filter((_, k) => k % 10 === 0)
    .flatMap((link, k) => {
      const hash = link.indexOf('#');
      const query = (hash < 0 ? link : link.slice(0, hash)).replace(/^\?/, '');
      const texts = [query, hash < 0 ? '' : link.slice(hash + 1)].filter(Boolean).join('&');
      return [
        ['', link, undefined],
        [link, undefined, `${link}\n${texts}&${edits[k % edits.length]}`],
      ];
    });

// Links outside the training, for the check: other GPUs and flags, the rules of older
// releases, measured values, drafters, unified memory, and inputs the program refuses.
export function checkLinks(root, kind, exampleIds) {
  const models = catalogModels(root);
  const gpus = JSON.parse(readFileSync(join(root, 'catalog', 'gpus.json'), 'utf8')).map((g) => g.id);
  const extra = ['vllm=0.10.2', 'vllm=0.11.0', 'vllm=0.13', 'vllm=0.20', 'weights=30GiB', 'free=70GiB', 'available-kv=20GiB', 'spec=mtp', 'pp=3&pp-partition=10,10,10', 'mem-available=100GiB', 'tenants=4GiB', 'max-model-len=0', 'tp=3', 'util=1.5', 'gpu=nope', 'block-size=7', 'num-gpu-blocks-override=1000', 'no-hybrid=true', 'attention-backend=FLASHINFER', 'quantization=fp8', 'dtype=float32', 'checkpoint-bytes=10GB', 'cuda-graph=2GiB', 'activation=3GiB', 'non-torch=1GiB'];
  const links = [];
  models.forEach((m, n) => {
    const put = (keys) => links.push(withKeysOf(baseLink(m, kind), keys));
    put(`gpu=${gpus[n % gpus.length]}&tp=${[1, 2, 4, 8][n % 4]}`);
    for (const e of extra) put(`gpu=${gpus[(n * 7) % gpus.length]}&tp=2&${e}`);
  });
  if (kind === 'catalog') for (const id of [...exampleIds, 'no-such-example']) for (const e of extra) links.push(`?v=1&example=${id}&${e}`);
  links.push('?v=1&model=no-such-model', '?v=1&tp=0', '?v=1#config=e30', '?v=1#config=not-base64!', '?v=1&gpu=h100-sxm-80gb#config=eyJhIjoxfQ', '?v=1&model=qwen3-32b\u00e9');
  return [...links, ...reopened(links, ['util=0.', 'max-num-seqs=64', 'gpu=a10-24gb', 'kv-bytes=abc'])];
}

// The catalog links' training states that open a seed example (trained into B with the beside
// ones: such a link waits for B and not K).
export const exampleLinks = (links) => links.filter((call) => JSON.stringify(call).includes('example='));

// A pasted config.json beside a seed example or a drafter named by draft-model: each catalog
// model's config so. Its link needs the reader and B (the examples' builders, the example's and
// the drafter's rows), not the other rows (K).
export function besideLinks(root, exampleIds) {
  const models = catalogModels(root);
  const drafters = ['qwen3-4b'].filter((id) => models.some((m) => m.id === id));
  const links = [];
  for (const m of models) {
    const config = baseLink(m, 'config');
    for (const id of exampleIds) for (const f of ['', '&util=0.95', '&tp=2', '&max-model-len=8192']) links.push(withKeysOf(config, `example=${id}${f}`));
    for (const d of drafters) for (const f of ['', '&tp=2', '&num-speculative-tokens=3']) links.push(withKeysOf(config, `gpu=h100-sxm-80gb&spec=draft_model&draft-model=${d}${f}`));
  }
  return links;
}

// Links outside the beside training, for the check: every fifth of them under an older release,
// and on another grid and utilization; and each catalog model's config beside a model named by
// id (the one it replaces, or the last's) and by its repo (public/early.js sends `model=`
// beside `config=` to this stream too).
export const besideCheckLinks = (root, exampleIds) => {
  const models = catalogModels(root);
  const named = models.flatMap((m, n) => {
    const config = baseLink(m, 'config');
    const other = models[(n + 1) % models.length];
    return [withKeysOf(config, `model=${m.id}&tp=2`), withKeysOf(config, `model=${other.hf_repo ?? other.id}`)];
  });
  return [
    ...besideLinks(root, exampleIds)
      .filter((_, k) => k % 5 === 0)
      .flatMap((l) => [withKeysOf(l, 'vllm=0.13'), withKeysOf(l, 'pp=2&util=0.8')]),
    ...named,
  ];
};

// A training or check entry: a link, or [link, stored, typed] (public/early.js's opening state).
export const opening = (call) => (Array.isArray(call) ? call : [call, undefined, undefined]);

// The glue wasm-bindgen wrote for the program, as a module that also exports its import table
// and its instance hook (boot.js reaches them through the inline module's factory).
export const importGlue = async (tmp, glueFile, tag) => {
  const text = readFileSync(glueFile, 'utf8');
  const file = join(tmp, `glue-${tag}.mjs`);
  writeFileSync(file, `${text}\nexport { __wbg_get_imports, __wbg_finalize_init };\n`);
  return import(pathToFileURL(file).href);
};

// The profile of `calls` (links or opening states) on a program instrumented by `wasm-split
// --instrument`, as its --profile reads it: which functions they run.
export async function profileOf({ tmp, prefix, glueFile, instrumented, calls, fail }) {
  const module = new WebAssembly.Module(fixExternrefExport(instrumented, fail));
  const glue = await importGlue(tmp, glueFile, `${prefix}-profile`);
  const wasm = glue.__wbg_finalize_init(new WebAssembly.Instance(module, glue.__wbg_get_imports()), module);
  for (const call of calls) glue.first_verdict(...opening(call));
  const size = 1 << 20;
  const ptr = wasm.__wbindgen_malloc(size, 1);
  const written = wasm.__write_profile(ptr, size);
  if (!(written > 8 && written < size)) fail(`${prefix}: the instrumented program wrote no profile (${written})`);
  return Buffer.from(new Uint8Array(wasm.memory.buffer, ptr, written));
}

// The function table's [initial, maximum] in a module that defines it (the first part).
function funcTableLimits(bytes, fail) {
  const b = Buffer.from(bytes);
  for (const [id, start] of sections(b)) {
    if (id !== 4) continue;
    for (const table of tables(b, start)) if (table.type === 0x70) return [table.min, table.max];
  }
  fail('the first part has no function table');
  return null;
}

// A later part imports the function table with the maximum the module it was split from had;
// the first part's grew in the splits after (each adds the slots of the functions it moves
// out). The import's maximum raised to the first part's, so that the part links to it.
function raiseTableImportMax(bytes, max, fail) {
  const b = Buffer.from(bytes);
  if (max === null) fail('the first part\'s function table has no maximum');
  for (const [id, start, end, sizeAt] of sections(b)) {
    if (id !== 2) continue;
    for (const table of imports(b, start, fail)) {
      if (table.kind !== 1 || table.type !== 0x70 || table.max === null) continue;
      if (max < table.max) fail(`a part's table import would shrink (maximum ${table.max} -> ${max})`);
      const delta = uleb(max).length - (table.end - table.maxAt);
      return Buffer.concat([b.subarray(0, sizeAt), Buffer.from(uleb(end - start + delta)), b.subarray(start, table.maxAt), Buffer.from(uleb(max)), b.subarray(table.end)]);
    }
  }
  fail('a part imports no function table with a maximum');
  return null;
}

// The orders in which a link's stream brings the parts after the first (public/early.js picks
// one by the link's keys): a catalog link's B and K first; a pasted config's the reader, then V
// (a pasted config's own flags, from a `vllm serve` command, are often uncommon ones) and X; a
// config beside an example, a drafter or a catalog model (`example=`, `draft-model=` or
// `model=`) the reader, then B, V and K (a drafter or a model named by its repo that is not the
// training's reads its row). A catalog link's V before X and R.
export const ORDERS = { catalog: ['B', 'K', 'V', 'X', 'R'], config: ['R', 'V', 'X', 'B', 'K'], beside: ['R', 'B', 'V', 'K', 'X'] };

// The file that holds each stream after the page's head (NAME_bg.wasm.EXT; the catalog links'
// is the rest of the .gz), written by scripts/inline-loader.mjs and named to public/early.js.
export const TAILS = { catalog: 'tail', config: 'rtail', beside: 'btail' };

// A stream's parts up to the end of one of them, C first.
export const upTo = (stream, last) => ['C', ...ORDERS[stream].slice(0, ORDERS[stream].indexOf(last) + 1)];

// Each kind of training state, its stream and the part of it it may need up to (the build
// fails if one needs more): a catalog link's B and K, a seed example's B, a pasted config's R, a
// config beside an example or a drafter R and B, an uncommon flag's or a refused input's V
// (scripts/measure-budgets.mjs reads each kind's critical path from these).
export const NEEDS = {
  catalog: ['catalog', 'K'],
  examples: ['catalog', 'B'],
  config: ['config', 'R'],
  beside: ['beside', 'B'],
  uncommonCatalog: ['catalog', 'V'],
  uncommonConfig: ['config', 'V'],
};
// The parts a kind of state may need: C, then its stream's up to its own.
export const needed = (kind) => upTo(...NEEDS[kind]);

// Splits the verdict program (`bytes`, after wasm-opt, built with every row, the examples and
// the config.json reader) in six, by what its training states run: C, what both catalog links
// and pasted configs run; B, what a config beside an example or a drafter, or a seed example's
// link, runs beyond a pasted config's (most of it catalog links run too); K, the rest of what
// catalog links run (the rows no example and no beside state reads); R, what only pasted
// configs run (the reader, its JSON parser, vLLM's registry); V, what the uncommon flags and
// the refused inputs run beyond those (uncommonLinks); X, the rest. Five chained runs of
// wasm-split (C+B+K+R+V | X, then C+B+K+R | V, then C+B+K | R, then C+B | K, then C | B); the
// later parts link to the first's exports. Returns the parts (each optimised again), or fails
// the build: every training and check state must get the whole program's answer from the parts
// its stream brings first, linked in that order (ORDERS), one more after each placeholder's
// throw, from C alone on (public/boot.js starts with the stream's second part linked, which
// changes no answer: a part not linked only throws); a training state must need no more than
// its kind's parts (NEEDS).
export async function splitParts({ tmp, prefix, bytes, glueFile, training, checks, wasmSplit, wasmOpt, fail }) {
  const run = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const at = (name) => join(tmp, `${prefix}.${name}`);
  writeFileSync(at('whole.wasm'), bytes);
  // 1. Which functions each kind's training states run (by index among the defined functions,
  //    which --keep-funcs reads as names: the program has no name section).
  run(wasmSplit, ['--instrument', ...FEATURES, at('whole.wasm'), '-o', at('instrumented.wasm')]);
  const instrumented = readFileSync(at('instrumented.wasm'));
  const ran = {};
  for (const [kind, calls] of Object.entries(training)) {
    const p = await profileOf({ tmp, prefix: `${prefix}-${kind}`, glueFile, instrumented, calls, fail });
    ran[kind] = new Set();
    for (let f = 0; 8 + 4 * f + 4 <= p.length; f++) if (p.readUInt32LE(8 + 4 * f)) ran[kind].add(f);
  }
  // Each function goes in the part the fewest links wait for (PREFER) of those every kind that
  // runs it may need (NEEDS): what both catalog links and pasted configs run in C, what only a
  // config beside an example or a drafter and the examples run in B, what only catalog links
  // run in K, what only pasted configs run in R, what only the uncommon flags and refused
  // inputs run in V, what no training state runs in X. A function a catalog link with an
  // uncommon flag shares with pasted configs only goes in C (a catalog link never brings R
  // before V), and so does one a pasted config with an uncommon flag shares with the examples.
  const PREFER = ['V', 'K', 'B', 'R', 'C'];
  const into = { C: [], B: [], K: [], R: [], V: [] };
  const functions = new Set(Object.values(ran).flatMap((set) => [...set]));
  for (const f of [...functions].sort((a, b) => a - b)) {
    let allowed = PREFER;
    for (const [kind, set] of Object.entries(ran)) if (set.has(f)) allowed = allowed.filter((n) => needed(kind).includes(n));
    into[allowed[0]].push(f);
  }
  const { C, B, K, R, V } = into;
  const keep = (name, list) => writeFileSync(at(name), `${list.join('\n')}\n`);
  keep('CBKRV.funcs', [...C, ...B, ...K, ...R, ...V]);
  keep('CBKR.funcs', [...C, ...B, ...K, ...R]);
  keep('CBK.funcs', [...C, ...B, ...K]);
  keep('CB.funcs', [...C, ...B]);
  keep('C.funcs', C);
  // 2. The splits, names kept (-g) so that each run finds the functions by the names the one
  //    before gave them.
  const split = (input, funcs, one, two) => {
    run(wasmSplit, ['-g', ...FEATURES, `--keep-funcs=@${at(funcs)}`, `--placeholder-namespace=${NS.placeholders}`, `--import-namespace=${NS.first}`, at(input), '-o1', at(one), '-o2', at(two)]);
    writeFileSync(at(one), fixExternrefExport(readFileSync(at(one)), fail));
  };
  split('whole.wasm', 'CBKRV.funcs', 'CBKRV.wasm', 'X.wasm');
  split('CBKRV.wasm', 'CBKR.funcs', 'CBKR.wasm', 'V.wasm');
  split('CBKR.wasm', 'CBK.funcs', 'CBK.wasm', 'R.wasm');
  split('CBK.wasm', 'CB.funcs', 'CB.wasm', 'K.wasm');
  split('CB.wasm', 'C.funcs', 'C.wasm', 'B.wasm');
  // Each part optimised again (wasm-split leaves its trampolines as they are), without names
  // or the toolchain's notes (its producers and target features).
  const optimised = (name) => {
    run(wasmOpt, [...OPTIMISE, '--strip-producers', '--strip-target-features', ...FEATURES, at(`${name}.wasm`), '-o', at(`${name}.opt.wasm`)]);
    return readFileSync(at(`${name}.opt.wasm`));
  };
  const parts = { C: optimised('C') };
  const [, max] = funcTableLimits(parts.C, fail);
  for (const n of ORDERS.catalog) parts[n] = raiseTableImportMax(optimised(n), max, fail);
  // 3. The check, in Node, against the whole program.
  const wholeGlue = await importGlue(tmp, glueFile, `${prefix}-whole`);
  const wholeModule = new WebAssembly.Module(bytes);
  wholeGlue.__wbg_finalize_init(new WebAssembly.Instance(wholeModule, wholeGlue.__wbg_get_imports()), wholeModule);
  const modules = Object.fromEntries(Object.entries(parts).map(([n, p]) => [n, new WebAssembly.Module(p)]));
  const reached = {};
  const placeholders = { [NS.placeholders]: new Proxy({}, { get: () => () => { throw reached; } }) };
  const answered = {};
  // Each stream's states: [state, the kind of training state it is, or null for a check state].
  // A seed example's training state needs no more than C and B (NEEDS.examples).
  const exampleStates = new Set(training.examples ?? []);
  const tagged = (kind, calls) => calls.map((call) => [call, kind === 'catalog' && exampleStates.has(call) ? 'examples' : kind]);
  const untagged = (calls) => calls.map((call) => [call, null]);
  const streams = {
    catalog: [...tagged('catalog', training.catalog), ...tagged('uncommonCatalog', training.uncommonCatalog), ...untagged(checks.catalog)],
    config: [...tagged('config', training.config), ...tagged('uncommonConfig', training.uncommonConfig), ...untagged(checks.config)],
    beside: [...tagged('beside', training.beside), ...untagged(checks.beside)],
  };
  for (const [stream, states] of Object.entries(streams)) {
    const order = ORDERS[stream];
    // One copy of the glue per number of parts linked, handed a fresh instance after a throw
    // (which leaves an instance's stack and heap halfway).
    const glues = [];
    for (let n = 0; n <= order.length; n++) glues.push(await importGlue(tmp, glueFile, `${prefix}-${stream}-${n}`));
    const fresh = (n) => {
      const i = new WebAssembly.Instance(modules.C, { ...glues[n].__wbg_get_imports(), ...placeholders });
      for (const name of order.slice(0, n)) new WebAssembly.Instance(modules[name], { [NS.first]: i.exports });
      glues[n].__wbg_finalize_init(i, modules.C);
    };
    for (let n = 0; n <= order.length; n++) fresh(n);
    answered[stream] = new Array(order.length + 1).fill(0);
    for (const [call, kind] of states) {
      const args = opening(call);
      const what = JSON.stringify(call);
      const want = JSON.stringify(wholeGlue.first_verdict(...args));
      for (let n = 0; ; n++) {
        let got;
        try {
          got = JSON.stringify(glues[n].first_verdict(...args));
        } catch (e) {
          if (e !== reached) fail(`${prefix}: the program's first part with ${order.slice(0, n).join(', ') || 'no other'} threw on ${what}: ${e}`);
          if (n === order.length) fail(`${prefix}: a placeholder threw with every part linked, on ${what}`);
          if (kind !== null && n + 1 === needed(kind).length) fail(`${prefix}: the ${kind} training state ${what} needs more than ${needed(kind).join(', ')}`);
          fresh(n);
          continue;
        }
        if (got !== want) fail(`${prefix}: the split program (C and ${order.slice(0, n).join(', ') || 'no other'}) answers ${what} otherwise than the whole one:\n  ${got}\n  ${want}`);
        answered[stream][n]++;
        break;
      }
    }
  }
  return { parts, functions: { C: C.length, B: B.length, K: K.length, R: R.length, V: V.length }, answered };
}
