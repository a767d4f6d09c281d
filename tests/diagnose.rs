//! Diagnose from a symptom (issue 17, item 2): a pasted error matches its symptom in any
//! release's wording, and each diagnosis's move, applied to the scenario, makes the phase it
//! names pass: the numbers come from the plan and the solvers, and they work.

use headroom::calc::scenario::{MaxLen, Scenario};
use headroom::calc::timeline::StartPhase;
use headroom::calc::units::{UnitSystem, GIB};
use headroom::calc::{plan, Plan};
use headroom::catalog;
use headroom::diagnose::{diagnose, recognise, Diagnosis, Symptom};

fn scenario(model: &str, gpu: &str) -> Scenario {
    let m = catalog::model(model).unwrap();
    let g = catalog::gpu(gpu).unwrap();
    Scenario::new(m.model.clone(), g.gpu.clone())
}

fn planned(s: &Scenario) -> Plan {
    plan(s).unwrap()
}

fn diag(symptom: Symptom, s: &Scenario) -> Diagnosis {
    diagnose(symptom, s, &planned(s), None, UnitSystem::Binary)
}

/// The number after `before` in `text` (digits, commas and a point).
fn number_after(text: &str, before: &str) -> f64 {
    let i = text
        .find(before)
        .unwrap_or_else(|| panic!("{before:?} not in {text:?}"))
        + before.len();
    let n: String = text[i..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
        .filter(|c| *c != ',')
        .collect();
    n.trim_end_matches('.')
        .parse()
        .unwrap_or_else(|_| panic!("no number after {before:?} in {text:?}"))
}

#[test]
fn pasted_errors_match_their_symptom_in_each_releases_wording() {
    for (text, want) in [
        // vLLM 0.14 and later name the device; before, not.
        ("ValueError: Free memory on device cuda:0 (3.22/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.", Symptom::InitFree),
        ("ValueError: Free memory on device (7.34/139.72 GiB) on startup is less than desired GPU memory utilization (0.9, 125.75 GiB).", Symptom::InitFree),
        ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.", Symptom::NoCacheBlocks),
        ("ValueError: To serve at least one request with the models's max seq len (221000), (10.12 GiB KV cache is needed, which is larger than the available KV cache memory (5.59 GiB).", Symptom::Capacity),
        ("ValueError: To serve at least one request with the model's max seq len (131072), (16.00 GiB KV cache is needed", Symptom::Capacity),
        ("ValueError: The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (23648).", Symptom::Capacity),
        ("File \"gpu_model_runner.py\", line 2000, in capture_model\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", Symptom::OomGraphs),
        ("File \"gpu_worker.py\", in determine_available_memory\n  self.model_runner.profile_run()\ntorch.OutOfMemoryError: CUDA out of memory.", Symptom::OomProfile),
        ("File \"gpu_model_runner.py\", in load_model\n  self.model = model_loader.load_model(...)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 896.00 MiB.", Symptom::OomLoad),
        ("WARNING scheduler.py: Sequence group 12 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space.", Symptom::Preemption),
        ("NVRM: ... NV_ERR_NO_MEMORY", Symptom::NvErrNoMemory),
        ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized", Symptom::CuInit),
    ] {
        assert_eq!(recognise(text), Ok(want), "{text}");
    }
    // An OOM that names no phase is not guessed; text that is no vLLM error is said so.
    assert!(recognise("torch.OutOfMemoryError: CUDA out of memory.")
        .unwrap_err()
        .contains("does not say in which phase"));
    assert!(recognise("hello").unwrap_err().contains("pick a symptom"));
    assert!(recognise("  ").unwrap_err().contains("empty"));
    let huge = "x".repeat(headroom::diagnose::MAX_TEXT + 1);
    assert!(recognise(&huge).unwrap_err().contains("over the"));
}

#[test]
fn every_symptom_has_a_phase_proof_move_and_disproof() {
    let s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    for sym in Symptom::ALL {
        let d = diag(sym, &s);
        assert!(
            !d.proves.is_empty() && !d.not_proved.is_empty() && !d.disproof.is_empty(),
            "{sym:?}"
        );
        assert!(!d.moves.is_empty(), "{sym:?}");
        assert_eq!(Symptom::from_key(sym.key()), Some(sym));
    }
}

#[test]
fn the_init_move_passes_the_init_check() {
    let mut s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    s.engine.max_model_len = MaxLen::Value(8192);
    s.runtime.other_tenants = headroom::calc::units::Bytes(20 * GIB);
    assert_eq!(planned(&s).stopped_at, Some(StartPhase::InitCheck));
    let d = diag(Symptom::InitFree, &s);
    assert!(
        d.scenario.contains("fails at the same phase"),
        "{}",
        d.scenario
    );
    let u = number_after(&d.moves[0], "to at most ");
    let mut fixed = s.clone();
    fixed.engine.gpu_memory_utilization = Some(u);
    let p = planned(&fixed);
    assert_ne!(
        p.stopped_at,
        Some(StartPhase::InitCheck),
        "{:?}",
        p.first_failure()
    );
}

#[test]
fn the_load_move_names_a_tp_that_loads() {
    let s = scenario("llama-3.1-70b-instruct", "h100-sxm-80gb");
    let p = planned(&s);
    assert_eq!(p.stopped_at, Some(StartPhase::LoadWeights));
    let d = diag(Symptom::OomLoad, &s);
    assert!(
        d.moves[0].contains("--tensor-parallel-size 2") && d.moves[0].ends_with("which fits."),
        "{}",
        d.moves[0]
    );
    assert!(d.not_proved.contains("does not cap loading"));
    let mut fixed = s.clone();
    (fixed.parallel.tp, fixed.gpus) = (2, 2);
    assert!(planned(&fixed).ranks.iter().all(|r| r.load_headroom >= 0));
}

#[test]
fn the_kv_sizing_move_gives_the_pool_room() {
    let mut s = scenario("llama-3.1-70b-instruct", "h100-sxm-80gb");
    (s.parallel.tp, s.gpus) = (2, 2);
    s.engine.gpu_memory_utilization = Some(0.82);
    assert_eq!(planned(&s).stopped_at, Some(StartPhase::KvSizing));
    let d = diag(Symptom::NoCacheBlocks, &s);
    let u = number_after(&d.moves[0], "to at least ");
    let mut fixed = s.clone();
    fixed.engine.gpu_memory_utilization = Some(u);
    let p = planned(&fixed);
    // KV sizing passes there (at 131,072 tokens the capacity check then fails, a phase on).
    assert!(
        p.stopped_at.map_or(true, |st| st > StartPhase::KvSizing),
        "{:?}",
        p.first_failure()
    );
    let mut below = s.clone();
    below.engine.gpu_memory_utilization = Some(u - 0.0001);
    assert_eq!(
        planned(&below).stopped_at,
        Some(StartPhase::KvSizing),
        "{u} is the smallest"
    );
    // The pin it names starts too.
    let pin = number_after(&d.moves[1], "--kv-cache-memory-bytes ") as u64;
    let mut pinned = s.clone();
    pinned.engine.kv_cache_memory_bytes = Some(pin);
    let st = planned(&pinned).stopped_at;
    assert!(
        !matches!(st, Some(StartPhase::KvSizing | StartPhase::Allocation)),
        "{st:?}"
    );
}

#[test]
fn the_capacity_move_fits_one_request() {
    let mut s = scenario("llama-3.1-70b-instruct", "h100-sxm-80gb");
    (s.parallel.pp, s.gpus) = (2, 2);
    assert_eq!(planned(&s).stopped_at, Some(StartPhase::Capacity));
    let d = diag(Symptom::Capacity, &s);
    let len = number_after(&d.moves[0], "to at most ") as u64;
    let mut fixed = s.clone();
    fixed.engine.max_model_len = MaxLen::Value(len);
    assert!(planned(&fixed).starts());
    assert!(d.moves.iter().any(|m| m.contains("--kv-cache-dtype fp8")));
    assert!(d.not_proved.contains("demand, not a reservation"));
}

#[test]
fn the_graph_move_frees_the_graphs() {
    let mut s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    s.engine.max_model_len = MaxLen::Value(8192);
    s.engine.kv_cache_memory_bytes = Some(70 * GIB);
    assert_eq!(planned(&s).stopped_at, Some(StartPhase::Allocation));
    let d = diag(Symptom::OomGraphs, &s);
    assert!(d.moves[0].starts_with("--enforce-eager"));
    let pin = number_after(&d.moves[1], "at most ") as u64;
    let mut fixed = s.clone();
    fixed.engine.kv_cache_memory_bytes = Some(pin);
    assert!(planned(&fixed).starts());
}

#[test]
fn preemption_reads_the_pool_and_the_demand() {
    let s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    let p = planned(&s);
    let d = diag(Symptom::Preemption, &s);
    let rep = p.replica.as_ref().unwrap();
    assert!(
        d.proves
            .contains(&headroom::calc::units::thousands(u128::from(
                rep.kv_cache_tokens
            ))),
        "{}",
        d.proves
    );
    assert!(d.scenario.contains("starts"));
}

#[test]
fn a_pasted_init_error_brings_its_figures() {
    let text = "ValueError: Free memory on device (7.34/139.72 GiB) on startup is less than desired GPU memory utilization (0.9, 125.75 GiB).";
    let log = headroom::import::log::read(text).unwrap();
    let s = scenario("llama-3.1-8b-instruct", "h200-141gb");
    let d = diagnose(
        recognise(text).unwrap(),
        &s,
        &planned(&s),
        Some(&log),
        UnitSystem::Binary,
    );
    assert_eq!(d.pasted.len(), 1);
    assert!(
        d.pasted[0].contains("free at start 7.34 GiB of 139.72 GiB")
            && d.pasted[0].contains("other processes held 132.38 GiB"),
        "{}",
        d.pasted[0]
    );
}

/// Error texts as users pasted them in public threads (verbatim excerpts; the URL of each).
#[test]
fn errors_from_public_threads_match_their_symptom() {
    for (url, text, want) in [
        ("https://github.com/vllm-project/vllm/issues/20305",
         "[multiproc_executor.py:492] ValueError: Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory utilization (0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\nERROR 06-30 13:53:19 [core.py:515] EngineCore failed to start.",
         Symptom::InitFree),
        ("https://github.com/pytorch/pytorch/issues/175666 (vLLM CI)",
         "[2026-02-24T20:21:58Z] (EngineCore_DP0 pid=6940) ValueError: Free memory on device cuda:1 (19.77/22.05 GiB) on startup is less than desired GPU memory utilization (0.9, 19.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
         Symptom::InitFree),
        ("https://github.com/vllm-project/vllm/issues/10439",
         "vllm-1  | ERROR 11-18 18:07:28 engine.py:366]     raise ValueError(\"No available memory for the cache blocks. \"\nvllm-1  | ERROR 11-18 18:07:28 engine.py:366] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
         Symptom::NoCacheBlocks),
        ("https://github.com/vllm-project/vllm/issues/34076",
         "(EngineCore_DP0 pid=1094) ValueError: To serve at least one request with the models's max seq len (262144), (24.0 GiB KV cache is needed, which is larger than the available KV cache memory (3.18 GiB). Based on the available memory, the estimated maximum model length is 34736. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
         Symptom::Capacity),
        ("https://github.com/vllm-project/recipes/pull/653",
         "ValueError: To serve at least one request with the model's max seq len (1048576), (44.25 GiB KV cache is needed, which is larger than the available KV cache memory (8.42 GiB). Based on the available memory, the estimated maximum model length is 199552. Try increasing gpu_memory_utilization (which also controls CPU memory on the CPU backend) or decreasing max_model_len when initializing the engine.",
         Symptom::Capacity),
        ("https://github.com/vllm-project/vllm/issues/10517",
         "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
         Symptom::Capacity),
        ("https://github.com/vllm-project/vllm/issues/19186",
         "(VllmWorker rank=3 pid=1090) ERROR 06-05 06:18:13 [multiproc_executor.py:470]     with torch.cuda.graph(cudagraph, pool=self.graph_pool):\n(VllmWorker rank=3 pid=1090) ERROR 06-05 06:18:13 [multiproc_executor.py:470]     self.cuda_graph.capture_end()\n(VllmWorker rank=3 pid=1090) ERROR 06-05 06:18:13 [multiproc_executor.py:470] RuntimeError: CUDA error: out of memory",
         Symptom::OomGraphs),
        ("https://github.com/vllm-project/vllm/issues/28143",
         "(EngineCore_DP0 pid=12473) ERROR 11-05 12:19:32 [linear.py:210] Failed to create unquantized linear weights: CUDA out of memory. Tried to allocate 896.00 MiB. GPU 0 has a total capacity of 93.09 GiB of which 739.81 MiB is free.\n(EngineCore_DP0 pid=12473) ERROR 11-05 12:19:32 [core.py:708]   File \"/home/localadmin/Documents/vllm/.venv/lib/python3.10/site-packages/vllm/model_executor/layers/linear.py\", line 202, in create_weights",
         Symptom::OomLoad),
        ("https://github.com/vllm-project/vllm/issues/10034",
         "INFO 11-05 03:21:41 enc_dec_model_runner.py:297] Starting profile run for multi-modal models.\n(VllmWorkerProcess pid=67) ERROR 11-05 03:21:52 multiproc_worker_utils.py:233] Exception in worker VllmWorkerProcess while processing method determine_num_available_blocks: CUDA out of memory. Tried to allocate 1.95 GiB.",
         Symptom::OomProfile),
        ("https://github.com/vllm-project/vllm/issues/56824",
         "nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359",
         Symptom::NvErrNoMemory),
        ("https://github.com/gpustack/gpustack/issues/4678 (vLLM 0.15.0)",
         "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination",
         Symptom::CuInit),
        ("https://github.com/vllm-project/vllm/issues/9342",
         "WARNING 10-11 06:51:31 scheduler.py:1493] Sequence group chat-55b8bdce4ae14eb8869839561fac50f9 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=1",
         Symptom::Preemption),
    ] {
        assert_eq!(recognise(text), Ok(want), "{url}");
    }
    // vllm-project/vllm#31273: an OOM whose excerpt names no phase is not guessed.
    let bare = "(EngineCore_DP0 pid=556790) ERROR 12-24 08:50:35 [core.py:866]     output = torch.empty(shape, device=input.device, dtype=out_dtype)\n\n(EngineCore_DP0 pid=556790) ERROR 12-24 08:50:35 [core.py:866] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 80.00 MiB.";
    assert!(recognise(bare).is_err());
}
