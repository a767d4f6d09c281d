// The first paint and the first verdict, before the app: the static shell in index.html shows
// the app's own header and a line naming what the link plans (from the address, as text); then
// the small verdict program (src/bin/verdict.rs) writes the banner and the replica's three
// figures, and the app replaces the shell with the live page showing the same words. No flash
// of a wrong verdict: for every link below the shell's words are the app's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, assertClean, BASE_URL } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const FIGURES = ['kv-cache-tokens', 'max-concurrency', 'full-length-requests'];

/** The banner and the three figures as a visitor reads them, from the shell or the app. */
const readVerdict = (page) =>
  page.evaluate((ids) => {
    const banner = document.querySelector('[data-testid=verdict]');
    const lines = [...banner.querySelectorAll('[role=status] p')].map((p) => p.textContent);
    const figures = ids.map((id) => {
      const dd = document.querySelector(`dd[data-testid="${id}"]`);
      const badge = dd.previousElementSibling.querySelector('.badge');
      return [id, dd.textContent, badge.textContent];
    });
    // The unit radio checked (the shell's, from the verdict program; none before it runs).
    const unit = document.querySelector('input[name=unit]:checked')?.dataset.testid ?? null;
    return { class: banner.className, lines, figures, unit };
  }, FIGURES);

/** Holds the app's wasm back in `context` until the function it answers is called. */
async function holdApp(context) {
  let release;
  const gate = new Promise((r) => {
    release = r;
  });
  await context.route('**/headroom-web-*_bg.wasm', async (route) => {
    await gate;
    await route.continue();
  });
  return release;
}

/** A page whose app wasm is held back until `release()`; the verdict program's is not. */
async function held(options = {}) {
  const o = await open(browser, null, options);
  return { ...o, release: await holdApp(o.context) };
}

test('the shell names the link before any program runs, and shows no figure', async () => {
  const { context, page, problems } = await open(browser, null);
  let release;
  const gate = new Promise((r) => {
    release = r;
  });
  // Every program: the app's wasm, and the verdict programs plain or gzip-compressed.
  await context.route(/\.wasm(?:\.gz|\.r?tail)?$/, async (route) => {
    await gate;
    await route.continue();
  });
  const link = '/?v=1&model=llama-3.1-70b-instruct&tp=4&gpu=h200-141gb&gpus=4&x=<img src=x onerror=alert(1)>';
  await page.goto(new URL(link, BASE_URL).href, { waitUntil: 'domcontentloaded' });
  await page.waitForFunction(() => document.getElementById('shell-scenario')?.textContent.startsWith('Planning'));
  const line = await page.textContent('#shell-scenario');
  assert.match(line, /^Planning model llama-3\.1-70b-instruct, on 4 x h200-141gb, TP=4:/);
  assert.equal(await page.locator('#shell header.top h1').textContent(), 'Headroom');
  // No verdict and no figure before the plan: the banner is pending, the figures are not numbers.
  assert.equal(await page.getAttribute('[data-testid=verdict]', 'class'), 'verdict pending');
  assert.equal(await page.textContent('[data-testid=verdict-headline]'), 'Working out the plan…');
  for (const id of FIGURES) assert.equal(await page.textContent(`[data-testid=${id}]`), '…');
  assert.equal(await page.locator('input[name=unit]:checked').count(), 0, 'no unit before the plan');
  assert.equal(await page.locator('img').count(), 0, 'the address is never markup');
  release();
  await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
  assert.equal(await page.locator('#shell').count(), 0);
  assert.equal(await page.locator('#shell-figures').count(), 0);
  assert.equal(await page.locator('header.top').count(), 1);
  for (const id of ['verdict', ...FIGURES]) assert.equal(await page.locator(`[data-testid=${id}]`).count(), 1, id);
  assert.match(await page.textContent('[data-testid=verdict-headline]'), /^Starts/);
  // The ignored x= parameter gets the app's notice, as for any link.
  await page.waitForSelector('[data-testid=url-notice]');
  assertClean(problems);
  await context.close();
});

// The icon is in the page (no request for it, first visit or later), and is a picture.
test("the page's icon is in the page itself, and draws", async () => {
  const { context, page } = await open(browser, '/?v=1');
  const href = await page.getAttribute('link[rel=icon]', 'href');
  assert.match(href, /^data:image\/svg\+xml,%3Csvg /);
  assert.equal(await page.locator('link[rel=icon]').count(), 1);
  const size = await page.evaluate(
    (src) =>
      new Promise((resolve) => {
        const img = new Image();
        img.onload = () => resolve([img.naturalWidth, img.naturalHeight]);
        img.onerror = () => resolve(null);
        img.src = src;
      }),
    href,
  );
  assert.ok(size && size[0] > 0 && size[1] > 0, `the icon does not draw: ${JSON.stringify(size)}`);
  await context.close();
});

// The line counts GPUs only as the link writes them (gpus): without it, the GPU and the grid the
// link gives; how many GPUs the plan uses is the verdict's to say (it read "on each x" before).
test("the shell's line names a link's GPU count only as the link writes it", async () => {
  const { context, page } = await open(browser, null);
  // No program answers: the line is all there is to read.
  await context.route(/\.wasm(?:\.gz|\.r?tail)?$/, () => {});
  const cases = [
    ['?v=1&gpu=h100-sxm-80gb&tp=2#config=e30', 'Planning a pasted config.json, on h100-sxm-80gb, TP=2:'],
    ['?v=1&model=qwen3-32b&gpu=a100-sxm4-40gb&tp=2&pp=2&dp=3', 'Planning model qwen3-32b, on a100-sxm4-40gb, TP=2 x PP=2 x DP=3:'],
    ['?v=1&model=qwen3-32b&gpu=l40s-48gb', 'Planning model qwen3-32b, on l40s-48gb:'],
    ['?v=1&model=qwen3-32b&gpu=l40s-48gb&tp=2&gpus=8', 'Planning model qwen3-32b, on 8 x l40s-48gb, TP=2:'],
    ['?v=1&model=qwen3-32b&gpu=l40s-48gb&tp=two', 'Planning model qwen3-32b, on l40s-48gb, TP=two:'],
    ['?v=1&model=qwen3-32b&gpu=l40s-48gb&tp=99999', 'Planning model qwen3-32b, on l40s-48gb, TP=99999:'],
    ['?v=1&example=s3-synthetic-tp4&gpu=h100-sxm-80gb', 'Planning the example s3-synthetic-tp4, on h100-sxm-80gb:'],
  ];
  for (const [link, start] of cases) {
    await page.goto(new URL(link, BASE_URL).href, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => document.getElementById('shell-scenario')?.textContent.startsWith('Planning'));
    const line = await page.textContent('#shell-scenario');
    assert.ok(line.startsWith(start), `${link}: ${line}`);
  }
  await context.close();
});

// Each link's first verdict, then the app's: the same class, lines and figures. The default
// page and the header's examples were planned at build time (no verdict program is fetched);
// any other link runs the verdict program (src/bin/verdict.rs), in six parts
// (scripts/split-verdict.mjs): C, what every common link runs, then B (what catalog links and a
// config beside an example or a drafter run: the examples' builders, their rows), K (the other
// catalog rows), R (the config.json reader), V (the uncommon flags and the refused inputs) and X
// (the rest). A catalog link asks for the stream that brings B, K and V after C
// (NAME_bg.wasm.tail), a pasted config the one that brings R, then V (NAME_bg.wasm.rtail), a
// config beside a model, an example or a drafter the one that brings R, then B
// (NAME_bg.wasm.btail); the run links
// the stream's next part each time a placeholder throws. Each row: the stream asked for and the
// parts linked after C.
const pasted = (architecture) => Buffer.from(
  JSON.stringify({
    architectures: [architecture],
    model_type: 'llama',
    num_hidden_layers: 32,
    hidden_size: 4096,
    num_attention_heads: 32,
    num_key_value_heads: 8,
    intermediate_size: 14336,
    vocab_size: 128256,
    max_position_embeddings: 131072,
    torch_dtype: 'bfloat16',
  }),
).toString('base64url');
const CONFIG = pasted('LlamaForCausalLM');
const LINKS = [
  ['the default page', '/', 'planned'],
  ['an example', '/?v=1&example=s1-three-cards', 'planned'],
  ['an example in decimal GB', '/?v=1&example=s3-synthetic-tp4&unit=gb', 'planned'],
  ['the unified-memory example', '/?v=1&example=s2-unified-gate', 'planned'],
  ['start over', '/?v=1', 'planned'],
  ['another model and grid', '/?v=1&model=llama-3.1-70b-instruct&tp=4&max-model-len=8192', 'tail', 'B+K'],
  ['a model by its Hugging Face repo', '/?v=1&model=Qwen/Qwen3-32B&tp=2&gpu=a100-sxm4-80gb', 'tail', 'B+K'],
  ['a catalog link in decimal GB', '/?v=1&model=qwen3-32b&tp=2&unit=gb', 'tail', 'B+K'],
  ['a start that fails', '/?v=1&model=llama-3.1-70b-instruct&util=0.5', 'tail', 'B+K'],
  ['a grid that cannot be planned', '/?v=1&model=llama-3.1-70b-instruct&tp=3', 'tail', 'B+K'],
  // An input the page refuses (its message) and the uncommon flags are V's, after K.
  ['a link with an unknown GPU and key', '/?v=1&tp=2&gpu=no-such-card&x=<b>y</b>', 'tail', 'B+K+V'],
  // An example with keys of its own (a shared what-if) is not planned ahead: B carries the
  // examples' builders, and it needs no other rows (K).
  ['an example with one more key', '/?v=1&example=s1-three-cards&util=0.95', 'tail', 'B'],
  ['the unified-memory example with another pin', '/?v=1&example=s2-unified-gate&kv-bytes=8e9', 'tail', 'B'],
  ['an example in decimal GB with a grid of its own', '/?v=1&example=s3-synthetic-tp4&unit=gb&tp=2&util=0.95', 'tail', 'B'],
  ['an example with a key encoded', '/?v=1&%65xample=s1-three-cards&util=0.95', 'tail', 'B+K+V+X'],
  ['an example named in the fragment', '/?v=1&util=0.95#example=s3-synthetic-tp4', 'tail', 'B'],
  ['a pasted config.json', `/?v=1&tp=2&gpu=h100-sxm-80gb&config=${CONFIG}`, 'rtail', 'R'],
  ['a pasted config.json in the fragment', `/?v=1&gpu=l40s-48gb#config=${CONFIG}`, 'rtail', 'R'],
  ['a broken pasted config.json', '/?v=1&config=e30', 'rtail', 'R'],
  // A model, a drafter or an example beside a config: the stream that brings B after the
  // reader (the examples' builders, the drafter's row), then V and K (a model named by its repo
  // or unknown).
  ['a pasted config.json beside the model it replaces', `/?v=1&model=qwen3-32b&tp=2&config=${CONFIG}`, 'btail', 'R+B'],
  ['a pasted config.json beside a model named by its repo', `/?v=1&model=Qwen/Qwen3-32B#config=${CONFIG}`, 'btail', 'R+B+V+K'],
  ['a pasted config.json beside an unknown model', `/?v=1&model=no-such-model&config=${CONFIG}`, 'btail', 'R+B+V+K'],
  ['a pasted config.json with a drafter named', `/?v=1&spec=draft_model&draft-model=qwen3-4b&config=${CONFIG}`, 'btail', 'R+B'],
  // A key the loader's test does not see (percent-encoded): a pasted config's stream, which
  // brings B last.
  ['a pasted config.json with a drafter under an encoded key', `/?v=1&spec=draft_model&%64raft-model=qwen3-4b&config=${CONFIG}`, 'rtail', 'R+V+X+B'],
  // The verdict opens with what vLLM does with an architecture it does not serve.
  ['a pasted architecture vLLM never registered', `/?v=1&config=${pasted('FooBarForCausalLM')}`, 'rtail', 'R'],
  ['a pasted architecture vLLM removed', `/?v=1&tp=2&config=${pasted('MPTForCausalLM')}`, 'rtail', 'R+V'],
  ['a pasted config.json and an example', `/?v=1&example=s1-three-cards&config=${CONFIG}`, 'btail', 'R+B'],
  ['a pasted config.json and an example under an encoded key', `/?v=1&%65xample=s1-three-cards&config=${CONFIG}`, 'rtail', 'R+V+X+B'],
  // The same for config= itself: the catalog links' stream, whose parts plan it all the same
  // once R is in.
  ['a pasted config.json under an encoded key', `/?v=1&tp=2&%63onfig=${CONFIG}`, 'tail', 'B+K+V+X+R'],
  // A link with an uncommon flag (an older vLLM release's rules) or an input the program
  // refuses is planned again once V is in, with the same words.
  ['an older vLLM release, from V', '/?v=1&model=llama-3.1-8b-instruct&vllm=0.10.2', 'tail', 'B+K+V'],
  ['an unknown GPU, from V', '/?v=1&model=qwen3-32b&gpu=no-such-card', 'tail', 'B+K+V'],
  ['a pasted config.json under an older release, from V', `/?v=1&vllm=0.10.2&config=${CONFIG}`, 'rtail', 'R+V'],
  ['a pasted config.json with --quantization, from V', `/?v=1&gpu=h100-sxm-80gb&tp=2&quantization=fp8#config=${CONFIG}`, 'rtail', 'R+V'],
  ['a pasted config.json on an unknown GPU, from V', `/?v=1&gpu=no-such-card#config=${CONFIG}`, 'rtail', 'R+V'],
  ['a catalog link the common parts plan', '/?v=1&model=qwen3-32b&tp=2&max-model-len=16384', 'tail', 'B+K'],
  ['a pasted config.json the common parts plan', `/?v=1&gpu=h100-sxm-80gb&tp=2#config=${CONFIG}`, 'rtail', 'R'],
];

// The verdict program's forms a page asked for: its catalog links' stream (`tail`), a pasted
// config's (`rtail`), a config's beside a model, an example or a drafter (`btail`), its whole
// .gz (`gz`) or the plain file (`plain`).
const verdictStreams = (problems) =>
  problems.requests.flatMap((u) => {
    const m = u.match(/\/headroom-verdict-[0-9a-f]{16}_bg\.wasm(?:\.(gz|tail|rtail|btail))?$/);
    return m ? [m[1] ?? 'plain'] : [];
  });
const fetchedVerdict = (problems) => verdictStreams(problems).length > 0;

// The parts the run linked after the first (boot.js marks each one it waits for), joined by +.
const partsLinked = (page) =>
  page.evaluate(() =>
    performance
      .getEntriesByType('mark')
      .filter((m) => m.name.startsWith('verdict-part-'))
      .map((m) => m.name.slice('verdict-part-'.length))
      .join('+'),
  );

for (const [what, link, stream, parts] of LINKS) {
  test(`the first verdict before the app is the app's own: ${what}`, async () => {
    const { context, page, problems, release } = await held();
    await page.goto(new URL(link, BASE_URL).href, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#shell-verdict:not(.pending)');
    const first = await readVerdict(page);
    assert.equal(await partsLinked(page), parts ?? '', `the parts ${link} linked after the first`);
    assert.notEqual(first.lines[0], 'Working out the plan…');
    if (/architecture vLLM/.test(what)) assert.match(first.lines.join(' '), /vLLM 0\.33\.0 (has no model class|no longer serves)/);
    assert.equal(await page.locator('#shell').count(), 1, 'the app has not run');
    assert.deepEqual(verdictStreams(problems), stream === 'planned' ? [] : [stream], `the verdict program's stream fetched for ${link}`);
    // The banner keeps the app's "Change the inputs" button (phones show it) unless the app's
    // goes to the input at fault.
    assert.equal(await page.locator('#shell-verdict button').count(), first.class.includes('invalid') ? 0 : 1);
    release();
    await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
    assert.equal(await page.locator('#shell').count(), 0);
    assert.deepEqual(await readVerdict(page), first, link);
    assert.equal(await page.locator('b').count(), 0, 'the address is never markup');
    assertClean(problems);
    await context.close();
  });
}

// The verdict program's fetch is the first verdict's longest wait: the page's first script
// (public/early.js, a classic script the parser runs where it stands) starts it, before the
// inline module (boot.js), which runs only once the parser and the first layout are done, and
// before the app's wasm is asked for.
test("the verdict program is fetched by the page's first script, before the loader runs", async () => {
  const { context, page, problems, release } = await held();
  await page.goto(new URL('/?v=1&model=llama-3.1-70b-instruct&tp=4', BASE_URL).href, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('#shell-verdict:not(.pending)');
  const order = await page.evaluate(() => {
    const start = (re) => performance.getEntriesByType('resource').find((e) => re.test(e.name))?.startTime;
    return {
      early: typeof headroomEarly === 'object' && headroomEarly.program !== null,
      verdict: start(/\/headroom-verdict-[0-9a-f]{16}_bg\.wasm(?:\.gz|\.[rb]?tail)?$/),
      boot: performance.getEntriesByName('boot')[0]?.startTime,
      app: start(/\/headroom-web-[0-9a-f]+_bg\.wasm$/),
    };
  });
  assert.ok(order.early, 'public/early.js chose a verdict program');
  assert.ok(order.verdict !== undefined && order.boot !== undefined, JSON.stringify(order));
  assert.ok(order.verdict <= order.boot, `the verdict program's fetch started before boot.js ran: ${JSON.stringify(order)}`);
  assert.ok(order.app === undefined || order.app >= order.verdict, JSON.stringify(order));
  assert.deepEqual(verdictStreams(problems), ['tail']);
  release();
  await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
  assertClean(problems);
  await context.close();
});

// The verdict programs are kept beside themselves gzip-compressed by zopfli (NAME_bg.wasm.gz),
// which the page fetches and decompresses where the browser can (public/early.js). A browser
// without DecompressionStream fetches the plain file; a server or proxy that decoded the .gz
// already (Content-Encoding: gzip) hands over the wasm itself, compiled as it is. Either way
// the verdict before the app is the app's.
for (const [link, last] of [
  ['/?v=1&model=llama-3.1-70b-instruct&tp=4&max-model-len=8192', false],
  ['/?v=1&%65xample=s1-three-cards&util=0.95', true],
])
test(`the verdict program comes gzip-compressed, plain without DecompressionStream, or decoded by the server${last ? ' (a link that reaches X)' : ''}`, async () => {
  const run = async (setup) => {
    const { context, page, problems, release } = await held();
    await setup(context);
    await page.goto(new URL(link, BASE_URL).href, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#shell-verdict:not(.pending)');
    const first = await readVerdict(page);
    assert.equal((await partsLinked(page)).split('+').includes('X'), last, link);
    const asked = problems.requests.filter((u) => /\/headroom-verdict-/.test(u)).map((u) => new URL(u).pathname);
    release();
    await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
    assert.deepEqual(await readVerdict(page), first, 'the app shows the verdict the program painted');
    assertClean(problems);
    await context.close();
    return { first, asked };
  };
  // The program begins in the page (scripts/inline-loader.mjs's HEAD_BYTES, a comment at the end
  // of its body): the page asks for the rest of a catalog link's stream only.
  const gz = await run(async () => {});
  assert.equal(gz.asked.length, 1, gz.asked.join(' '));
  assert.match(gz.asked[0], /^\/headroom-verdict-[0-9a-f]{16}_bg\.wasm\.tail$/);
  const wasm = gz.asked[0].slice(0, -'.tail'.length);
  const plain = await run((context) => context.addInitScript(() => delete globalThis.DecompressionStream));
  assert.deepEqual(plain.asked, [wasm]);
  // A proxy that strips the page's comments, and decodes the .gz (Content-Encoding: gzip): the
  // page cancels the .tail, asks for the whole .gz and compiles the wasm it gets. These
  // routes answer before the harness's, which records the other requests.
  const served = [];
  const decoded = await run(async (context) => {
    await context.route(
      (u) => u.pathname === '/',
      async (route) => {
        const res = await route.fetch();
        const body = (await res.text()).replace(/<!--headroom-head:[^>]*-->/g, '');
        await route.fulfill({ response: res, body });
      },
    );
    await context.route(/_bg\.wasm\.gz$/, async (route) => {
      served.push(new URL(route.request().url()).pathname);
      const res = await route.fetch({ url: route.request().url().slice(0, -'.gz'.length) });
      await route.fulfill({ response: res, headers: { 'content-type': 'application/wasm' } });
    });
  });
  assert.deepEqual(served, [`${wasm}.gz`]);
  assert.deepEqual(decoded.asked, [`${wasm}.tail`]);
  assert.deepEqual(plain.first, gz.first);
  assert.deepEqual(decoded.first, gz.first);
  assert.notEqual(gz.first.lines[0], 'Working out the plan…');
});

test('a stored pasted config takes the reader\'s stream, a stored example the catalog links\', and a link with its own state neither', async () => {
  const seeded = async (link, stream, state = `?v=1&tp=2&gpu=h100-sxm-80gb&config=${CONFIG}`) => {
    const { context, page, problems, release } = await held();
    await context.addInitScript((q) => localStorage.setItem('headroom:last-query', q), state);
    await page.goto(new URL(link, BASE_URL).href, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#shell-verdict:not(.pending)');
    const first = await readVerdict(page);
    assert.deepEqual(verdictStreams(problems), [stream], link);
    release();
    await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
    assert.deepEqual(await readVerdict(page), first, link);
    assertClean(problems);
    await context.close();
    return first;
  };
  // A link without a state opens on the stored one, a pasted config: the reader's stream.
  const stored = await seeded('/', 'rtail');
  // A link with a state of its own does not read the stored one.
  const own = await seeded('/?v=1&model=llama-3.1-70b-instruct&tp=4', 'tail');
  assert.notDeepEqual(own.figures, stored.figures);
  // A stored what-if on a seed example (not planned ahead): the catalog links' stream.
  const example = await seeded('/', 'tail', '?v=1&example=s3-synthetic-tp4&util=0.95');
  assert.notDeepEqual(example.figures, own.figures);
});

// A host that did not publish the programs' .gz files (nor the .tail): the page asks for the
// plain file.
test('a verdict program without its .gz comes plain', async () => {
  const { context, page, problems, release } = await held();
  const refused = [];
  await context.route(/\/headroom-verdict-[^/]*_bg\.wasm\.(?:gz|r?tail)$/, (route) => {
    refused.push(new URL(route.request().url()).pathname);
    return route.fulfill({ status: 404, body: 'gone' });
  });
  await page.goto(new URL('/?v=1&model=llama-3.1-70b-instruct&tp=4', BASE_URL).href, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('#shell-verdict:not(.pending)');
  const first = await readVerdict(page);
  assert.match(first.lines[0], /^(Starts|Fails at)/);
  // The .tail (the page carries the .gz's start), then the .gz, then the plain file.
  assert.equal(refused.length, 2, refused.join(' '));
  assert.ok(refused[0].endsWith('.tail') && refused[1] === `${refused[0].slice(0, -'.tail'.length)}.gz`, refused.join(' '));
  const asked = problems.requests.filter((u) => /\/headroom-verdict-/.test(u)).map((u) => new URL(u).pathname);
  assert.deepEqual(asked, [refused[1].slice(0, -'.gz'.length)]);
  release();
  await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
  assert.deepEqual(await readVerdict(page), first);
  // The refused .gz is the only console message (Chromium reports a 404).
  problems.console = problems.console.filter((m) => !/404|Failed to load resource/.test(m));
  assertClean(problems);
  await context.close();
});

test('a verdict program that does not arrive leaves the verdict to the app, with no error', async () => {
  const { context, page, problems } = await open(browser, null);
  const refused = [];
  await context.route(/\/headroom-verdict-[^/]*_bg\.wasm(?:\.gz|\.r?tail)?$/, (route) => {
    refused.push(new URL(route.request().url()).pathname);
    return route.fulfill({ status: 404, body: 'gone' });
  });
  await page.goto(new URL('/?v=1&model=llama-3.1-70b-instruct&tp=4', BASE_URL).href);
  await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
  assert.match(await page.textContent('[data-testid=verdict-headline]'), /^(Starts|Fails at)/);
  assert.equal(await page.locator('[data-testid="panic-panel"]').count(), 0);
  // The rest of the .gz after the page's head, the .gz, then the plain file, once each.
  assert.deepEqual(verdictStreams({ requests: refused }), ['tail', 'gz', 'plain'], 'asked for once in each form');
  assert.ok(refused[0].endsWith('.tail') && refused[1].endsWith('.gz') && refused[2].endsWith('.wasm'), refused.join(' '));
  // The failed request is the only console message (Chromium reports a 404).
  assert.ok(problems.console.every((m) => /404|Failed to load resource/.test(m)), problems.console.join('\n'));
  await context.close();
});

// public/early.js asks for a link's stream before it reads storage; a reload of this tab with
// other texts typed for the same address opens with them, and when they need the other stream
// the first is kept: it brings every part (asking again would cost a round trip and C again).
test('texts typed for this address that need the other stream keep the one asked for first', async () => {
  const link = '/?v=1&model=llama-3.1-70b-instruct&tp=4';
  const { context, page, problems, release } = await held();
  await context.addInitScript(
    ([href, texts]) => sessionStorage.setItem('headroom:typed', `${href}\n${texts}`),
    [link.slice(1), `?v=1&tp=2&gpu=h100-sxm-80gb&config=${CONFIG}`],
  );
  await page.goto(new URL(link, BASE_URL).href, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('#shell-verdict:not(.pending)');
  const first = await readVerdict(page);
  assert.deepEqual(verdictStreams(problems), ['tail']);
  assert.equal(await page.evaluate(() => headroomEarly.program.kind), 'catalog');
  assert.equal(await partsLinked(page), 'B+K+V+X+R', 'the reader, after the catalog links\' parts, V and X');
  release();
  await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
  assert.deepEqual(await readVerdict(page), first);
  assert.equal(await page.inputValue('[data-testid=tensor-parallel-size]'), '2', 'the typed texts, not the address');
  assertClean(problems);
  await context.close();
});

test('the first verdict reads the stored state and a reload keeps the texts as typed', async () => {
  // A link without a state opens on the last one kept in the browser (local storage).
  const { context, page, problems, release } = await held();
  await context.addInitScript(() => {
    if (!sessionStorage.getItem('seeded')) {
      localStorage.setItem('headroom:last-query', '?v=1&model=llama-3.1-70b-instruct&tp=4');
      sessionStorage.setItem('seeded', '1');
    }
  });
  await page.goto(new URL('/', BASE_URL).href, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('#shell-verdict:not(.pending)');
  const first = await readVerdict(page);
  // The default page's verdict planned ahead is not this one: the program plans the stored state.
  assert.ok(fetchedVerdict(problems), 'the verdict program ran');
  release();
  await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
  assert.deepEqual(await readVerdict(page), first);
  const tp4 = first.figures.find(([id]) => id === 'max-concurrency')[1];
  // A text in error, then a reload: the first verdict carries the app's warning.
  await page.fill('[data-testid=max-num-seqs]', 'lots');
  await page.waitForFunction(() => document.querySelector('[data-testid=verdict] .warn')?.textContent.includes('max-num-seqs'));
  const typed = await readVerdict(page);
  // The tab keeps its texts once the address is written (debounced).
  await page.waitForFunction(() => sessionStorage.getItem('headroom:typed')?.includes('lots'));
  // The reload holds the app back again, past the cache: from the cache the app's wasm comes
  // without a request and the app can replace the shell a few frames after its first verdict,
  // before the shell is read (seen under load, 3 runs in 16).
  const releaseAgain = await holdApp(context);
  await (await context.newCDPSession(page)).send('Network.setCacheDisabled', { cacheDisabled: true });
  await page.reload({ waitUntil: 'domcontentloaded' });
  await page.waitForSelector('#shell-verdict:not(.pending)');
  assert.deepEqual(await readVerdict(page), typed);
  releaseAgain();
  await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
  assert.deepEqual(await readVerdict(page), typed);
  assertClean(problems);
  await context.close();

  const plain = await open(browser, '/');
  assert.notEqual(await plain.page.textContent('[data-testid=max-concurrency]'), tp4, 'the default page differs');
  await plain.context.close();
});
