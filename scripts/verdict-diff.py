#!/usr/bin/env python3
"""The first verdict before the app must be the app's own (issue 18: no flash of another
verdict). The page's verdict program is the same core built with other features (`verdict`: no
page text; `catalog-compiled`: the catalog as values; `config-reader`: the config.json reader),
so this builds examples/first_verdicts.rs under the app's features, the program's and the two
other verdict builds the tests keep (the catalog as JSON; the catalog as values without the
reader, which leaves a pasted config unplanned), plans random links with each, and reports every
link where a build's words differ from the app's.

    python3 scripts/verdict-diff.py [--links 20000] [--configs 0.3] [--seed 1]
    python3 scripts/verdict-diff.py --links 30000 --seed 5 --snapshot 300   # the test's links

Links: random catalog models and GPUs with zero to six other keys drawn from each input's
usual values and some wrong ones; a share of them (--configs) carry a catalog row's config.json
instead, a fifth of those altered (a key removed, an unknown architecture, a wrong layer count);
a share (--examples) name a seed example, mostly without a model or GPU of their own.

--snapshot N picks N of the links (greedily, so that every outcome class, headline kind,
model, GPU, input key and pasted architecture is covered) and writes them with the app's words to
tests/snapshots/first_verdicts.jsonl, which src/verdict.rs's test plans under every build that
test.sh runs. Exits 1 when any program differs from the app.
"""
import argparse
import base64
import collections
import json
import os
import random
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILDS = {
    # name: cargo features (None: the crate's defaults, the app's)
    'app': None,
    'page-program': 'verdict,catalog-compiled,config-reader',
    'no-reader': 'verdict,catalog-compiled',
    'catalog-json': 'verdict',
}
VALUES = {
    'tp': ['1', '2', '4', '8', '3'],
    'pp': ['1', '2', '3', '4', '8'],
    'dp': ['1', '2', '4'],
    'ep': ['true', 'false'],
    'util': ['0.9', '0.95', '0.5', '0.8', '0.98', '1', '0.3', '0.92', '1.2'],
    'kv-bytes': ['10GiB', '20GB', '1000000000', '5GiB', '0'],
    'max-model-len': ['4096', '8192', '32768', '131072', '1000000', 'auto', '2048', '40960', '-1'],
    'max-num-seqs': ['1', '8', '64', '256', '1024'],
    'max-num-batched-tokens': ['2048', '8192', '16384', '512', '65536'],
    'kv-dtype': ['auto', 'fp8', 'fp8_e4m3', 'fp8_e5m2', 'bfloat16', 'fp8_ds_mla', 'float16'],
    'block-size': ['16', '32', '64', '128', '256', '1', '17', '544'],
    'eager': ['true', 'false'],
    'num-gpu-blocks-override': ['100', '1000', '50000'],
    'spec': ['mtp', 'deepseek_mtp', 'eagle', 'eagle3', 'ngram', 'draft_model', 'dspark', 'none',
             'qwen3_next_mtp'],
    'spec-tokens': ['1', '2', '3', '5'],
    'drafter': ['1GiB', '500MB'],
    'no-hybrid': ['true', 'false'],
    'no-async': ['true', 'false'],
    'attention-backend': ['FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLASHMLA', 'FLEX_ATTENTION',
                          'CUTLASS_MLA', 'BOGUS'],
    'vllm': ['0.33.0', '0.28.0', '0.20.0', '0.14.0', '0.12.0', '0.11.0', '0.11.2', '0.10.2',
             '0.10.0', '0.9.2', '0.8.5', '0.19.1'],
    'weights': ['15GiB', '70GB', '1GiB'],
    'activation': ['2GiB', '500MB'],
    'non-torch': ['0.5GiB', '1GiB'],
    'cuda-graph': ['0.5GiB', '2GiB'],
    'load-peak': ['20GiB'],
    'free': ['70GiB', '30GiB'],
    'available-kv': ['10GiB'],
    'tenants': ['2GiB', '10GiB'],
    'mem-available': ['100GiB', '20GiB'],
    'headroom': ['1GiB'],
    'overhead': ['2GiB'],
    'avg-len': ['1000', '8192'],
    'unit': ['gib', 'gb'],
    'quantization': ['fp8', 'awq', 'gptq', 'mxfp4', 'bitsandbytes', 'fp8_per_block', 'none',
                     'compressed-tensors', 'bogus'],
    'dtype': ['auto', 'bfloat16', 'float16', 'float32'],
    'checkpoint-bytes': ['16000000000', '70GB'],
    'gpu-memory': ['80GiB', '24GB'],
    'gpus': ['1', '2', '4', '8'],
    'pp-partition': ['16,16', '40,40', '10,20,30'],
}


def b64(text):
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip('=')


# The seed examples' ids, as the page's menu names them (index.html).
EXAMPLES = sorted(set(re.findall(r'data-example="([^"]+)"', open(os.path.join(ROOT, 'index.html')).read())))


def links(n, configs, rng, examples=0.15):
    models = sorted(f[:-5] for f in os.listdir(os.path.join(ROOT, 'catalog/models')))
    rows = {m: json.load(open(os.path.join(ROOT, 'catalog/models', m + '.json')))['config'] for m in models}
    gpus = [g['id'] for g in json.load(open(os.path.join(ROOT, 'catalog/gpus.json')))]
    values = dict(VALUES, **{'draft-model': models[:10] + ['nope']})
    keys = sorted(values)
    out = []
    for _ in range(n):
        parts = ['v=1']
        config = rng.random() < configs
        # A seed example with keys of its own (a shared what-if), now and then an unknown one;
        # its model and GPU are the example's unless a key replaces them.
        example = rng.random() < examples
        if example:
            parts.append('example=' + rng.choice(EXAMPLES + ['nope'] if rng.random() < 0.05 else EXAMPLES))
        if (not config or rng.random() < 0.3) and rng.random() < (0.15 if example else 0.9):
            parts.append('model=' + rng.choice(models))
        if rng.random() < (0.15 if example else 0.9):
            parts.append('gpu=' + rng.choice(gpus))
        for k in rng.sample(keys, rng.randint(0, 6)):
            parts.append(f'{k}={rng.choice(values[k])}')
        link = '?' + '&'.join(parts)
        if config:
            c = json.loads(json.dumps(rows[rng.choice(models)]))
            r = rng.random()
            if r < 0.1:
                c.pop(rng.choice(sorted(c)), None)
            elif r < 0.15:
                c['architectures'] = ['FooBarForCausalLM']
            elif r < 0.2:
                c['num_hidden_layers'] = rng.choice([0, -1, 'x', 100000])
            link += '#config=' + b64(json.dumps(c, separators=(',', ':')))
        out.append(link)
    return out


def build(name, features):
    target = os.path.join(ROOT, 'target', 'verdict-diff', name)
    cmd = ['cargo', 'build', '--quiet', '--release', '--example', 'first_verdicts', '--target-dir', target]
    if features is not None:
        cmd += ['--no-default-features', '--features', features]
    subprocess.run(cmd, cwd=ROOT, check=True)
    return os.path.join(target, 'release', 'examples', 'first_verdicts')


def run(binary, text):
    r = subprocess.run([binary], input=text, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in r.stdout.splitlines()]


def features(link, words):
    cls, head = words[0], words[1]
    kind = re.match(r'(Fails at [^:]+|Cannot plan this|Fix --[a-z-]+|Starts)', head)
    query = dict(p.split('=', 1) for p in link.split('#')[0][1:].split('&') if '=' in p)
    config = '#config=' in link
    f = {('class', cls, config), ('kind', kind.group(1) if kind else head[:30], config), ('head', head[:40])}
    for k, v in query.items():
        f.add((k, v, cls) if k in ('model', 'gpu', 'example') else ('key', k, cls))
    if config:
        # The pasted config's architecture and shape, per outcome.
        raw = link.split('#config=', 1)[1]
        try:
            c = json.loads(base64.urlsafe_b64decode(raw + '=' * (-len(raw) % 4)))
            shape = (str(c.get('architectures')), str(c.get('model_type')))
        except ValueError:
            shape = ('unreadable',)
        f.add(('config', shape, cls))
    return f


def pick(pairs, n, rng):
    """Greedy cover of `features`, preferring short links (a config travels whole)."""
    cands = [(link, words, features(link, words)) for link, words in pairs]
    rng.shuffle(cands)
    covered, chosen = set(), []
    while len(chosen) < n and cands:
        best = max(cands, key=lambda c: len(c[2] - covered) / (1 + len(c[0]) / 1500))
        if not best[2] - covered:
            break
        chosen.append(best)
        covered |= best[2]
        cands.remove(best)
    return [(link, words) for link, words, _ in chosen]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--links', type=int, default=20000, help='how many random links')
    ap.add_argument('--configs', type=float, default=0.3, help='share of links with a pasted config.json')
    ap.add_argument('--examples', type=float, default=0.15, help='share of links that name a seed example')
    ap.add_argument('--seed', type=int, default=1, help='the random sequence')
    ap.add_argument('--snapshot', type=int, default=0, help='write N links to tests/snapshots/first_verdicts.jsonl')
    a = ap.parse_args()
    rng = random.Random(a.seed)
    ls = links(a.links, a.configs, rng, a.examples)
    text = '\n'.join(ls) + '\n'
    answers = {}
    for name, feats in BUILDS.items():
        answers[name] = run(build(name, feats), text)
    app = answers['app']
    print(f'{len(ls)} links; the app: ' + ', '.join(f'{k} {v}' for k, v in sorted(collections.Counter(w[0] for w in app).items())))
    failed = False
    for name in BUILDS:
        if name == 'app':
            continue
        got = answers[name]
        planned = [i for i, w in enumerate(got) if w is not None]
        differ = [i for i in planned if got[i] != app[i]]
        print(f'{name} ({BUILDS[name]}): planned {len(planned)}, handed over {len(ls) - len(planned)}, differ {len(differ)}')
        for i in differ[:5]:
            print(f'  {ls[i][:300]}')
            for j, (x, y) in enumerate(zip(app[i], got[i])):
                if x != y:
                    print(f'    word {j}: app {x[:300]!r}\n    {" " * len(str(j))}  {name} {y[:300]!r}')
        failed |= bool(differ)
    if a.snapshot:
        chosen = pick(list(zip(ls, app)), a.snapshot, rng)
        path = os.path.join(ROOT, 'tests', 'snapshots', 'first_verdicts.jsonl')
        with open(path, 'w') as f:
            for link, words in chosen:
                f.write(json.dumps({'link': link, 'words': words}, ensure_ascii=False, separators=(',', ':')) + '\n')
        print(f'wrote {len(chosen)} links to {os.path.relpath(path, ROOT)}')
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
