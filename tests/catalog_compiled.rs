//! The catalog as Rust values, for the first verdict of a catalog link: `src/catalog/compiled.rs`
//! is written here from `catalog/` through the same parser the page and the CLI use, and read by
//! the program built with the `catalog-compiled` feature (no JSON reader, no config.json reader,
//! no row text on the page's critical path; see that file's header).
//!
//! Checked two ways: the file is what this generator writes from `catalog/` today (edit a row,
//! then `HEADROOM_UPDATE_SNAPSHOTS=1 cargo test --no-default-features --test catalog_compiled`),
//! and the file itself, compiled into this test, gives back the parsed rows field for field.

use std::fmt::Write as _;
use std::path::Path;

use headroom::calc::blocks::{Block, Ffn, KeepFull, MambaShape, Mixer, Part, VisionTower};
use headroom::calc::model::{
    CompressedAttn, LayerKind, LinearState, MeasuredKv, Mla, Model, ModelDtype, Moe, MtpDraft,
    QuantSource, SparseMla, WeightQuant,
};
use headroom::calc::scenario::Gpu;
use headroom::calc::units::Bytes;
use headroom::catalog::{self, GpuRow, ModelRow};

// The generated file names its types from `crate::`; compiled into this test, `crate::calc` and
// `crate::catalog` are the library's, through these imports.
use headroom::calc;

#[allow(dead_code, unused_imports)]
mod compiled {
    include!("../src/catalog/compiled.rs");
}

/// A value written as a Rust expression of its own type.
trait Lit {
    fn lit(&self, o: &mut String);
}

macro_rules! lit_display {
    ($($t:ty),*) => {$(
        impl Lit for $t {
            fn lit(&self, o: &mut String) {
                write!(o, "{self}").unwrap();
            }
        }
    )*};
}
lit_display!(u8, u32, u64, bool);

impl Lit for String {
    fn lit(&self, o: &mut String) {
        if self.is_empty() {
            o.push_str("String::new()");
        } else {
            // Debug of a str is a Rust string literal.
            write!(o, "{self:?}.into()").unwrap();
        }
    }
}

impl<T: Lit> Lit for Option<T> {
    fn lit(&self, o: &mut String) {
        match self {
            None => o.push_str("None"),
            Some(x) => {
                o.push_str("Some(");
                x.lit(o);
                o.push(')');
            }
        }
    }
}

impl<A: Lit, B: Lit> Lit for (A, B) {
    fn lit(&self, o: &mut String) {
        o.push('(');
        self.0.lit(o);
        o.push_str(", ");
        self.1.lit(o);
        o.push(')');
    }
}

/// A list as runs of equal values (a model's layers mostly repeat): `Vec::new()`,
/// `vec![x; n]`, or `runs(&[(x, n), ...])`.
impl<T: Lit + PartialEq> Lit for Vec<T> {
    fn lit(&self, o: &mut String) {
        let mut runs: Vec<(&T, u32)> = Vec::new();
        for x in self {
            match runs.last_mut() {
                Some((y, n)) if *y == x => *n += 1,
                _ => runs.push((x, 1)),
            }
        }
        match runs.as_slice() {
            [] => o.push_str("Vec::new()"),
            [(x, n)] => {
                o.push_str("vec![");
                x.lit(o);
                write!(o, "; {n}]").unwrap();
            }
            _ => {
                o.push_str("runs(&[");
                for (x, n) in &runs {
                    o.push('(');
                    x.lit(o);
                    write!(o, ", {n}), ").unwrap();
                }
                o.push_str("])");
            }
        }
    }
}

/// A struct's literal from every field, destructured without `..`: a field added to the type
/// fails this file's build until it is written here too.
macro_rules! lit_struct {
    ($ty:ident { $($f:ident),* $(,)? }) => {
        impl Lit for $ty {
            fn lit(&self, o: &mut String) {
                let $ty { $($f),* } = self;
                o.push_str(concat!(stringify!($ty), " { "));
                $(
                    o.push_str(concat!(stringify!($f), ": "));
                    $f.lit(o);
                    o.push_str(", ");
                )*
                o.push('}');
            }
        }
    };
}

lit_struct!(Mla {
    kv_lora_rank,
    qk_rope_head_dim,
    qk_nope_head_dim,
    v_head_dim,
    q_lora_rank
});
lit_struct!(Moe {
    n_experts,
    top_k,
    moe_intermediate_size,
    n_shared_experts,
    shared_intermediate_size,
    dense_layers,
    latent,
});
lit_struct!(LinearState {
    conv_kernel,
    k_heads,
    k_dim,
    v_heads,
    v_dim
});
lit_struct!(MeasuredKv {
    pool_bytes,
    tokens,
    tp,
    source
});
lit_struct!(CompressedAttn {
    ratios,
    window,
    index_head_dim,
    head_dim,
    dspark_layers,
    dspark_target_layers,
    dspark_markov_rank,
});
lit_struct!(SparseMla {
    index_topk,
    index_head_dim
});
lit_struct!(Block { mixer, ffn });
lit_struct!(KeepFull { part, layer });
lit_struct!(MambaShape {
    version,
    d_inner,
    d_state,
    conv_kernel,
    n_groups,
    n_heads,
    dt_rank,
    proj_bias,
    conv_bias,
});
lit_struct!(VisionTower {
    depth,
    hidden,
    intermediate,
    patch_inputs,
    positions,
    gated,
    text_hidden,
    projector_layers,
});
lit_struct!(Model {
    name,
    architecture,
    n_layers,
    hidden_size,
    n_heads,
    n_kv_heads,
    head_dim,
    head_dim_v,
    intermediate_size,
    vocab_size,
    tie_word_embeddings,
    layers,
    mla,
    moe,
    linear,
    mtp_layers,
    mtp_draft,
    quant_skips,
    keep_full,
    dtype,
    quant,
    kv_fp8_from_checkpoint,
    max_position_embeddings,
    max_len_key,
    longrope_default,
    checkpoint_bytes,
    measured_kv,
    vision_encoder,
    vision,
    blocks,
    mtp_blocks,
    ssm_state_bytes,
    mamba,
    mlp_gated,
    sparse_mla,
    compressed,
    quant_method,
    quant_asymmetric,
    quant_source,
});
lit_struct!(Gpu {
    id,
    name,
    total,
    total_confirmed,
    unified_memory,
    compute_capability
});
lit_struct!(ModelRow {
    id,
    name,
    hf_repo,
    source,
    retrieved,
    model,
    unconfirmed,
    notes,
    checkpoint_source,
});
lit_struct!(GpuRow {
    gpu,
    memory_marketing,
    source,
    retrieved,
    basis
});

impl Lit for Bytes {
    fn lit(&self, o: &mut String) {
        write!(o, "Bytes({})", self.0).unwrap();
    }
}

/// Enums: every variant spelled with its type, so `WeightQuant::None` and `Mixer::None` never
/// meet `Option::None`. Matches are exhaustive: a new variant fails this file's build.
impl Lit for ModelDtype {
    fn lit(&self, o: &mut String) {
        let v = match self {
            ModelDtype::Bfloat16 => "Bfloat16",
            ModelDtype::Float16 => "Float16",
            ModelDtype::Float32 => "Float32",
        };
        write!(o, "ModelDtype::{v}").unwrap();
    }
}

impl Lit for QuantSource {
    fn lit(&self, o: &mut String) {
        let v = match self {
            QuantSource::Checkpoint => "Checkpoint",
            QuantSource::Online => "Online",
            QuantSource::Assumed => "Assumed",
        };
        write!(o, "QuantSource::{v}").unwrap();
    }
}

impl Lit for WeightQuant {
    fn lit(&self, o: &mut String) {
        let v = match self {
            WeightQuant::None => "None".to_string(),
            WeightQuant::Fp8 { block } => format!("Fp8 {{ block: {block} }}"),
            WeightQuant::Int8 => "Int8".into(),
            WeightQuant::Int { bits, group } => format!("Int {{ bits: {bits}, group: {group} }}"),
            WeightQuant::Nvfp4 => "Nvfp4".into(),
            WeightQuant::Mxfp4 => "Mxfp4".into(),
            WeightQuant::Fp8Fp4Experts { block } => format!("Fp8Fp4Experts {{ block: {block} }}"),
            WeightQuant::Mxfp8 => "Mxfp8".into(),
            WeightQuant::Mxfp4Linear => "Mxfp4Linear".into(),
            WeightQuant::ExpertsInt8 => "ExpertsInt8".into(),
            WeightQuant::ExpertsNvfp4 => "ExpertsNvfp4".into(),
        };
        write!(o, "WeightQuant::{v}").unwrap();
    }
}

impl Lit for LayerKind {
    fn lit(&self, o: &mut String) {
        let v = match self {
            LayerKind::Full => "Full".to_string(),
            LayerKind::Sliding { window } => format!("Sliding {{ window: {window} }}"),
            LayerKind::Chunked { chunk } => format!("Chunked {{ chunk: {chunk} }}"),
            LayerKind::Mla => "Mla".into(),
            LayerKind::GatedDeltaNet => "GatedDeltaNet".into(),
            LayerKind::Mamba2 => "Mamba2".into(),
            LayerKind::SharedKv => "SharedKv".into(),
            LayerKind::NoCache => "NoCache".into(),
        };
        write!(o, "LayerKind::{v}").unwrap();
    }
}

impl Lit for MtpDraft {
    fn lit(&self, o: &mut String) {
        match self {
            MtpDraft::Unsupported => o.push_str("MtpDraft::Unsupported"),
            MtpDraft::Mapped => o.push_str("MtpDraft::Mapped"),
            MtpDraft::Refused(m) => {
                o.push_str("MtpDraft::Refused(");
                m.lit(o);
                o.push(')');
            }
        }
    }
}

impl Lit for Mixer {
    fn lit(&self, o: &mut String) {
        let v = match self {
            Mixer::Attention => "Attention".to_string(),
            Mixer::AttentionKvHeads(n) => format!("AttentionKvHeads({n})"),
            Mixer::Mamba => "Mamba".into(),
            Mixer::AttentionAndMamba => "AttentionAndMamba".into(),
            Mixer::GatedDeltaNet => "GatedDeltaNet".into(),
            Mixer::Linear => "Linear".into(),
            Mixer::None => "None".into(),
        };
        write!(o, "Mixer::{v}").unwrap();
    }
}

impl Lit for Ffn {
    fn lit(&self, o: &mut String) {
        let v = match self {
            Ffn::Mlp(n) => format!("Mlp({n})"),
            Ffn::Moe => "Moe".into(),
            Ffn::Linear => "Linear".into(),
            Ffn::None => "None".into(),
        };
        write!(o, "Ffn::{v}").unwrap();
    }
}

impl Lit for Part {
    fn lit(&self, o: &mut String) {
        let v = match self {
            Part::Whole => "Whole",
            Part::Attention => "Attention",
            Part::LinearAttention => "LinearAttention",
            Part::Mamba => "Mamba",
            Part::DenseMlp => "DenseMlp",
            Part::Experts => "Experts",
            Part::SharedExperts => "SharedExperts",
            Part::Latent => "Latent",
        };
        write!(o, "Part::{v}").unwrap();
    }
}

/// A row as the first verdict keeps it: the prose only the full page shows emptied, as build.rs
/// does for the JSON copy (`PROSE`), and a GPU's memory as sold.
fn min_model_row(r: &ModelRow) -> ModelRow {
    let mut r = r.clone();
    r.source.clear();
    r.retrieved.clear();
    r.notes.clear();
    r.unconfirmed.clear();
    if let Some(s) = r.checkpoint_source.as_mut() {
        s.clear();
    }
    if let Some(m) = r.model.measured_kv.as_mut() {
        m.source.clear();
    }
    r
}

fn min_gpu_row(r: &GpuRow) -> GpuRow {
    let mut r = r.clone();
    // The memory as sold ("80 GB HBM2e"): the page's GPU picker says it, no plan does.
    r.memory_marketing.clear();
    r.source.clear();
    r.retrieved.clear();
    r.basis.clear();
    r
}

const HEADER: &str = "\
// @generated by tests/catalog_compiled.rs from catalog/: do not edit. After changing a row,
// HEADROOM_UPDATE_SNAPSHOTS=1 cargo test --no-default-features --test catalog_compiled
//
// The catalog's rows as Rust values, read by the first verdict's program for catalog links
// (the `catalog-compiled` feature): the same values the parser makes of catalog/, with the
// prose only the full page shows (sources, notes, retrieval dates, a GPU's memory as sold)
// left empty.

use crate::calc::blocks::{Block, Ffn, KeepFull, MambaShape, Mixer, Part, VisionTower};
use crate::calc::model::{
    CompressedAttn, LayerKind, LinearState, MeasuredKv, Mla, Model, ModelDtype, Moe, MtpDraft,
    QuantSource, SparseMla, WeightQuant,
};
use crate::calc::scenario::Gpu;
use crate::calc::units::Bytes;
use crate::catalog::{GpuRow, ModelRow, Shape};

/// A list from runs of equal values.
fn runs<T: Clone>(r: &[(T, u32)]) -> Vec<T> {
    r.iter()
        .flat_map(|(x, n)| std::iter::repeat(x.clone()).take(*n as usize))
        .collect()
}
";

fn generate() -> String {
    let rows: Vec<ModelRow> = catalog::models().iter().map(min_model_row).collect();
    let mut o = String::from(HEADER);
    write!(
        o,
        "\n/// The model rows' ids, in `MODEL_FILES`' order.\npub const IDS: [&str; {}] = [\n",
        rows.len()
    )
    .unwrap();
    for r in &rows {
        writeln!(o, "    {:?},", r.id).unwrap();
    }
    let default = rows
        .iter()
        .position(|r| r.id == headroom::input::values::DEFAULT_MODEL)
        .expect("the default model is a catalog row");
    write!(
        o,
        "];\n\n/// The default model's position in [`IDS`]: the one row the program for a pasted \
         config.json carries.\npub const DEFAULT_ROW: usize = {default};\n\n/// Each row's \
         Hugging Face repo, in [`IDS`]' order.\npub const HF_REPOS: [&str; {}] = [\n",
        rows.len()
    )
    .unwrap();
    for r in &rows {
        writeln!(o, "    {:?},", r.hf_repo).unwrap();
    }
    write!(
        o,
        "];\n\n/// Each row's shape, in [`IDS`]' order (a pasted config.json is named after the \
         row of its shape).\npub const SHAPES: [Shape; {}] = [\n",
        rows.len()
    )
    .unwrap();
    for r in &rows {
        let m = &r.model;
        writeln!(
            o,
            "    Shape {{ name: {:?}, architecture: {:?}, n_layers: {}, hidden_size: {}, n_heads: {}, n_kv_heads: {}, intermediate_size: {}, vocab_size: {}, quant_method: {:?} }},",
            r.name, m.architecture, m.n_layers, m.hidden_size, m.n_heads, m.n_kv_heads, m.intermediate_size, m.vocab_size, m.quant_method
        )
        .unwrap();
    }
    o.push_str(
        "];\n\n/// The model row at `i` of [`IDS`].\npub fn model_row(i: usize) -> Option<ModelRow> {\n    row(i)\n}\n\n\
         /// The default model's row ([`DEFAULT_ROW`]) alone: a function of its own, so that a link\n\
         /// that plans no other row (a pasted config.json replaces it) runs none of the others'\n\
         /// code, which the first verdict's program then loads after its first part\n\
         /// (scripts/split-verdict.mjs).\npub fn default_row() -> Option<ModelRow> {\n    row(DEFAULT_ROW)\n}\n\n\
         /// Each row is a function of its own, so that a link runs the code of the rows it reads\n\
         /// and no other (an example beside a pasted config.json reads its model's row, a\n\
         /// drafter its own): the program's parts carry each row where its links need it.\n\
         #[inline(always)]\nfn row(i: usize) -> Option<ModelRow> {\n    Some(match i {\n",
    );
    for i in 0..rows.len() {
        writeln!(o, "        {i} => row_{i}(),").unwrap();
    }
    o.push_str("        _ => return None,\n    })\n}\n");
    for (i, r) in rows.iter().enumerate() {
        write!(
            o,
            "\n/// {}.\n#[inline(never)]\nfn row_{i}() -> ModelRow {{\n    ",
            r.id
        )
        .unwrap();
        r.lit(&mut o);
        o.push_str("\n}\n");
    }
    // The GPU rows as a table of their plain fields and one loop that builds them: 30 struct
    // literals, each with its own allocations, were 4.9 KB of code on the first verdict's path.
    o.push_str(
        "\n/// A GPU row's fields: id, name, total bytes, whether the total is confirmed, unified\n\
         /// memory, compute capability.\n\
         type GpuFields = (&'static str, &'static str, u64, bool, bool, (u32, u32));\n\n\
         /// The GPU rows' fields.\n\
         #[rustfmt::skip]\n\
         const GPU_ROWS: &[GpuFields] = &[\n",
    );
    for g in catalog::gpus() {
        let r = min_gpu_row(g);
        assert!(
            r.memory_marketing.is_empty()
                && r.source.is_empty()
                && r.retrieved.is_empty()
                && r.basis.is_empty(),
            "{}: the compiled GPU table holds no prose",
            r.gpu.id
        );
        let g = &r.gpu;
        let (major, minor) = g.compute_capability;
        writeln!(
            o,
            "    ({:?}, {:?}, {}, {}, {}, ({major}, {minor})),",
            g.id, g.name, g.total.0, g.total_confirmed, g.unified_memory
        )
        .unwrap();
    }
    o.push_str(
        "];\n\n/// The GPU rows.\n\
         pub fn gpu_rows() -> Vec<GpuRow> {\n    \
         GPU_ROWS\n        \
         .iter()\n        \
         .map(|&(id, name, total, total_confirmed, unified_memory, compute_capability)| GpuRow {\n            \
         gpu: Gpu { id: id.into(), name: name.into(), total: Bytes(total), total_confirmed, unified_memory, compute_capability },\n            \
         memory_marketing: String::new(),\n            \
         source: String::new(),\n            \
         retrieved: String::new(),\n            \
         basis: String::new(),\n        \
         })\n        \
         .collect()\n}\n",
    );
    o
}

#[test]
fn the_compiled_catalog_is_the_catalog_as_parsed() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/catalog/compiled.rs");
    let want = generate();
    let update = std::env::var("HEADROOM_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1");
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if update && have != want {
        std::fs::write(&path, &want).expect("write src/catalog/compiled.rs");
        return;
    }
    assert!(
        have == want,
        "src/catalog/compiled.rs is not what catalog/ gives today: run \
         HEADROOM_UPDATE_SNAPSHOTS=1 cargo test --no-default-features --test catalog_compiled"
    );
    // The file as compiled here gives back each parsed row, field for field.
    let parsed = catalog::models();
    assert_eq!(compiled::IDS.len(), parsed.len());
    for (i, r) in parsed.iter().enumerate() {
        assert_eq!(compiled::IDS[i], r.id);
        let c = compiled::model_row(i).expect("a row per id");
        assert_eq!(c.model, min_model_row(r).model, "{}", r.id);
        assert_eq!(
            format!("{c:?}"),
            format!("{:?}", min_model_row(r)),
            "{}",
            r.id
        );
    }
    assert!(compiled::model_row(parsed.len()).is_none());
    assert_eq!(
        format!("{:?}", compiled::default_row()),
        format!("{:?}", compiled::model_row(compiled::DEFAULT_ROW))
    );
    // The program for a pasted config.json knows every row by its id, repo and shape.
    assert_eq!(
        compiled::IDS[compiled::DEFAULT_ROW],
        headroom::input::values::DEFAULT_MODEL
    );
    assert_eq!(compiled::HF_REPOS.len(), parsed.len());
    for (i, r) in parsed.iter().enumerate() {
        assert_eq!(compiled::HF_REPOS[i], r.hf_repo);
        assert_eq!(compiled::SHAPES[i], catalog::Shape::of(r), "{}", r.id);
    }
    assert_eq!(catalog::shapes(), &compiled::SHAPES[..]);
    let gpus: Vec<String> = catalog::gpus()
        .iter()
        .map(|g| format!("{:?}", min_gpu_row(g)))
        .collect();
    let cg: Vec<String> = compiled::gpu_rows()
        .iter()
        .map(|g| format!("{g:?}"))
        .collect();
    assert_eq!(cg, gpus);
}
