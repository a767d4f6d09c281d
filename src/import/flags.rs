//! vLLM 0.33.0's `vllm serve` flags, each with how it takes its value and what Headroom does
//! with it. Read from the vLLM 0.33.0 source, not guessed:
//!
//! - `vllm/entrypoints/cli/serve.py`: `ServeSubcommand.subparser_init` builds the parser with
//!   `make_arg_parser`.
//! - `vllm/entrypoints/common/cli_args.py`: `make_arg_parser` adds the positional `model_tag`,
//!   `--headless`, `--api-server-count`/`-asc`, `--config`, `--grpc`, then
//!   `FrontendArgs.add_cli_args` (every field of `BaseFrontendArgs` and `FrontendArgs`, as
//!   `--field-name`) and `AsyncEngineArgs.add_cli_args`.
//! - `vllm/engine/arg_utils.py`: `EngineArgs.add_cli_args` (each flag by hand, its kwargs from
//!   the config dataclasses in `vllm/config/*.py` through `get_kwargs`/`_compute_kwargs`) and
//!   `AsyncEngineArgs.add_cli_args` (`--enable-log-requests`).
//! - `vllm/utils/argparse_utils.py`: `FlexibleArgumentParser`.
//!
//! How a flag takes its value follows `_compute_kwargs`: a dataclass-typed or dict-typed field
//! is JSON ([`Takes::Json`]); a `bool` field is argparse's `BooleanOptionalAction`; a
//! `list`/`set` field is `nargs='+'` ([`Takes::List`]); anything else one value. Two exceptions
//! to know: `--hf-token` (`bool | str | None`) is `nargs='?'` with `const=True`, so it may also
//! stand alone; it is listed as [`Takes::Value`]. `--allowed-origins`, `--allowed-methods` and
//! `--allowed-headers` take one JSON list, and `--middleware` is `action='append'` (one value,
//! repeatable), so they are [`Takes::Value`] too.
//!
//! Negative spellings. Every `BooleanOptionalAction` also takes `--no-NAME`. vLLM registers
//! `EnableDisableAction` in its place, so a negatable switch named `enable-X` also takes
//! `--disable-X`, and one named `disable-X` also takes `--enable-X`, both setting it to false
//! (`--disable-log-requests`, `--disable-prefix-caching`, `--enable-chunked-mm-input`...).
//! These spellings are not aliases (they mean the opposite), so [`lookup`] returns `None` for
//! them; a caller strips `no-`, or swaps `disable-`/`enable-`, and looks again for a
//! `Switch { negatable: true }`. `--no-` applies to the long name only, never to the twin
//! (`--no-disable-prefix-caching` is unknown) nor to a `store_true` switch.
//!
//! The parser also rewrites words before argparse sees them (`parse_args`): `--a_b` is `--a-b`
//! (underscores before the first `.` only); `--json-flag.key VALUE` (and `.key+` to append to a
//! list) becomes one JSON value for `--json-flag`; `-O3`, `-O=3` and `-O 3` become
//! `--optimization-level 3`; `--help=TOPIC` is `--help`. argparse's unique-prefix abbreviations
//! (`--max-model 8192`) are accepted too (`allow_abbrev` is left on); [`lookup`] does not
//! expand them.

/// How a flag takes its value on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    /// `--flag VALUE` or `--flag=VALUE`.
    Value,
    /// A switch with no value: `store_true` (`--flag`), or argparse's BooleanOptionalAction (`--flag` / `--no-flag`). `negatable` says whether `--no-flag` exists.
    Switch { negatable: bool },
    /// A JSON object (or `key=value` pairs vLLM also parses), e.g. --speculative-config, --compilation-config; dotted `--compilation-config.x` forms are allowed for these.
    Json,
    /// `nargs='+'` or `'*'`: one or more values up to the next flag.
    List,
}

/// What Headroom does with the flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Headroom reads it into its scenario.
    Read,
    /// It does not change the GPU memory plan at start-up (server, API, tokenizer, logging, sampling defaults...).
    NoEffect,
    /// It may change the start-up memory but Headroom does not model it; the text says what, e.g. "LoRA adapters", "CPU weight offload", "multimodal inputs' profiling".
    NotModelled(&'static str),
}

#[derive(Clone, Copy, Debug)]
pub struct VllmFlag {
    /// The long name as vLLM's parser prints it, without dashes: "tensor-parallel-size".
    pub name: &'static str,
    /// argparse's destination: "tensor_parallel_size".
    pub dest: &'static str,
    /// Short forms with their dash ("-tp"), and deprecated or alternate long names vLLM still accepts (with dashes, e.g. "--speculative_model" if it still exists), empty if none.
    pub aliases: &'static [&'static str],
    pub takes: Takes,
    pub effect: Effect,
}

// What the flags marked `NotModelled` may change; one phrase per kind, shared by related flags.
const DTYPE_QUANT: &str = "per-layer quantization beyond --quantization";
const CHECKPOINT: &str = "which checkpoint, revision and config are loaded";
const LOAD: &str = "how weights are loaded";
const CPU_OFFLOAD: &str = "CPU weight offload";
const LORA: &str = "LoRA adapters";
const MM_PROFILE: &str = "multimodal inputs' profiling";
const MM_ENCODER: &str = "multimodal encoder";
const MM_GPU: &str = "multimodal preprocessing on the GPU";
const MM_IPC: &str = "GPU memory carved out for frontend multimodal work";
const CUDA_GRAPHS: &str = "CUDA-graph and compilation settings";
const HF_OVERRIDES: &str = "config overrides";
const POOLING: &str = "pooling models";
const SAMPLER: &str = "sampler buffers";
const SLEEP: &str = "sleep mode and the cumem allocator";
const MODEL_IMPL: &str = "model implementation or class";
const KERNELS: &str = "kernel backend choice";
const MAMBA: &str = "Mamba state cache (hybrid models)";
const CP: &str = "context parallelism";
const COMM: &str = "communication buffers";
const ALL2ALL: &str = "expert-parallel all2all buffers";
const EPLB: &str = "EPLB redundant experts";
const ELASTIC: &str = "elastic expert parallelism";
const DBO: &str = "dual-batch overlap (micro-batching)";
const KV_OFFLOAD: &str = "KV cache offloading and transfer";
const KV_LAYOUT: &str = "sliding-window and per-layer KV layout";
const TOKEN_BUDGET: &str = "default token budget and max sequences";
const PERF_MODE: &str = "default token budget and CUDA-graph sizes";
const SPEC_SHORTCUT: &str = "--spec-* shortcuts of --speculative-config";
const ROUTED: &str = "routed-experts capture buffers";
const ENC_CACHE: &str = "encoder cache settings";
const CUSTOM: &str = "custom plugin or class code";
const PROMPT_EMBEDS: &str = "prompt-embeds input buffers";
const GPUS: &str = "which GPUs are used";
const HC_SP: &str = "HyperConnection sequence parallelism";
const DIFFUSION: &str = "diffusion LM canvas";
const ENGRAM: &str = "Engram embedding storage";
const WEIGHT_TRANSFER: &str = "RL weight-transfer buffers";
const ADDITIONAL: &str = "platform-specific additional config";
const ATTN_CONFIG: &str = "attention settings beyond --attention-backend";
const CONFIG_FILE: &str = "flags read from a YAML file";
const THINKING: &str = "thinking-budget state buffers (small)";

/// Every flag of `vllm serve` in vLLM 0.33.0, sorted by name.
///
/// Includes argparse's own `--help`/`-h`. Not a flag, so not here: the positional `model_tag`
/// (`vllm serve MODEL`). `-O` stands for vLLM's rewrite of `-O3`/`-O=3`/`-O 3` into
/// `--optimization-level`; argparse itself has no `-O`. Deprecated but still read:
/// `--log-config-file`, `--mamba-cache-mode` and `--disable-cascade-attn` (the last two have no
/// effect), `--ir-op-priority`; `--model` warns with `vllm serve` (give the model by position).
#[rustfmt::skip]
pub const FLAGS: &[VllmFlag] = &[
    VllmFlag { name: "additional-config", dest: "additional_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(ADDITIONAL) },
    VllmFlag { name: "aggregate-engine-logging", dest: "aggregate_engine_logging", aliases: &[], takes: Takes::Switch { negatable: false }, effect: Effect::NoEffect },
    VllmFlag { name: "all2all-backend", dest: "all2all_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(ALL2ALL) },
    VllmFlag { name: "allow-credentials", dest: "allow_credentials", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "allow-deprecated-quantization", dest: "allow_deprecated_quantization", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "allowed-headers", dest: "allowed_headers", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "allowed-local-media-path", dest: "allowed_local_media_path", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "allowed-media-domains", dest: "allowed_media_domains", aliases: &[], takes: Takes::List, effect: Effect::NoEffect },
    VllmFlag { name: "allowed-methods", dest: "allowed_methods", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "allowed-origins", dest: "allowed_origins", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "anthropic-disabled-thinking-effort", dest: "anthropic_disabled_thinking_effort", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "api-key", dest: "api_key", aliases: &[], takes: Takes::List, effect: Effect::NoEffect },
    VllmFlag { name: "api-server-count", dest: "api_server_count", aliases: &["-asc"], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "async-scheduling", dest: "async_scheduling", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::Read },
    VllmFlag { name: "attention-backend", dest: "attention_backend", aliases: &[], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "attention-config", dest: "attention_config", aliases: &["-ac"], takes: Takes::Json, effect: Effect::NotModelled(ATTN_CONFIG) },
    VllmFlag { name: "aux-output-config", dest: "aux_output_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(ROUTED) },
    VllmFlag { name: "block-size", dest: "block_size", aliases: &[], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "chat-template", dest: "chat_template", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "chat-template-content-format", dest: "chat_template_content_format", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "code-revision", dest: "code_revision", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CHECKPOINT) },
    VllmFlag { name: "cohere-format", dest: "cohere_format", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "cohere-is-reasoning-model", dest: "cohere_is_reasoning_model", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "collect-detailed-traces", dest: "collect_detailed_traces", aliases: &[], takes: Takes::List, effect: Effect::NoEffect },
    VllmFlag { name: "compilation-config", dest: "compilation_config", aliases: &["-cc"], takes: Takes::Json, effect: Effect::NotModelled(CUDA_GRAPHS) },
    VllmFlag { name: "config", dest: "config", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CONFIG_FILE) },
    VllmFlag { name: "config-format", dest: "config_format", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CHECKPOINT) },
    VllmFlag { name: "convert", dest: "convert", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(POOLING) },
    VllmFlag { name: "cp-kv-cache-interleave-size", dest: "cp_kv_cache_interleave_size", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CP) },
    VllmFlag { name: "cpu-distributed-timeout-seconds", dest: "cpu_distributed_timeout_seconds", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "cpu-offload-gb", dest: "cpu_offload_gb", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CPU_OFFLOAD) },
    VllmFlag { name: "cpu-offload-params", dest: "cpu_offload_params", aliases: &[], takes: Takes::List, effect: Effect::NotModelled(CPU_OFFLOAD) },
    VllmFlag { name: "cudagraph-capture-sizes", dest: "cudagraph_capture_sizes", aliases: &[], takes: Takes::List, effect: Effect::NotModelled(CUDA_GRAPHS) },
    VllmFlag { name: "cudagraph-metrics", dest: "cudagraph_metrics", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "custom-histogram-buckets", dest: "custom_histogram_buckets", aliases: &[], takes: Takes::Json, effect: Effect::NoEffect },
    VllmFlag { name: "data-parallel-address", dest: "data_parallel_address", aliases: &["-dpa"], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "data-parallel-backend", dest: "data_parallel_backend", aliases: &["-dpb"], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "data-parallel-external-lb", dest: "data_parallel_external_lb", aliases: &["-dpe"], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "data-parallel-hybrid-lb", dest: "data_parallel_hybrid_lb", aliases: &["-dph"], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "data-parallel-multi-port-external-lb", dest: "data_parallel_multi_port_external_lb", aliases: &["-dpm"], takes: Takes::Switch { negatable: false }, effect: Effect::NoEffect },
    VllmFlag { name: "data-parallel-rank", dest: "data_parallel_rank", aliases: &["-dpn"], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "data-parallel-rpc-port", dest: "data_parallel_rpc_port", aliases: &["-dpp"], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "data-parallel-size", dest: "data_parallel_size", aliases: &["-dp"], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "data-parallel-size-local", dest: "data_parallel_size_local", aliases: &["-dpl"], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "data-parallel-start-rank", dest: "data_parallel_start_rank", aliases: &["-dpr"], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "data-parallel-supervisor-port", dest: "data_parallel_supervisor_port", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "dbo-decode-token-threshold", dest: "dbo_decode_token_threshold", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(DBO) },
    VllmFlag { name: "dbo-prefill-token-threshold", dest: "dbo_prefill_token_threshold", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(DBO) },
    VllmFlag { name: "dcp-comm-backend", dest: "dcp_comm_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CP) },
    VllmFlag { name: "dcp-kv-cache-interleave-size", dest: "dcp_kv_cache_interleave_size", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CP) },
    VllmFlag { name: "dcp-q-replicate", dest: "dcp_q_replicate", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(CP) },
    VllmFlag { name: "decode-context-parallel-size", dest: "decode_context_parallel_size", aliases: &["-dcp"], takes: Takes::Value, effect: Effect::NotModelled(CP) },
    VllmFlag { name: "default-chat-template-kwargs", dest: "default_chat_template_kwargs", aliases: &[], takes: Takes::Json, effect: Effect::NoEffect },
    VllmFlag { name: "default-mm-loras", dest: "default_mm_loras", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "device-ids", dest: "device_ids", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(GPUS) },
    VllmFlag { name: "diffusion-config", dest: "diffusion_config", aliases: &["-dc"], takes: Takes::Json, effect: Effect::NotModelled(DIFFUSION) },
    VllmFlag { name: "disable-access-log-for-endpoints", dest: "disable_access_log_for_endpoints", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "disable-cascade-attn", dest: "disable_cascade_attn", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "disable-chunked-mm-input", dest: "disable_chunked_mm_input", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "disable-custom-all-reduce", dest: "disable_custom_all_reduce", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(COMM) },
    VllmFlag { name: "disable-fastapi-docs", dest: "disable_fastapi_docs", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "disable-hybrid-kv-cache-manager", dest: "disable_hybrid_kv_cache_manager", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::Read },
    VllmFlag { name: "disable-log-stats", dest: "disable_log_stats", aliases: &[], takes: Takes::Switch { negatable: false }, effect: Effect::NoEffect },
    VllmFlag { name: "disable-nccl-for-dp-synchronization", dest: "disable_nccl_for_dp_synchronization", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(COMM) },
    VllmFlag { name: "disable-sliding-window", dest: "disable_sliding_window", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(KV_LAYOUT) },
    VllmFlag { name: "disable-uvicorn-access-log", dest: "disable_uvicorn_access_log", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "distributed-executor-backend", dest: "distributed_executor_backend", aliases: &[], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "distributed-timeout-seconds", dest: "distributed_timeout_seconds", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "download-dir", dest: "download_dir", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "dp-supervisor-probe-failure-threshold", dest: "dp_supervisor_probe_failure_threshold", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "dp-supervisor-probe-interval-s", dest: "dp_supervisor_probe_interval_s", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "dp-supervisor-probe-timeout-s", dest: "dp_supervisor_probe_timeout_s", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "dp-sync-interval", dest: "dp_sync_interval", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "dtype", dest: "dtype", aliases: &[], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "ec-manager-config", dest: "ec_manager_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(ENC_CACHE) },
    VllmFlag { name: "ec-transfer-config", dest: "ec_transfer_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(ENC_CACHE) },
    VllmFlag { name: "elastic-ep-max-dp-size", dest: "elastic_ep_max_dp_size", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(ELASTIC) },
    VllmFlag { name: "enable-auto-tool-choice", dest: "enable_auto_tool_choice", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-batch-sharded-sampling", dest: "enable_batch_sharded_sampling", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(SAMPLER) },
    VllmFlag { name: "enable-chunked-prefill", dest: "enable_chunked_prefill", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(TOKEN_BUDGET) },
    VllmFlag { name: "enable-cumem-allocator", dest: "enable_cumem_allocator", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(SLEEP) },
    VllmFlag { name: "enable-dbo", dest: "enable_dbo", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(DBO) },
    VllmFlag { name: "enable-elastic-ep", dest: "enable_elastic_ep", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(ELASTIC) },
    VllmFlag { name: "enable-ep-weight-filter", dest: "enable_ep_weight_filter", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-eplb", dest: "enable_eplb", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(EPLB) },
    VllmFlag { name: "enable-expert-parallel", dest: "enable_expert_parallel", aliases: &["-ep"], takes: Takes::Switch { negatable: true }, effect: Effect::Read },
    VllmFlag { name: "enable-fault-tolerance", dest: "enable_fault_tolerance", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-flash-late-interaction", dest: "enable_flash_late_interaction", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(POOLING) },
    VllmFlag { name: "enable-flashinfer-autotune", dest: "enable_flashinfer_autotune", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(KERNELS) },
    VllmFlag { name: "enable-force-include-usage", dest: "enable_force_include_usage", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-hc-sp", dest: "enable_hc_sp", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(HC_SP) },
    VllmFlag { name: "enable-layerwise-nvtx-tracing", dest: "enable_layerwise_nvtx_tracing", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-log-deltas", dest: "enable_log_deltas", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-log-outputs", dest: "enable_log_outputs", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-log-requests", dest: "enable_log_requests", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-logging-iteration-details", dest: "enable_logging_iteration_details", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-lora", dest: "enable_lora", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "enable-mamba-cache-stochastic-rounding", dest: "enable_mamba_cache_stochastic_rounding", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(MAMBA) },
    VllmFlag { name: "enable-mamba-shared-prefix-checkpoint", dest: "enable_mamba_shared_prefix_checkpoint", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(MAMBA) },
    VllmFlag { name: "enable-mfu-metrics", dest: "enable_mfu_metrics", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-mixed-moe-lora-format", dest: "enable_mixed_moe_lora_format", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "enable-mm-embeds", dest: "enable_mm_embeds", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(MM_ENCODER) },
    VllmFlag { name: "enable-moe-shared-loras", dest: "enable_moe_shared_loras", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "enable-nccl-comm-suspend", dest: "enable_nccl_comm_suspend", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(SLEEP) },
    VllmFlag { name: "enable-offline-docs", dest: "enable_offline_docs", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-per-request-metrics", dest: "enable_per_request_metrics", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-prefix-caching", dest: "enable_prefix_caching", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(MAMBA) },
    VllmFlag { name: "enable-prompt-embeds", dest: "enable_prompt_embeds", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(PROMPT_EMBEDS) },
    VllmFlag { name: "enable-prompt-tokens-details", dest: "enable_prompt_tokens_details", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-request-id-headers", dest: "enable_request_id_headers", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-return-routed-experts", dest: "enable_return_routed_experts", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(ROUTED) },
    VllmFlag { name: "enable-scale-out", dest: "enable_scale_out", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-server-load-tracking", dest: "enable_server_load_tracking", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-shm-tensor-arena", dest: "enable_shm_tensor_arena", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-sleep-mode", dest: "enable_sleep_mode", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(SLEEP) },
    VllmFlag { name: "enable-ssl-refresh", dest: "enable_ssl_refresh", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-tokenizer-info-endpoint", dest: "enable_tokenizer_info_endpoint", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "enable-tower-connector-lora", dest: "enable_tower_connector_lora", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "enable-trace-replay", dest: "enable_trace_replay", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(SAMPLER) },
    VllmFlag { name: "enforce-eager", dest: "enforce_eager", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::Read },
    VllmFlag { name: "engram-config", dest: "engram_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(ENGRAM) },
    VllmFlag { name: "eplb-config", dest: "eplb_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(EPLB) },
    VllmFlag { name: "exclude-tools-when-tool-choice-none", dest: "exclude_tools_when_tool_choice_none", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "expert-placement-strategy", dest: "expert_placement_strategy", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "fail-on-environ-validation", dest: "fail_on_environ_validation", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "fault-tolerance-config", dest: "fault_tolerance_config", aliases: &[], takes: Takes::Json, effect: Effect::NoEffect },
    VllmFlag { name: "fingerprint-mode", dest: "fingerprint_mode", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "fingerprint-value", dest: "fingerprint_value", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "fully-sharded-loras", dest: "fully_sharded_loras", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "gdn-prefill-backend", dest: "gdn_prefill_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(KERNELS) },
    VllmFlag { name: "generation-config", dest: "generation_config", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "gpu-memory-utilization", dest: "gpu_memory_utilization", aliases: &["--device-memory-utilization"], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "grpc", dest: "grpc", aliases: &[], takes: Takes::Switch { negatable: false }, effect: Effect::NoEffect },
    VllmFlag { name: "grpc-port", dest: "grpc_port", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "h11-max-header-count", dest: "h11_max_header_count", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "h11-max-incomplete-event-size", dest: "h11_max_incomplete_event_size", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "headless", dest: "headless", aliases: &[], takes: Takes::Switch { negatable: false }, effect: Effect::NoEffect },
    VllmFlag { name: "help", dest: "help", aliases: &["-h"], takes: Takes::Switch { negatable: false }, effect: Effect::NoEffect },
    VllmFlag { name: "hf-config-path", dest: "hf_config_path", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CHECKPOINT) },
    VllmFlag { name: "hf-overrides", dest: "hf_overrides", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(HF_OVERRIDES) },
    VllmFlag { name: "hf-token", dest: "hf_token", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "host", dest: "host", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "ignore-patterns", dest: "ignore_patterns", aliases: &[], takes: Takes::List, effect: Effect::NotModelled(LOAD) },
    VllmFlag { name: "interleave-mm-strings", dest: "interleave_mm_strings", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "io-processor-plugin", dest: "io_processor_plugin", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(POOLING) },
    VllmFlag { name: "ir-op-priority", dest: "ir_op_priority", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(KERNELS) },
    VllmFlag { name: "jit-monitor-mode", dest: "jit_monitor_mode", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "jit-monitor-verbose", dest: "jit_monitor_verbose", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "kda-decode-backend", dest: "kda_decode_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(KERNELS) },
    VllmFlag { name: "kda-prefill-backend", dest: "kda_prefill_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(KERNELS) },
    VllmFlag { name: "kernel-config", dest: "kernel_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(KERNELS) },
    VllmFlag { name: "kv-cache-dtype", dest: "kv_cache_dtype", aliases: &[], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "kv-cache-dtype-skip-layers", dest: "kv_cache_dtype_skip_layers", aliases: &[], takes: Takes::List, effect: Effect::NotModelled(KV_LAYOUT) },
    VllmFlag { name: "kv-cache-memory-bytes", dest: "kv_cache_memory_bytes", aliases: &[], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "kv-cache-metrics", dest: "kv_cache_metrics", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "kv-cache-metrics-sample", dest: "kv_cache_metrics_sample", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "kv-events-config", dest: "kv_events_config", aliases: &[], takes: Takes::Json, effect: Effect::NoEffect },
    VllmFlag { name: "kv-offloading-backend", dest: "kv_offloading_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(KV_OFFLOAD) },
    VllmFlag { name: "kv-offloading-size", dest: "kv_offloading_size", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(KV_OFFLOAD) },
    VllmFlag { name: "kv-sharing-fast-prefill", dest: "kv_sharing_fast_prefill", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(KV_LAYOUT) },
    VllmFlag { name: "kv-transfer-config", dest: "kv_transfer_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(KV_OFFLOAD) },
    VllmFlag { name: "language-model-only", dest: "language_model_only", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(MM_ENCODER) },
    VllmFlag { name: "limit-mm-per-prompt", dest: "limit_mm_per_prompt", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(MM_PROFILE) },
    VllmFlag { name: "linear-backend", dest: "linear_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(KERNELS) },
    VllmFlag { name: "load-format", dest: "load_format", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(LOAD) },
    VllmFlag { name: "log-config-file", dest: "log_config_file", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "log-error-stack", dest: "log_error_stack", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "log-level", dest: "log_level", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "logging-config", dest: "logging_config", aliases: &[], takes: Takes::Json, effect: Effect::NoEffect },
    VllmFlag { name: "logits-processors", dest: "logits_processors", aliases: &[], takes: Takes::List, effect: Effect::NotModelled(CUSTOM) },
    VllmFlag { name: "logprobs-mode", dest: "logprobs_mode", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(SAMPLER) },
    VllmFlag { name: "long-prefill-token-threshold", dest: "long_prefill_token_threshold", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "long-prefill-token-threshold-adaptive", dest: "long_prefill_token_threshold_adaptive", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "lora-dtype", dest: "lora_dtype", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "lora-modules", dest: "lora_modules", aliases: &[], takes: Takes::List, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "lora-target-modules", dest: "lora_target_modules", aliases: &[], takes: Takes::List, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "mamba-backend", dest: "mamba_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(KERNELS) },
    VllmFlag { name: "mamba-block-size", dest: "mamba_block_size", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MAMBA) },
    VllmFlag { name: "mamba-cache-dtype", dest: "mamba_cache_dtype", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MAMBA) },
    VllmFlag { name: "mamba-cache-mode", dest: "mamba_cache_mode", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "mamba-cache-philox-rounds", dest: "mamba_cache_philox_rounds", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "mamba-ssm-cache-dtype", dest: "mamba_ssm_cache_dtype", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MAMBA) },
    VllmFlag { name: "mamba-ssu-algorithm", dest: "mamba_ssu_algorithm", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(KERNELS) },
    VllmFlag { name: "master-addr", dest: "master_addr", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "master-port", dest: "master_port", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "max-cpu-loras", dest: "max_cpu_loras", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "max-cudagraph-capture-size", dest: "max_cudagraph_capture_size", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CUDA_GRAPHS) },
    VllmFlag { name: "max-log-len", dest: "max_log_len", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "max-logprobs", dest: "max_logprobs", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "max-lora-cls-labels", dest: "max_lora_cls_labels", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "max-lora-rank", dest: "max_lora_rank", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "max-loras", dest: "max_loras", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "max-model-len", dest: "max_model_len", aliases: &[], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "max-num-active-seqs", dest: "max_num_active_seqs", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "max-num-batched-tokens", dest: "max_num_batched_tokens", aliases: &[], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "max-num-queued-reqs", dest: "max_num_queued_reqs", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "max-num-queued-tokens", dest: "max_num_queued_tokens", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "max-num-scheduled-tokens", dest: "max_num_scheduled_tokens", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "max-num-seqs", dest: "max_num_seqs", aliases: &[], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "max-parallel-loading-workers", dest: "max_parallel_loading_workers", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "media-io-kwargs", dest: "media_io_kwargs", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(MM_PROFILE) },
    VllmFlag { name: "middleware", dest: "middleware", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "mm-device-do-normalize", dest: "mm_device_do_normalize", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(MM_GPU) },
    VllmFlag { name: "mm-encoder-attn-backend", dest: "mm_encoder_attn_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MM_ENCODER) },
    VllmFlag { name: "mm-encoder-attn-dtype", dest: "mm_encoder_attn_dtype", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MM_ENCODER) },
    VllmFlag { name: "mm-encoder-fp8-scale-path", dest: "mm_encoder_fp8_scale_path", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MM_ENCODER) },
    VllmFlag { name: "mm-encoder-fp8-scale-save-margin", dest: "mm_encoder_fp8_scale_save_margin", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MM_ENCODER) },
    VllmFlag { name: "mm-encoder-fp8-scale-save-path", dest: "mm_encoder_fp8_scale_save_path", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MM_ENCODER) },
    VllmFlag { name: "mm-encoder-only", dest: "mm_encoder_only", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(MM_ENCODER) },
    VllmFlag { name: "mm-encoder-tp-mode", dest: "mm_encoder_tp_mode", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MM_ENCODER) },
    VllmFlag { name: "mm-hasher-algorithm", dest: "mm_hasher_algorithm", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "mm-ipc-gpu-memory-gb", dest: "mm_ipc_gpu_memory_gb", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MM_IPC) },
    VllmFlag { name: "mm-processor-cache-gb", dest: "mm_processor_cache_gb", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "mm-processor-cache-type", dest: "mm_processor_cache_type", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "mm-processor-device", dest: "mm_processor_device", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MM_GPU) },
    VllmFlag { name: "mm-processor-kwargs", dest: "mm_processor_kwargs", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(MM_PROFILE) },
    VllmFlag { name: "mm-shm-cache-max-object-size-mb", dest: "mm_shm_cache_max_object_size_mb", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "mm-tensor-ipc", dest: "mm_tensor_ipc", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MM_GPU) },
    VllmFlag { name: "model", dest: "model", aliases: &[], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "model-class-overrides", dest: "model_class_overrides", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(MODEL_IMPL) },
    VllmFlag { name: "model-impl", dest: "model_impl", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MODEL_IMPL) },
    VllmFlag { name: "model-loader-extra-config", dest: "model_loader_extra_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(LOAD) },
    VllmFlag { name: "moe-backend", dest: "moe_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(KERNELS) },
    VllmFlag { name: "monokernel", dest: "monokernel", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(KERNELS) },
    VllmFlag { name: "nnodes", dest: "nnodes", aliases: &["-n"], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "node-rank", dest: "node_rank", aliases: &["-r"], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "num-gpu-blocks-override", dest: "num_gpu_blocks_override", aliases: &[], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "numa-bind", dest: "numa_bind", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "numa-bind-cpus", dest: "numa_bind_cpus", aliases: &[], takes: Takes::List, effect: Effect::NoEffect },
    VllmFlag { name: "numa-bind-nodes", dest: "numa_bind_nodes", aliases: &[], takes: Takes::List, effect: Effect::NoEffect },
    VllmFlag { name: "offload-backend", dest: "offload_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CPU_OFFLOAD) },
    VllmFlag { name: "offload-group-size", dest: "offload_group_size", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CPU_OFFLOAD) },
    VllmFlag { name: "offload-num-in-group", dest: "offload_num_in_group", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CPU_OFFLOAD) },
    VllmFlag { name: "offload-params", dest: "offload_params", aliases: &[], takes: Takes::List, effect: Effect::NotModelled(CPU_OFFLOAD) },
    VllmFlag { name: "offload-prefetch-step", dest: "offload_prefetch_step", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CPU_OFFLOAD) },
    VllmFlag { name: "optimization-level", dest: "optimization_level", aliases: &["-O"], takes: Takes::Value, effect: Effect::NotModelled(CUDA_GRAPHS) },
    VllmFlag { name: "otlp-traces-endpoint", dest: "otlp_traces_endpoint", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "override-generation-config", dest: "override_generation_config", aliases: &[], takes: Takes::Json, effect: Effect::NoEffect },
    VllmFlag { name: "per-request-spec-decode-metrics", dest: "per_request_spec_decode_metrics", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "performance-mode", dest: "performance_mode", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(PERF_MODE) },
    VllmFlag { name: "pipeline-parallel-size", dest: "pipeline_parallel_size", aliases: &["-pp"], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "pooler-config", dest: "pooler_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(POOLING) },
    VllmFlag { name: "port", dest: "port", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "prefill-context-parallel-size", dest: "prefill_context_parallel_size", aliases: &["-pcp"], takes: Takes::Value, effect: Effect::NotModelled(CP) },
    VllmFlag { name: "prefill-schedule-interval", dest: "prefill_schedule_interval", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "prefix-cache-retention-interval", dest: "prefix_cache_retention_interval", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "prefix-caching-hash-algo", dest: "prefix_caching_hash_algo", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "prefix-match-unit", dest: "prefix_match_unit", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "profiler-config", dest: "profiler_config", aliases: &[], takes: Takes::Json, effect: Effect::NoEffect },
    VllmFlag { name: "pt-load-map-location", dest: "pt_load_map_location", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(LOAD) },
    VllmFlag { name: "quantization", dest: "quantization", aliases: &["-q"], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "quantization-config", dest: "quantization_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(DTYPE_QUANT) },
    VllmFlag { name: "ray-workers-use-nsight", dest: "ray_workers_use_nsight", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "reasoning-config", dest: "reasoning_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(THINKING) },
    VllmFlag { name: "reasoning-effort-map", dest: "reasoning_effort_map", aliases: &[], takes: Takes::Json, effect: Effect::NoEffect },
    VllmFlag { name: "reasoning-parser", dest: "reasoning_parser", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(THINKING) },
    VllmFlag { name: "reasoning-parser-plugin", dest: "reasoning_parser_plugin", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "renderer-num-workers", dest: "renderer_num_workers", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "replayssm-buffer-len", dest: "replayssm_buffer_len", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MAMBA) },
    VllmFlag { name: "response-role", dest: "response_role", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "return-sampling-mask", dest: "return_sampling_mask", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(SAMPLER) },
    VllmFlag { name: "return-tokens-as-token-ids", dest: "return_tokens_as_token_ids", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "revision", dest: "revision", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CHECKPOINT) },
    VllmFlag { name: "root-path", dest: "root_path", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "runner", dest: "runner", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(POOLING) },
    VllmFlag { name: "safetensors-load-strategy", dest: "safetensors_load_strategy", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(LOAD) },
    VllmFlag { name: "safetensors-prefetch-block-size", dest: "safetensors_prefetch_block_size", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "safetensors-prefetch-num-threads", dest: "safetensors_prefetch_num_threads", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "scheduler-cls", dest: "scheduler_cls", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CUSTOM) },
    VllmFlag { name: "scheduler-reserve-full-isl", dest: "scheduler_reserve_full_isl", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "scheduling-policy", dest: "scheduling_policy", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "seed", dest: "seed", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "served-model-name", dest: "served_model_name", aliases: &[], takes: Takes::List, effect: Effect::NoEffect },
    VllmFlag { name: "show-hidden-metrics-for-version", dest: "show_hidden_metrics_for_version", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "shutdown-timeout", dest: "shutdown_timeout", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "skip-mm-profiling", dest: "skip_mm_profiling", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(MM_PROFILE) },
    VllmFlag { name: "skip-tokenizer-init", dest: "skip_tokenizer_init", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "sleep-mode-backend", dest: "sleep_mode_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(SLEEP) },
    VllmFlag { name: "sleep-mode-offload-cudagraph", dest: "sleep_mode_offload_cudagraph", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(SLEEP) },
    VllmFlag { name: "sleep-preserve-parameter-names", dest: "sleep_preserve_parameter_names", aliases: &[], takes: Takes::List, effect: Effect::NotModelled(SLEEP) },
    VllmFlag { name: "sparse-indexer-topk-backend", dest: "sparse_indexer_topk_backend", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(KERNELS) },
    VllmFlag { name: "spec-method", dest: "spec_method", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(SPEC_SHORTCUT) },
    VllmFlag { name: "spec-model", dest: "spec_model", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(SPEC_SHORTCUT) },
    VllmFlag { name: "spec-tokens", dest: "spec_tokens", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(SPEC_SHORTCUT) },
    VllmFlag { name: "specialize-active-lora", dest: "specialize_active_lora", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(LORA) },
    VllmFlag { name: "speculative-config", dest: "speculative_config", aliases: &["-sc"], takes: Takes::Json, effect: Effect::Read },
    VllmFlag { name: "sse-keep-alive-interval", dest: "sse_keep_alive_interval", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "ssl-ca-certs", dest: "ssl_ca_certs", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "ssl-cert-reqs", dest: "ssl_cert_reqs", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "ssl-certfile", dest: "ssl_certfile", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "ssl-ciphers", dest: "ssl_ciphers", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "ssl-keyfile", dest: "ssl_keyfile", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "stream-interval", dest: "stream_interval", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "structured-outputs-config", dest: "structured_outputs_config", aliases: &[], takes: Takes::Json, effect: Effect::NoEffect },
    VllmFlag { name: "swa-bounded-replay", dest: "swa_bounded_replay", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(KV_LAYOUT) },
    VllmFlag { name: "tensor-parallel-size", dest: "tensor_parallel_size", aliases: &["-tp"], takes: Takes::Value, effect: Effect::Read },
    VllmFlag { name: "tokenizer", dest: "tokenizer", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "tokenizer-mode", dest: "tokenizer_mode", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "tokenizer-revision", dest: "tokenizer_revision", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "tokens-only", dest: "tokens_only", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "tool-call-parser", dest: "tool_call_parser", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "tool-parser-plugin", dest: "tool_parser_plugin", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "tool-server", dest: "tool_server", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "tool-strict-level", dest: "tool_strict_level", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "trust-remote-code", dest: "trust_remote_code", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(CHECKPOINT) },
    VllmFlag { name: "trust-request-chat-template", dest: "trust_request_chat_template", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "trust-request-mm-kwargs", dest: "trust_request_mm_kwargs", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "ubatch-size", dest: "ubatch_size", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(DBO) },
    VllmFlag { name: "uds", dest: "uds", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "use-fp64-gumbel", dest: "use_fp64_gumbel", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(SAMPLER) },
    VllmFlag { name: "use-replayssm", dest: "use_replayssm", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NotModelled(MAMBA) },
    VllmFlag { name: "use-tqdm-on-load", dest: "use_tqdm_on_load", aliases: &[], takes: Takes::Switch { negatable: true }, effect: Effect::NoEffect },
    VllmFlag { name: "uvicorn-log-level", dest: "uvicorn_log_level", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "video-pruning-method", dest: "video_pruning_method", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MM_PROFILE) },
    VllmFlag { name: "video-pruning-rate", dest: "video_pruning_rate", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(MM_PROFILE) },
    VllmFlag { name: "watchdog-config", dest: "watchdog_config", aliases: &[], takes: Takes::Json, effect: Effect::NoEffect },
    VllmFlag { name: "watermark", dest: "watermark", aliases: &[], takes: Takes::Value, effect: Effect::NoEffect },
    VllmFlag { name: "watermark-config", dest: "watermark_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(SAMPLER) },
    VllmFlag { name: "weight-transfer-config", dest: "weight_transfer_config", aliases: &[], takes: Takes::Json, effect: Effect::NotModelled(WEIGHT_TRANSFER) },
    VllmFlag { name: "worker-cls", dest: "worker_cls", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CUSTOM) },
    VllmFlag { name: "worker-extension-cls", dest: "worker_extension_cls", aliases: &[], takes: Takes::Value, effect: Effect::NotModelled(CUSTOM) },
];

/// The flag a command-line name refers to: accepts "tensor-parallel-size", "tensor_parallel_size" (vLLM normalises underscores to dashes), and any alias ("-tp"). Returns None for a name vLLM does not know.
///
/// Also accepted: the name with its dashes (`--tensor-parallel-size`), and a dotted key of a
/// JSON flag (`compilation_config.cudagraph_mode`, `-cc.mode`), which is that flag. Negative
/// spellings of a switch (`no-enforce-eager`, `disable-prefix-caching`) return None: see the
/// module documentation.
pub fn lookup(name: &str) -> Option<&'static VllmFlag> {
    if let Some(long) = name.strip_prefix("--") {
        return lookup_long(long);
    }
    if name.starts_with('-') {
        // Short forms: vLLM rewrites no underscores in them; a dotted key still splits off.
        let (head, dotted) = split_key(name);
        let flag = FLAGS.iter().find(|f| f.aliases.contains(&head))?;
        return (!dotted || flag.takes == Takes::Json).then_some(flag);
    }
    lookup_long(name)
}

/// A long name without its dashes, as `FlexibleArgumentParser.parse_args` normalises it:
/// underscores become dashes up to the first `.`.
fn lookup_long(raw: &str) -> Option<&'static VllmFlag> {
    let (head, dotted) = split_key(raw);
    let long = head.replace('_', "-");
    let flag = match FLAGS.binary_search_by(|f| f.name.cmp(long.as_str())) {
        Ok(i) => &FLAGS[i],
        Err(_) => FLAGS.iter().find(|f| {
            f.aliases
                .iter()
                .any(|a| a.strip_prefix("--") == Some(long.as_str()))
        })?,
    };
    (!dotted || flag.takes == Takes::Json).then_some(flag)
}

fn split_key(name: &str) -> (&str, bool) {
    match name.split_once('.') {
        Some((head, _)) => (head, true),
        None => (name, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_sorted_and_unique() {
        for w in FLAGS.windows(2) {
            assert!(w[0].name < w[1].name, "{} then {}", w[0].name, w[1].name);
        }
    }

    #[test]
    fn names_and_dests_are_well_formed() {
        for f in FLAGS {
            assert!(
                !f.name.starts_with('-') && !f.name.contains('_'),
                "{}",
                f.name
            );
            assert_eq!(f.dest, f.name.replace('-', "_"), "{}", f.name);
            if let Effect::NotModelled(what) = f.effect {
                assert!(!what.is_empty() && what.len() < 60, "{}: {what}", f.name);
            }
        }
        let dests: HashSet<_> = FLAGS.iter().map(|f| f.dest).collect();
        assert_eq!(dests.len(), FLAGS.len());
    }

    #[test]
    fn every_alias_is_unique() {
        let mut seen: HashSet<&str> = FLAGS.iter().map(|f| f.name).collect();
        for f in FLAGS {
            for a in f.aliases {
                assert!(a.starts_with('-'), "{a}");
                let bare = a.trim_start_matches('-');
                if a.starts_with("--") {
                    assert!(seen.insert(bare), "{a} collides");
                } else {
                    assert!(seen.insert(a), "{a} collides");
                }
            }
        }
    }

    #[test]
    fn read_is_exactly_the_modelled_set() {
        let read: HashSet<&str> = FLAGS
            .iter()
            .filter(|f| f.effect == Effect::Read)
            .map(|f| f.dest)
            .collect();
        let want: HashSet<&str> = [
            "model",
            "tensor_parallel_size",
            "pipeline_parallel_size",
            "data_parallel_size",
            "gpu_memory_utilization",
            "max_model_len",
            "max_num_seqs",
            "max_num_batched_tokens",
            "kv_cache_dtype",
            "quantization",
            "dtype",
            "block_size",
            "kv_cache_memory_bytes",
            "enable_expert_parallel",
            "enforce_eager",
            "num_gpu_blocks_override",
            "disable_hybrid_kv_cache_manager",
            "async_scheduling",
            "attention_backend",
            "speculative_config",
            "distributed_executor_backend",
        ]
        .into_iter()
        .collect();
        assert_eq!(read, want);
    }

    #[test]
    fn lookup_by_name_underscores_and_aliases() {
        let tp = lookup("tensor-parallel-size").unwrap();
        assert_eq!(tp.dest, "tensor_parallel_size");
        assert_eq!(
            lookup("tensor_parallel_size").unwrap().name,
            "tensor-parallel-size"
        );
        assert_eq!(
            lookup("--tensor_parallel-size").unwrap().name,
            "tensor-parallel-size"
        );
        assert_eq!(lookup("-tp").unwrap().name, "tensor-parallel-size");
        assert_eq!(lookup("-pp").unwrap().name, "pipeline-parallel-size");
        assert_eq!(lookup("-dp").unwrap().name, "data-parallel-size");
        assert_eq!(lookup("-ep").unwrap().name, "enable-expert-parallel");
        assert_eq!(lookup("-q").unwrap().name, "quantization");
        assert_eq!(lookup("-h").unwrap().name, "help");
        let gmu = lookup("device_memory_utilization").unwrap();
        assert_eq!(gmu.dest, "gpu_memory_utilization");
        assert_eq!(
            lookup("--device-memory-utilization").unwrap().dest,
            "gpu_memory_utilization"
        );
        assert!(lookup("tp").is_none());
        assert!(lookup("-tensor-parallel-size").is_none());
    }

    #[test]
    fn lookup_dotted_json_keys() {
        assert_eq!(
            lookup("compilation_config.cudagraph_mode").unwrap().name,
            "compilation-config"
        );
        assert_eq!(
            lookup("--speculative-config.num_speculative_tokens")
                .unwrap()
                .dest,
            "speculative_config"
        );
        assert_eq!(lookup("-cc.mode").unwrap().name, "compilation-config");
        assert!(lookup("max-model-len.x").is_none());
    }

    #[test]
    fn takes_and_negation() {
        assert_eq!(
            lookup("enforce-eager").unwrap().takes,
            Takes::Switch { negatable: true }
        );
        assert_eq!(
            lookup("disable-log-stats").unwrap().takes,
            Takes::Switch { negatable: false }
        );
        assert_eq!(
            lookup("headless").unwrap().takes,
            Takes::Switch { negatable: false }
        );
        assert_eq!(lookup("served-model-name").unwrap().takes, Takes::List);
        assert_eq!(lookup("speculative-config").unwrap().takes, Takes::Json);
        assert_eq!(lookup("max-model-len").unwrap().takes, Takes::Value);
        // Negative spellings are not aliases.
        assert!(lookup("no-enforce-eager").is_none());
        assert!(lookup("disable-log-requests").is_none());
        assert!(lookup("disable-prefix-caching").is_none());
        let twin = lookup("enable-log-requests").unwrap();
        assert_eq!(twin.takes, Takes::Switch { negatable: true });
    }

    #[test]
    fn removed_flags_are_unknown() {
        for gone in [
            "speculative-model",
            "speculative_model",
            "num-speculative-tokens",
            "use-v2-block-manager",
            "max-seq-len-to-capture",
            "swap-space",
            "num-scheduler-steps",
            "task",
        ] {
            assert!(lookup(gone).is_none(), "{gone}");
        }
    }
}
