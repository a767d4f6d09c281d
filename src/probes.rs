//! "What interviewers probe next" and the common mistakes (seed 003), each answered with the
//! current scenario's numbers: the answer plans the scenario with the change the question is
//! about and reads both plans. Nothing here is a fixed figure.

use crate::calc::plan::{Plan, Term};
use crate::calc::scenario::{KvCacheDtype, Scenario};
use crate::calc::units::{human, thousands, UnitSystem};
use crate::calc::{self};

/// One question and its answer for this scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    pub key: &'static str,
    pub question: &'static str,
    pub answer: String,
}

/// The plan of `s` changed by `edit`, when it plans.
fn with(s: &Scenario, edit: impl Fn(&mut Scenario)) -> Option<Plan> {
    let mut t = s.clone();
    edit(&mut t);
    calc::plan(&t).ok()
}

/// The probes for the scenario `s` planned as `p`, on its deciding rank.
pub fn probes(s: &Scenario, p: &Plan, unit: UnitSystem) -> Vec<Probe> {
    let a = |b: i128| human(b, unit);
    let Some(r) = p
        .ranks
        .get((p.deciding_rank().unwrap_or(0) as usize).min(p.ranks.len().saturating_sub(1)))
    else {
        return Vec::new();
    };
    let get = |t: Term| r.line_bytes(t);
    let u = p.gpu_memory_utilization;
    let mut out = Vec::new();

    // Up or down on utilization.
    let down = ((u - 0.05) * 100.0).round() / 100.0;
    let up = ((u + 0.05).min(1.0) * 100.0).round() / 100.0;
    let at = |f: f64| with(s, |t| t.engine.gpu_memory_utilization = Some(f));
    if let (Some(lo), Some(hi)) = (at(down), at(up)) {
        let kv = |q: &Plan| q.ranks.iter().map(|r| r.available_kv).min().unwrap_or(0);
        out.push(Probe {
            key: "utilization-up-or-down",
            question: "Up or down on gpu-memory-utilization?",
            answer: format!(
                "It depends on the phase that fails. Up enlarges the pool (KV sizing) but makes the init check stricter; down does the opposite, and neither changes loading. Here, at {down}: the least KV memory is {} and the plan {}; at {u}: {} and it {}; at {up}: {} and it {}.",
                a(kv(&lo)), lo.outcome(), a(kv(p)), p.outcome(), a(kv(&hi)), hi.outcome()
            ),
        });
    }

    // A 2x weight mismatch.
    let w = get(Term::Weights);
    out.push(Probe {
        key: "weight-mismatch",
        question: "The checkpoint is twice the size you assumed (a bf16 file where you counted fp8). What breaks first?",
        answer: format!(
            "Loading, before anything else reads the weights: rank {} would need {} more. Here it loads {} with {} free at the snapshot, so doubled it would {} ({} left).",
            r.rank,
            a(w),
            a(w),
            a(get(Term::FreeAtStart)),
            if r.load_headroom - w >= 0 { "still load" } else { "not load" },
            a(r.load_headroom - w)
        ),
    });

    // What FP8 KV halves and what it does not.
    if s.engine.kv_cache_dtype == KvCacheDtype::Auto {
        if let Some(fp8) = with(s, |t| t.engine.kv_cache_dtype = KvCacheDtype::Fp8) {
            let tokens = |q: &Plan| q.replica.as_ref().map_or(0, |r| r.kv_cache_tokens);
            out.push(Probe {
                key: "fp8-kv",
                question: "What does --kv-cache-dtype fp8 halve, and what does it not?",
                answer: format!(
                    "It halves the bytes per token of the attention caches ({} B per token on rank {} now, {} with fp8), so the same pool holds about twice the tokens ({} now, {} with fp8). It does not halve the weights ({}), the activation peak, the graphs or the pool's bytes: the budget sizes the pool the same way. With fp8 the plan {}.",
                    thousands(u128::from(r.kv_bytes_per_token)),
                    r.rank,
                    thousands(u128::from(fp8.ranks.get(r.rank as usize).map_or(0, |x| x.kv_bytes_per_token))),
                    thousands(u128::from(tokens(p))),
                    thousands(u128::from(tokens(&fp8))),
                    a(w),
                    fp8.outcome()
                ),
            });
        }
    }

    // Why lower concurrency helped a start.
    let mns = p.settings.max_num_seqs.value;
    let half = (mns / 2).max(1);
    if let Some(lower) = with(s, |t| t.engine.max_num_seqs = Some(half)) {
        let lr = lower.ranks.get(r.rank as usize).unwrap_or(r);
        let same = lr.line_bytes(Term::CudaGraphs) == get(Term::CudaGraphs)
            && lr.line_bytes(Term::Activation) == get(Term::Activation);
        out.push(Probe {
            key: "lower-concurrency",
            question: "Why did lowering max-num-seqs help a start?",
            answer: if same {
                format!(
                    "Not by reserving less KV: max-num-seqs reserves nothing. It caps the CUDA graph capture sizes (and, unset, the batched tokens), so where those are estimated the graphs and the activation shrink. Here, from {} to {} sequences, neither moves (CUDA graphs {}, activation peak {}: given, or already at their floor), so it would not help this start; the plan {} then.",
                    thousands(u128::from(mns)),
                    thousands(u128::from(half)),
                    a(get(Term::CudaGraphs)),
                    a(get(Term::Activation)),
                    lower.outcome()
                )
            } else { format!(
                "Not by reserving less KV: max-num-seqs reserves nothing. It caps the CUDA graph capture sizes (and, unset, the batched tokens), so the graphs and the profile's activation shrink. Here, from {} to {} sequences: CUDA graphs {} -> {}, activation peak {} -> {}; the plan {} then.",
                thousands(u128::from(mns)),
                thousands(u128::from(half)),
                a(get(Term::CudaGraphs)),
                a(lr.line_bytes(Term::CudaGraphs)),
                a(get(Term::Activation)),
                a(lr.line_bytes(Term::Activation)),
                lower.outcome()
            ) },
        });
    }

    // Allocated pool bytes against occupied blocks.
    if let (Some(rep), Some(d)) = (&p.replica, &p.demand) {
        let per_req = d.per_request_bytes;
        // Half of what fills it, at least one request.
        let n = ((rep.max_concurrency / 2.0).floor() as u64).max(1);
        let held = (u128::from(n) * u128::from(per_req)).min(u128::from(r.kv_pool.0));
        out.push(Probe {
            key: "pool-vs-occupied",
            question: "nvidia-smi shows the GPU full with no requests running. A leak?",
            answer: format!(
                "No: the pool is allocated once at start, {} on rank {} ({} blocks), whatever the load. Occupied blocks are what requests use inside it: {} full-length {} would occupy {} of it here, and {:.2} fill it.",
                a(i128::from(r.kv_pool.0)),
                r.rank,
                thousands(u128::from(rep.num_blocks)),
                n,
                if n == 1 { "request" } else { "requests" },
                a(held as i128),
                rep.max_concurrency
            ),
        });
    }

    // Dividing every cache by TP.
    out.push(Probe {
        key: "divide-by-tp",
        question: "Does every KV cache shrink by TP?",
        answer: if s.model.mla.is_some() || s.model.compressed.is_some() {
            format!(
                "Not this one: its latent (MLA) cache is the same on every TP rank, {} B per token on rank {} at TP={}; more TP splits the weights, not this cache.",
                thousands(u128::from(r.kv_bytes_per_token)),
                r.rank,
                s.parallel.tp
            )
        } else {
            format!(
                "Only down to one KV head per rank: each rank keeps max(1, {} KV heads / TP {}) = {} of them, {} B per token here; past TP = {} the heads are replicated and the cache stops shrinking.",
                s.model.n_kv_heads,
                s.parallel.tp,
                r.kv_heads,
                thousands(u128::from(r.kv_bytes_per_token)),
                s.model.n_kv_heads
            )
        },
    });

    // Counting the activation twice.
    out.push(Probe {
        key: "activation-twice",
        question: "Is the activation peak held while serving?",
        answer: format!(
            "It is transient: vLLM takes it out of the budget once ({} here) so the pool leaves it room, and it is not held once started; counting it again in what stays resident would understate the free memory, {} on rank {} after start.",
            a(get(Term::Activation)),
            a(r.free_after_start),
            r.rank
        ),
    });

    // Startup success as proof of stability.
    if let (Some(rep), Some(d)) = (&p.replica, &p.demand) {
        out.push(Probe {
            key: "start-is-not-stable",
            question: "It started. Is it safe under load?",
            answer: format!(
                "A start proves the pool was allocated, not that it is enough: it holds {:.2} full-length requests, while max-num-seqs {} lets the scheduler admit more; at an average of {} tokens {:.2} fit, and beyond that requests are preempted.",
                rep.max_concurrency,
                thousands(u128::from(d.max_num_seqs)),
                thousands(u128::from(d.average_len)),
                d.concurrency_at_average
            ),
        });
    }
    out
}
