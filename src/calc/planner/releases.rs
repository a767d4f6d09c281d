//! What Headroom plans under the releases before 0.14 (0.10.2, 0.11.0, 0.11.2, 0.12.0, 0.13.0),
//! and what it refuses there, naming the release and what differs from 0.14.
//!
//! Read from each release's source (`vllm/v1/worker/gpu_worker.py`,
//! `vllm/v1/core/kv_cache_utils.py`, `vllm/v1/kv_cache_interface.py`, `vllm/platforms/cuda.py`,
//! `vllm/engine/arg_utils.py`): models whose every KV layer is full attention or dense MLA, on
//! CUDA, without speculative decoding. Their capacity check sums each layer's
//! `max_memory_usage_bytes` on each worker against that worker's own memory
//! (`check_enough_kv_cache_memory`), which for such models is what 0.14's group-based check
//! computes; for the others it is not, and their grouping differs too.

use crate::calc::model::LayerKind;
use crate::calc::scenario::{KvCacheDtype, Scenario};
use crate::calc::{CalcError, Input};

/// The refusals of a release before 0.14; `Ok` from 0.14 on.
pub(super) fn before_0_14(s: &Scenario) -> Result<(), CalcError> {
    let v = s.version;
    if v.at_least(0, 14) {
        return Ok(());
    }
    let m = &s.model;
    let refuse = |field: Input, what: String| {
        Err(CalcError::new(
            field,
            format!(
                "vLLM {v} is modelled for dense full-attention and MLA models on CUDA only: {what}"
            ),
        ))
    };
    if let Some(kind) = m
        .layers
        .iter()
        .find(|l| !matches!(l, LayerKind::Full | LayerKind::Mla | LayerKind::NoCache))
    {
        let why = match kind {
            LayerKind::Sliding { .. } | LayerKind::Chunked { .. } => format!(
                "this model has {} layers. Before 0.14 vLLM checks a hybrid model's capacity per layer on each worker (a sliding layer with its own window bound), where 0.14 checks the first group's bound times the group size{}; Headroom has not modelled that",
                kind.label(),
                if v.at_least(0, 12) {
                    ""
                } else {
                    ", and before 0.12 it groups layers without 0.12's 1.25x rule and raises NotImplementedError for pages of several sizes"
                }
            ),
            LayerKind::GatedDeltaNet | LayerKind::Mamba2 => format!(
                "this model has {} layers. Before 0.14 vLLM checks a hybrid model's capacity per layer{} and aligns the attention block to the state page by other rules; Headroom has not modelled that",
                kind.label(),
                if v.at_least_patch(0, 11, 2) {
                    ""
                } else {
                    ", a Mamba layer counting one page per request (MambaSpec.max_memory_usage_bytes),"
                }
            ),
            LayerKind::SharedKv | LayerKind::NoCache | LayerKind::Full | LayerKind::Mla => {
                "this model shares KV caches between layers, which Headroom has not read for this release".into()
            }
        };
        return refuse(Input::Model, why);
    }
    if m.measured_kv.is_some() {
        return refuse(
            Input::Model,
            "this model's KV layout is given as a measured ratio, which Headroom plans with 0.14's lines only".into(),
        );
    }
    if m.sparse_mla.is_some() || m.compressed.is_some() {
        return refuse(
            Input::Model,
            "DeepSeek-V3.2's and V4's sparse attention (indexer caches, their own block sizes) were not read for this release".into(),
        );
    }
    if s.engine.speculative.is_some() {
        return refuse(
            Input::Spec,
            "speculative decoding was not read for this release (the drafter's KV layers, the CUDA-graph sizes, which 0.13 first scales by the speculative tokens)".into(),
        );
    }
    if s.engine.kv_cache_dtype == KvCacheDtype::Fp8DsMla {
        return refuse(
            Input::KvDtype,
            if v.at_least(0, 11) {
                "fp8_ds_mla serves DeepSeek-V3.2's sparse MLA, which was not read for this release"
                    .into()
            } else {
                "vLLM 0.10.2 has no fp8_ds_mla cache format (MLAAttentionSpec and its 656-byte blob arrived in 0.11.0)".into()
            },
        );
    }
    if s.engine.attention_backend.is_some() {
        return refuse(
            Input::AttnBackend,
            "--attention-backend and the checks of a selected backend were read from 0.18 onward only (older releases pick the backend with VLLM_ATTENTION_BACKEND)".into(),
        );
    }
    if s.gpu.is_rocm() {
        return refuse(
            Input::Gpu,
            "only the CUDA platform of this release was read, not ROCm's".into(),
        );
    }
    if s.gpu.unified_memory && !v.at_least_patch(0, 11, 2) {
        return refuse(
            Input::Gpu,
            "this GPU shares its memory with the CPU, and before 0.11.2 MemorySnapshot reads free memory from cudaMemGetInfo, without the psutil MemAvailable override of 0.11.2 onward".into(),
        );
    }
    let cc = s.gpu.compute_capability;
    if m.mla.is_some() && cc.0 == 10 && cc.1 != 0 && !v.at_least(0, 13) {
        return refuse(
            Input::Gpu,
            format!(
                "before 0.13 CudaPlatform picks CUTLASS_MLA on SM 10.0 exactly (is_device_capability(100)); on SM {}.{} it falls to the FlashMLA branch, which was not read for this GPU",
                cc.0, cc.1
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::model::Model;
    use crate::calc::scenario::Gpu;
    use crate::calc::units::Bytes;
    use crate::calc::version::VllmVersion;

    fn h100() -> Gpu {
        Gpu {
            id: "h100".into(),
            name: "H100".into(),
            total: Bytes(85_029_158_912),
            total_confirmed: false,
            unified_memory: false,
            compute_capability: (9, 0),
        }
    }

    #[test]
    fn a_sliding_window_model_is_refused_before_0_14_naming_the_release() {
        let mut m = Model::example_dense();
        m.layers[0] = LayerKind::Sliding { window: 128 };
        let mut s = Scenario::new(m, h100());
        s.version = VllmVersion::parse("0.11.0").unwrap();
        let e = before_0_14(&s).unwrap_err().to_string();
        assert!(
            e.contains("vLLM 0.11.0") && e.contains("sliding:128"),
            "{e}"
        );
        s.version = VllmVersion::new(0, 14);
        assert!(before_0_14(&s).is_ok());
    }
}
