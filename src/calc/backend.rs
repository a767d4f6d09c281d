//! `--attention-backend` for ordinary decoder attention, dense and MLA, as vLLM 0.33.0's CUDA
//! platform checks a backend the user selects (`vllm/platforms/cuda.py`, the backends'
//! `validate_configuration` in `vllm/v1/attention/backend.py`) and the block size it then
//! prefers (`Platform.update_block_size_for_backend`).
//!
//! A selected backend is never swapped for another: when it cannot serve the model, vLLM stops
//! with "Selected backend AttentionBackendEnum.NAME is not valid for this configuration.
//! Reason: [...]", its reasons in `validate_configuration`'s order. DeepSeek-V3.2's and V4's
//! sparse backends are planned elsewhere (`runtime::sparse_mla_backend`, `runtime::v4_attention`).

use super::model::{LayerKind, Model};
use super::scenario::{AttentionBackend, KvCacheDtype, Scenario};
use super::{CalcError, Input};

/// The kernel block sizes a backend declares (`get_supported_kernel_block_sizes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// `[MultipleOf(n)]`: any multiple of `n`.
    MultipleOf(u64),
    /// A list of sizes; vLLM's `supports_block_size` accepts any multiple of one of them.
    Sizes(&'static [u64]),
}

impl Kernel {
    /// `supports_block_size`: a block is accepted when one declared size divides it.
    pub fn accepts(self, block: u64) -> bool {
        match self {
            Kernel::MultipleOf(n) => block % n == 0,
            Kernel::Sizes(sizes) => sizes.iter().any(|s| block % s == 0),
        }
    }

    /// `get_preferred_block_size(16)`: 16 when accepted, else the smallest declared size.
    pub fn preferred(self) -> u64 {
        match self {
            _ if self.accepts(16) => 16,
            Kernel::MultipleOf(n) => n,
            Kernel::Sizes(sizes) => sizes.iter().copied().min().unwrap_or(16),
        }
    }

    fn describe(self) -> String {
        match self {
            Kernel::MultipleOf(n) => format!("any multiple of {n}"),
            Kernel::Sizes(sizes) => format!("{sizes:?}"),
        }
    }
}

/// What a dense or MLA backend declares in vLLM 0.33.0 (CUDA).
pub struct Backend {
    pub name: AttentionBackend,
    pub mla: bool,
    pub kernel: Kernel,
    /// `supported_kv_cache_dtypes`, in vLLM's order.
    kv_dtypes: &'static [KvCacheDtype],
    /// `supports_compute_capability`.
    capability: fn((u32, u32)) -> bool,
    /// `supports_head_size`.
    head: fn(u64, (u32, u32)) -> bool,
    /// `supports_sink`.
    sink: fn((u32, u32)) -> bool,
    /// `supports_sliding_window`.
    sliding: bool,
    /// `supports_compute_capability` in words.
    runs_on: &'static str,
}

const PLAIN: &[KvCacheDtype] = &[
    KvCacheDtype::Auto,
    KvCacheDtype::Float16,
    KvCacheDtype::Bfloat16,
];
const FP8: &[KvCacheDtype] = &[
    KvCacheDtype::Auto,
    KvCacheDtype::Float16,
    KvCacheDtype::Bfloat16,
    KvCacheDtype::Fp8,
    KvCacheDtype::Fp8E4m3,
];
const FP8_E5M2: &[KvCacheDtype] = &[
    KvCacheDtype::Auto,
    KvCacheDtype::Float16,
    KvCacheDtype::Bfloat16,
    KvCacheDtype::Fp8,
    KvCacheDtype::Fp8E4m3,
    KvCacheDtype::Fp8E5m2,
];
const MLA_HEADS: [u64; 3] = [320, 512, 576];

fn any_cc(_: (u32, u32)) -> bool {
    true
}
fn no(_: (u32, u32)) -> bool {
    false
}
fn any_head(_: u64, _: (u32, u32)) -> bool {
    true
}
fn mla_head(h: u64, _: (u32, u32)) -> bool {
    MLA_HEADS.contains(&h)
}
/// The FlashAttention release vLLM 0.33.0 uses: 3 on SM 9.x, 4 on SM 10.x, else 2.
fn fa_version(cc: (u32, u32)) -> u32 {
    match cc.0 {
        9 => 3,
        10 => 4,
        _ => 2,
    }
}

/// The backends a user can select for ordinary decoder attention, in the enum's order.
pub const BACKENDS: [Backend; 9] = [
    Backend {
        name: AttentionBackend::FlashAttn,
        mla: false,
        kernel: Kernel::MultipleOf(16),
        kv_dtypes: FP8,
        capability: |cc| cc >= (8, 0),
        // head % 8 == 0 and at most 256, or 512 where FlashAttention 4 is built (SM 9.x-11.x).
        head: |h, cc| h % 8 == 0 && (h <= 256 || ((9..=11).contains(&cc.0) && h <= 512)),
        sink: |cc| matches!(fa_version(cc), 3 | 4),
        sliding: true,
        runs_on: "SM 8.0 and later",
    },
    Backend {
        name: AttentionBackend::TritonAttn,
        mla: false,
        kernel: Kernel::MultipleOf(16),
        kv_dtypes: FP8_E5M2,
        capability: any_cc,
        head: |h, _| h >= 32,
        sink: |_| true,
        sliding: true,
        runs_on: "any GPU",
    },
    Backend {
        name: AttentionBackend::Flashinfer,
        mla: false,
        kernel: Kernel::Sizes(&[16, 32, 64]),
        kv_dtypes: FP8_E5M2,
        capability: |cc| ((8, 0)..=(12, 1)).contains(&cc),
        head: |h, _| [64, 128, 256, 512].contains(&h),
        // TRT-LLM's kernels: SM 9.0 and 12.x decode, 10.x both phases.
        sink: |cc| cc == (9, 0) || matches!(cc.0, 10 | 12),
        sliding: true,
        runs_on: "SM 8.0 to 12.1",
    },
    Backend {
        name: AttentionBackend::TritonMla,
        mla: true,
        kernel: Kernel::MultipleOf(16),
        kv_dtypes: FP8,
        capability: any_cc,
        head: any_head,
        sink: no,
        sliding: false,
        runs_on: "any GPU",
    },
    Backend {
        name: AttentionBackend::CutlassMla,
        mla: true,
        kernel: Kernel::Sizes(&[128]),
        kv_dtypes: FP8,
        capability: |cc| cc.0 == 10,
        head: mla_head,
        sink: no,
        sliding: false,
        runs_on: "SM 10.x",
    },
    Backend {
        name: AttentionBackend::Flashmla,
        mla: true,
        kernel: Kernel::Sizes(&[64]),
        kv_dtypes: FP8,
        capability: |cc| matches!(cc.0, 9 | 10),
        head: mla_head,
        sink: no,
        sliding: false,
        runs_on: "SM 9.x (its dense kernels)",
    },
    Backend {
        name: AttentionBackend::FlashinferMla,
        mla: true,
        kernel: Kernel::Sizes(&[32, 64]),
        kv_dtypes: FP8,
        capability: |cc| cc.0 == 10,
        head: mla_head,
        sink: no,
        sliding: false,
        runs_on: "SM 10.x",
    },
    Backend {
        name: AttentionBackend::FlashAttnMla,
        mla: true,
        kernel: Kernel::MultipleOf(16),
        kv_dtypes: PLAIN,
        capability: |cc| cc.0 == 9,
        head: mla_head,
        sink: no,
        sliding: false,
        runs_on: "SM 9.x",
    },
    Backend {
        name: AttentionBackend::FlexAttention,
        mla: false,
        kernel: Kernel::MultipleOf(16),
        kv_dtypes: PLAIN,
        capability: any_cc,
        head: any_head,
        sink: no,
        sliding: true,
        runs_on: "any GPU",
    },
];

/// The dense or MLA backend of that name, if it is one.
pub fn find(name: AttentionBackend) -> Option<&'static Backend> {
    BACKENDS.iter().find(|b| b.name == name)
}

/// The backend the user selected for ordinary decoder attention, if one was.
pub fn selected(s: &Scenario) -> Option<&'static Backend> {
    s.engine.attention_backend.and_then(find)
}

/// Models with attention sinks (a learned per-head sink logit): gpt-oss.
pub fn has_sink(m: &Model) -> bool {
    m.architecture == "GptOssForCausalLM"
}

/// The head size the backend is asked about: the latent's for MLA, else the model's head.
fn head_size(m: &Model) -> u64 {
    m.mla
        .as_ref()
        .map_or(m.head_dim, |mla| mla.kv_lora_rank + mla.qk_rope_head_dim)
}

/// `validate_configuration` for the selected backend: vLLM's error when it cannot serve this
/// model on this GPU, with its reasons in vLLM's order.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
pub fn validate(s: &Scenario, b: &Backend) -> Result<(), CalcError> {
    let m = &s.model;
    let cc = s.gpu.compute_capability;
    let known_cc = cc.0 != 0;
    // A checkpoint's KV scheme turns `auto` into fp8 (the cache config's dtype).
    let dtype = match s.engine.kv_cache_dtype {
        KvCacheDtype::Auto if m.kv_fp8_from_checkpoint => KvCacheDtype::Fp8,
        d => d,
    };
    let quantized = dtype.is_fp8();
    let mla = m.mla.is_some();
    let sink = has_sink(m);
    let sliding = m
        .layers
        .iter()
        .any(|l| matches!(l, LayerKind::Sliding { .. } | LayerKind::Chunked { .. }));
    let mut reasons: Vec<String> = Vec::new();
    if !(b.head)(head_size(m), cc) {
        reasons.push("head_size not supported".into());
    }
    // FlashAttention takes fp8 only where its release reads it (3 on SM 9.x, 4 on SM 10.x).
    let fa_fp8 =
        b.name != AttentionBackend::FlashAttn || !quantized || matches!(fa_version(cc), 3 | 4);
    if !b.kv_dtypes.contains(&dtype) || !fa_fp8 {
        reasons.push("kv_cache_dtype not supported".into());
    }
    if s.engine.block_size.is_some_and(|bs| !b.kernel.accepts(bs)) {
        reasons.push("block_size not supported".into());
    }
    if mla != b.mla {
        reasons.push(
            if mla {
                "MLA not supported"
            } else {
                "non-MLA not supported"
            }
            .into(),
        );
    }
    if sink && !(b.sink)(cc) {
        reasons.push("attention sinks not supported".into());
    }
    if m.sparse_mla.is_some() {
        reasons.push("sparse not supported".into());
    }
    if known_cc && !(b.capability)(cc) {
        reasons.push("compute capability not supported".into());
    }
    if sliding && !b.sliding {
        reasons.push("sliding window not supported".into());
    }
    // supports_combination.
    match b.name {
        AttentionBackend::FlashAttn if sink && known_cc && cc < (9, 0) => {
            reasons.push("sink not supported on compute capability < 9.0".into())
        }
        AttentionBackend::FlashAttn if quantized && b.kv_dtypes.contains(&dtype) && !fa_fp8 => {
            reasons.push(
                "FP8 KV cache requires FA3 on SM90, FA4 with head_size=512 on SM90, or FA4 on SM100"
                    .into(),
            )
        }
        AttentionBackend::Flashmla if known_cc && cc.0 != 9 => {
            reasons.push("FlashMLA Dense is only supported on Hopper devices.".into())
        }
        AttentionBackend::FlashAttnMla if known_cc && cc.0 != 9 => {
            reasons.push("FlashAttention MLA not supported on this device".into())
        }
        AttentionBackend::FlashinferMla => {
            let nope = m.mla.as_ref().map_or(1, |x| x.qk_nope_head_dim);
            if ![64, 128, 192].contains(&nope) {
                reasons.push(format!(
                    "FlashInfer MLA kernel requires qk_nope_head_dim in [64, 128, 192], but got {nope}"
                ));
            }
        }
        // No combination rule of its own (the sparse names never reach here: `find` has only
        // the dense and MLA backends).
        AttentionBackend::FlashAttn
        | AttentionBackend::Flashmla
        | AttentionBackend::FlashAttnMla
        | AttentionBackend::TritonAttn
        | AttentionBackend::Flashinfer
        | AttentionBackend::FlexAttention
        | AttentionBackend::CutlassMla
        | AttentionBackend::TritonMla
        | AttentionBackend::FlashmlaSparseDsv4
        | AttentionBackend::FlashinferMlaSparseDsv4
        | AttentionBackend::FlashmlaSparse
        | AttentionBackend::FlashinferMlaSparse
        | AttentionBackend::FlashinferMlaSparseSm120
        | AttentionBackend::FlashinferMlaSparseSm90
        | AttentionBackend::FlashAttnMlaSparse
        | AttentionBackend::FlashAttnMlaSparseFa4 => {}
    }
    if reasons.is_empty() {
        return Ok(());
    }
    let list = reasons
        .iter()
        .map(|r| format!("'{r}'"))
        .collect::<Vec<_>>()
        .join(", ");
    Err(CalcError::new(
        Input::AttnBackend,
        format!(
            "Selected backend AttentionBackendEnum.{} is not valid for this configuration. Reason: [{list}] (vLLM 0.33.0's ValueError: {} serves {} attention on {}, with KV cache dtypes {} and kernel blocks of {}; {})",
            b.name,
            b.name,
            if b.mla { "MLA" } else { "non-MLA" },
            b.runs_on,
            b.kv_dtypes
                .iter()
                .map(|d| d.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            b.kernel.describe(),
            if known_cc {
                format!("this GPU is SM {}.{}", cc.0, cc.1)
            } else {
                "this GPU's compute capability is not in the catalog, so it was not checked".into()
            },
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preferred_blocks_follow_the_declared_kernels() {
        let find = |n: &str| find(AttentionBackend::parse(n).unwrap().unwrap());
        let pref = |n: &str| find(n).unwrap().kernel.preferred();
        assert_eq!(pref("FLASH_ATTN"), 16);
        assert_eq!(pref("FLASHINFER"), 16);
        assert_eq!(pref("FLASHINFER_MLA"), 32);
        assert_eq!(pref("FLASHMLA"), 64);
        assert_eq!(pref("CUTLASS_MLA"), 128);
        assert_eq!(pref("TRITON_MLA"), 16);
        // supports_block_size tests divisibility: FLASHMLA's [64] takes 128 and 192.
        assert!(find("FLASHMLA").unwrap().kernel.accepts(192));
        assert!(!find("CUTLASS_MLA").unwrap().kernel.accepts(64));
        assert!(find("FLASHINFER").unwrap().kernel.accepts(48));
    }

    #[test]
    fn refusals_name_the_dtypes_in_vllms_words() {
        use crate::calc::model::Model;
        use crate::calc::scenario::Gpu;
        use crate::calc::units::{Bytes, GIB};
        let gpu = |cc| Gpu {
            id: "test".into(),
            name: "test GPU".into(),
            total: Bytes(80 * GIB),
            total_confirmed: true,
            unified_memory: false,
            compute_capability: cc,
        };
        let mut s = Scenario::new(Model::example_dense(), gpu((9, 0)));
        let message = |s: &Scenario, b| {
            validate(s, find(b).unwrap())
                .unwrap_err()
                .message()
                .to_string()
        };
        let m = message(&s, AttentionBackend::Flashmla);
        assert!(m.starts_with("Selected backend AttentionBackendEnum.FLASHMLA is not valid for this configuration. Reason: ['head_size not supported', 'non-MLA not supported']"), "{m}");
        assert!(m.contains("with KV cache dtypes auto, float16, bfloat16, fp8, fp8_e4m3 and kernel blocks of [64]"), "{m}");
        // FlashAttention 2 (SM 8.x) takes no fp8 cache, whichever fp8 name is given.
        s.gpu = gpu((8, 0));
        for d in [KvCacheDtype::Fp8, KvCacheDtype::Fp8E4m3] {
            s.engine.kv_cache_dtype = d;
            let m = message(&s, AttentionBackend::FlashAttn);
            assert!(m.contains("Reason: ['kv_cache_dtype not supported', 'FP8 KV cache requires FA3 on SM90, FA4 with head_size=512 on SM90, or FA4 on SM100']"), "{m}");
        }
        s.engine.kv_cache_dtype = KvCacheDtype::Bfloat16;
        assert!(validate(&s, find(AttentionBackend::FlashAttn).unwrap()).is_ok());
    }
}
