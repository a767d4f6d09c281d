"""Runs v4plan.py (vLLM 0.33.0's own planning code) on golden_cases.json and writes the trimmed
answers to tests/golden/oracle_v4.json, one case per line. Called by run.sh."""
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
python, model_dir = sys.argv[1], sys.argv[2]
cases = open(os.path.join(here, "golden_cases.json")).read()
p = subprocess.run([python, os.path.join(here, "v4plan.py")], input=cases, capture_output=True,
                   text=True, env={**os.environ, "V4_MODEL_DIR": model_dir})
d = json.loads(p.stdout)
G = []
for r in d:
    c = r['case']
    g = {"id": c['id'], "input": {k: v for k, v in c.items() if k != 'id'},
         "block_size": r['resolved']['block_size'], "cache_dtype": r['resolved']['cache_dtype'],
         "max_in_flight_tokens": r['resolved']['max_in_flight_tokens'], "stages": r['stages'],
         "groups": [{"layers": x['num_layers'], "block_size": x['block_size'], "pages": x['pages_count'],
                     "blocks_per_request": x['blocks_per_request']} for x in r['groups']],
         "bytes_per_block_per_worker": [w['bytes_per_block'] for w in r['workers']],
         "needed_bytes_per_worker": [w['needed_bytes_at_max_model_len'] for w in r['workers']],
         "check_memory_per_worker": [w['check_memory'] for w in r['workers']]}
    if 'error' in r:
        g["error"] = r['error']['message'][:330]
    else:
        g.update({"max_model_len": r['max_model_len'], "num_blocks": r['num_blocks'],
                  "blocks_per_request": r['blocks_per_request'],
                  "kv_cache_size_tokens": r['kv_cache_size_tokens'],
                  "max_concurrency": r['max_concurrency'], "log_line": r['log_line']})
    G.append(g)
out = os.path.join(here, "..", "..", "oracle_v4.json")
with open(out, "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(g, sort_keys=True) for g in G) + "\n]\n")
print(len(G), "cases")
