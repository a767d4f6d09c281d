//! The plan as text: a ledger per group of identical ranks, the checks in phase order, the
//! replica, demand, the unified gate, vLLM's log lines and the notes; and the catalog listings
//! (`headroom models | gpus | examples`), as text or JSON.

use std::fmt::Write as _;

use crate::calc::scenario::Scenario;
use crate::calc::units::{human, thousands, thousands_signed, UnitSystem};
use crate::calc::{self, Plan};
use crate::catalog;

use super::pretty;

const LABEL_W: usize = 38;

/// A compute capability as `major.minor`; `None` where the catalog has none (stored as 0.0).
fn cc_text(cc: (u32, u32)) -> Option<String> {
    (cc != (0, 0)).then(|| format!("{}.{}", cc.0, cc.1))
}

/// "estimate (basis)", or the bare label for exact figures.
pub(super) fn prov_with_basis(p: &calc::Provenance) -> String {
    match p.basis() {
        "" => p.label().to_string(),
        basis => format!("{} ({basis})", p.label()),
    }
}

fn rank_range(a: u32, b: u32) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}-{b}")
    }
}

fn ledger_lines(out: &mut String, lines: &[calc::LedgerLine], unit: UnitSystem) {
    let _ = writeln!(
        out,
        "  {:<LABEL_W$} {:>11} {:>19}  {:<9} formula",
        "term", "value", "bytes", "figure"
    );
    for l in lines {
        let _ = writeln!(
            out,
            "  {:<LABEL_W$} {:>11} {:>19}  {:<9} {}",
            l.term.label(),
            human(l.bytes, unit),
            thousands_signed(l.bytes),
            l.provenance.label(),
            l.formula
        );
        let basis = l.provenance.basis();
        if !basis.is_empty() {
            let _ = writeln!(
                out,
                "  {:<LABEL_W$} {:>11} {:>19}  {:<9} ({basis})",
                "", "", "", ""
            );
        }
    }
}

/// The readable plan: header and verdict, a ledger per group of identical ranks, the checks in
/// phase order, the replica, demand, the unified gate, vLLM's log lines and the notes.
pub fn render(s: &Scenario, p: &Plan, unit: UnitSystem) -> String {
    let mut out = String::new();
    let gpu_total = human(i128::from(s.gpu.total.0), unit);
    let _ = writeln!(out, "Headroom plan: {}", s.model.name);
    let _ = writeln!(
        out,
        "  GPU        {}{}, {gpu_total} = {} B each{}",
        s.gpu.name,
        if s.gpu.id == "custom" {
            String::new()
        } else {
            format!(" ({})", s.gpu.id)
        },
        thousands(u128::from(s.gpu.total.0)),
        if s.gpu.unified_memory {
            ", unified memory"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "  Layout     TP={} x PP={} x DP={} on {} GPU(s); stages of {} layers",
        p.tp,
        p.pp,
        p.dp,
        s.gpus,
        p.pp_partition
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        out,
        "  Engine     vLLM {} rules; gpu-memory-utilization {}{}",
        p.version,
        p.gpu_memory_utilization,
        match s.engine.kv_cache_memory_bytes {
            Some(k) => format!("; kv-cache-memory-bytes {}", thousands(u128::from(k))),
            None => String::new(),
        }
    );
    match p.first_failure() {
        None => {
            let _ = writeln!(out, "  Verdict    STARTS: every check passes.");
        }
        Some(c) => {
            let _ = writeln!(
                out,
                "  Verdict    DOES NOT START: fails at {}{}.",
                c.phase.label(),
                c.rank.map_or(String::new(), |r| format!(" (rank {r})"))
            );
        }
    }
    if let Some(c) = &p.weights_check {
        let _ = writeln!(out, "             {}", c.short());
    }

    // Ledgers, identical TP ranks of a stage grouped.
    // The one grouping the page's chart and ledger use too (`Plan::rank_groups`).
    for g in p.rank_groups() {
        let first = g.plan;
        let last = &p.ranks[g.last() as usize];
        let single = g.ranks.len() == 1;
        let mut holds = Vec::new();
        if first.holds_embedding {
            holds.push("embedding");
        }
        if first.holds_head {
            holds.push("LM head");
        }
        if first.holds_drafter {
            holds.push("drafter");
        }
        let _ = writeln!(
            out,
            "\n{} {} (stage {} of {}, TP rank{} {}; {}{})",
            if single { "Rank" } else { "Ranks" },
            rank_range(first.rank, last.rank),
            first.pp_rank,
            p.pp,
            if single { "" } else { "s" },
            rank_range(first.tp_rank, last.tp_rank),
            if first.layers.1 > first.layers.0 {
                format!("layers {}–{}", first.layers.0, first.layers.1 - 1)
            } else {
                "no decoder layers".to_string()
            },
            if holds.is_empty() {
                String::new()
            } else {
                format!("; holds the {}", holds.join(", "))
            }
        );
        ledger_lines(&mut out, &first.ledger, unit);
        if first.bytes_per_block > 0 {
            let _ = writeln!(
                out,
                "  KV layout: {} KV head(s) per layer, {} B per token, page {} B, {} B per block; {} blocks of its own",
                first.kv_heads,
                thousands(u128::from(first.kv_bytes_per_token)),
                thousands(u128::from(first.page_size)),
                thousands(u128::from(first.bytes_per_block)),
                thousands(u128::from(first.num_blocks_own))
            );
        }
    }

    // Checks.
    let _ = writeln!(out, "\nChecks, in phase order");
    for c in &p.checks {
        let message = c.message.render(unit);
        let _ = writeln!(
            out,
            "  {:<5} {}{}: {}",
            if c.ok { "ok" } else { "FAIL" },
            c.phase.label(),
            c.rank_to_name()
                .map_or(String::new(), |r| format!(" (rank {r})")),
            message
        );
        if let Some(e) = &c.vllm_error {
            let _ = writeln!(out, "        vLLM says: {e}");
        }
        if !c.knobs.is_empty() {
            let _ = writeln!(out, "        knobs: {}", c.knobs.join(", "));
        }
        if !c.not_knobs.is_empty() {
            let _ = writeln!(out, "        not knobs: {}", c.not_knobs.join(", "));
        }
    }

    // Replica.
    if let Some(r) = &p.replica {
        let _ = writeln!(
            out,
            "\nReplica (one engine{})",
            if r.data_parallel > 1 {
                format!(
                    "; each of the {} data-parallel replicas is the same",
                    r.data_parallel
                )
            } else {
                String::new()
            }
        );
        let row = |out: &mut String, k: &str, v: String| {
            let _ = writeln!(out, "  {k:<24} {v}");
        };
        // A pool converted with a measured ratio has no block arithmetic to show.
        let measured_ratio = r.groups.is_empty();
        row(
            &mut out,
            "num_blocks",
            if measured_ratio {
                "not derived: the pool is converted with a measured ratio".to_string()
            } else {
                format!(
                    "{} (the minimum over ranks, set by rank {}; includes the null block)",
                    thousands(u128::from(r.num_blocks)),
                    r.limiting_rank
                )
            },
        );
        row(&mut out, "block_size", format!("{} tokens", r.block_size));
        if !measured_ratio {
            row(
                &mut out,
                "blocks per request",
                format!(
                    "{} at max-model-len {}",
                    thousands(u128::from(r.blocks_per_request)),
                    thousands(u128::from(r.max_model_len))
                ),
            );
        }
        row(
            &mut out,
            "GPU KV cache size",
            format!("{} tokens", thousands(u128::from(r.kv_cache_tokens))),
        );
        row(
            &mut out,
            "maximum concurrency",
            format!("{:.2}x", r.max_concurrency),
        );
        row(
            &mut out,
            "full-length requests",
            format!(
                "{} at once{}",
                thousands(u128::from(r.full_length_requests)),
                if r.null_block_costs_a_request() {
                    " (the concurrency above counts vLLM's null block)"
                } else {
                    ""
                }
            ),
        );
        for g in &r.groups {
            row(
                &mut out,
                "KV group",
                format!(
                    "{}: {} layer(s), {} {} B, block {} tokens, {} blocks per request",
                    g.spec_name(),
                    g.layer_indices.len(),
                    if g.uniform_type {
                        "pages summing to"
                    } else {
                        "page"
                    },
                    thousands(u128::from(g.page_size)),
                    g.block_size,
                    thousands(u128::from(g.blocks_per_request))
                ),
            );
        }
        row(&mut out, "provenance", prov_with_basis(&r.provenance));
    }

    // Demand.
    if let Some(d) = &p.demand {
        let _ = writeln!(
            out,
            "\nDemand (what the scheduler could ask for; not a reservation)"
        );
        let _ =
            writeln!(
            out,
            "  max-num-seqs {} x max-model-len on the limiting rank: {} ({} across the replica)",
            thousands(u128::from(d.max_num_seqs)),
            human(d.all_seqs_bytes.min(i128::MAX as u128) as i128, unit),
            human(d.all_seqs_bytes_replica.min(i128::MAX as u128) as i128, unit)
        );
        let _ = writeln!(
            out,
            "  the pool on that rank: {}; one full-length request: {}",
            human(i128::from(d.pool_bytes), unit),
            human(i128::from(d.per_request_bytes), unit)
        );
        let _ = writeln!(
            out,
            "  max-num-batched-tokens {}; at an average of {} tokens, {:.2} requests fit at once",
            thousands(u128::from(d.max_num_batched_tokens)),
            thousands(u128::from(d.average_len)),
            d.concurrency_at_average
        );
    }

    // Unified gate.
    if let Some(g) = &p.unified {
        let _ = writeln!(
            out,
            "\nUnified-memory start gate: {} (needs {} against {} MemAvailable)",
            if g.ok { "passes" } else { "FAILS" },
            human(i128::from(g.needs.0), unit),
            human(i128::from(g.mem_available.0), unit)
        );
        ledger_lines(&mut out, &g.lines, unit);
        let _ = writeln!(out, "  {}", g.utilization_note.render(unit));
    }

    if !p.log_lines.is_empty() {
        let _ = writeln!(
            out,
            "\nvLLM would log (figures: {}{})",
            p.log_provenance.label(),
            if p.log_provenance.basis().is_empty() {
                String::new()
            } else {
                format!("; {}", p.log_provenance.basis())
            }
        );
        for l in &p.log_lines {
            let _ = writeln!(out, "  {l}");
        }
    }
    if !p.notes.is_empty() {
        let _ = writeln!(out, "\nNotes");
        for n in &p.notes {
            let _ = writeln!(out, "  - {}", n.render(unit));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Listings

pub(super) fn list_models(as_json: bool) -> String {
    let rows = catalog::models();
    if as_json {
        return pretty(&serde_json::Value::Array(
            rows.iter()
                .map(|r| {
                    serde_json::json!({
                        "id": r.id,
                        "name": r.name,
                        "hf_repo": r.hf_repo,
                        "num_hidden_layers": r.model.n_layers,
                        "max_position_embeddings": r.model.max_position_embeddings,
                        "dtype": r.model.dtype.as_str(),
                        "quantization": r.model.quant.label(),
                        "checkpoint_bytes": r.model.checkpoint_bytes,
                        "source": r.source,
                        "retrieved": r.retrieved,
                        "checkpoint_source": r.checkpoint_source,
                        "unconfirmed": r.unconfirmed,
                        "notes": r.notes,
                    })
                })
                .collect(),
        ));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<32} {:>6} {:>10}  {:<38} name",
        "id", "layers", "context", "weights"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<32} {:>6} {:>10}  {:<38} {}",
            r.id,
            r.model.n_layers,
            thousands(u128::from(r.model.max_position_embeddings)),
            format!("{} {}", r.model.dtype.as_str(), r.model.quant.label()),
            r.name
        );
        let _ = writeln!(out, "    source: {} (retrieved {})", r.source, r.retrieved);
        if !r.notes.is_empty() {
            let _ = writeln!(out, "    notes: {}", r.notes);
        }
    }
    out
}

pub(super) fn list_gpus(as_json: bool) -> String {
    let rows = catalog::gpus();
    if as_json {
        return pretty(&serde_json::Value::Array(
            rows.iter()
                .map(|r| {
                    serde_json::json!({
                        "id": r.gpu.id,
                        "name": r.gpu.name,
                        "total_bytes": r.gpu.total.0,
                        "total_confirmed": r.gpu.total_confirmed,
                        "unified_memory": r.gpu.unified_memory,
                        "compute_capability": cc_text(r.gpu.compute_capability),
                        "memory_marketing": r.memory_marketing,
                        "basis": r.basis,
                        "source": r.source,
                        "retrieved": r.retrieved,
                    })
                })
                .collect(),
        ));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<16} {:>17} {:>10} {:>4}  name",
        "id", "total bytes", "GiB", "cc"
    );
    for r in rows {
        let g = &r.gpu;
        let mut flags = Vec::new();
        if g.unified_memory {
            flags.push("unified memory");
        }
        if !g.total_confirmed {
            flags.push("total not confirmed");
        }
        let _ = writeln!(
            out,
            "{:<16} {:>17} {:>10.2} {:>4}  {}{}",
            g.id,
            thousands(u128::from(g.total.0)),
            g.total.gib(),
            cc_text(g.compute_capability).unwrap_or_else(|| "?".into()),
            g.name,
            if flags.is_empty() {
                String::new()
            } else {
                format!(" [{}]", flags.join(", "))
            }
        );
        let _ = writeln!(out, "    source: {} (retrieved {})", r.source, r.retrieved);
    }
    out
}

pub(super) fn list_examples(as_json: bool) -> String {
    let rows = catalog::examples::examples();
    if as_json {
        return pretty(&serde_json::Value::Array(
            rows.iter()
                .map(|e| {
                    serde_json::json!({
                        "id": e.id,
                        "title": e.title,
                        "summary": e.summary,
                        "source": e.article,
                    })
                })
                .collect(),
        ));
    }
    let mut out = String::new();
    for e in &rows {
        let _ = writeln!(out, "{:<18} {}", e.id, e.title);
        let _ = writeln!(out, "    {}", e.summary);
        let _ = writeln!(out, "    source: seed article {}", e.article);
    }
    out
}

/// `headroom import-command`: what the command says, read and not read.
pub fn imported(c: &crate::import::command::Imported) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} command; model {}; release {}; GPUs visible {}",
        c.form.as_str(),
        c.model.as_deref().unwrap_or("not given"),
        c.vllm_version
            .as_deref()
            .unwrap_or("not stated (Headroom plans 0.33 unless --vllm-version)"),
        c.gpus_visible
            .map_or_else(|| "not stated".to_string(), |n| n.to_string())
    );
    if !c.env.is_empty() {
        let _ = writeln!(out, "\nEnvironment:");
        for (n, v) in &c.env {
            let _ = writeln!(out, "  {n}={v}");
        }
    }
    let _ = writeln!(out, "\nRead (vLLM's destination = value):");
    if c.flags.is_empty() {
        let _ = writeln!(out, "  nothing");
    }
    for f in &c.flags {
        let _ = writeln!(
            out,
            "  {:<34} {}  (from {}, line {})",
            f.dest, f.value, f.written, f.line
        );
    }
    if !c.ignored.is_empty() {
        let _ = writeln!(out, "\nNot read:");
        for i in &c.ignored {
            let shown = match &i.value {
                Some(v) if !v.is_empty() => format!("{} {v}", i.flag),
                _ => i.flag.clone(),
            };
            let _ = writeln!(out, "  {shown}: {}", i.reason);
        }
    }
    for n in &c.notes {
        let _ = writeln!(out, "\nNote: {n}");
    }
    out
}
