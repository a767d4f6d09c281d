//! Which vLLM release's rules apply. The accounting changed between releases (the default
//! utilization, whether CUDA-graph memory is inside the budget, the token figure, the sliding
//! window bound, the null block); each rule asks `at_least` instead of matching version numbers.
//!
//! Headroom models 0.10.2, 0.11.0, 0.11.2, 0.12.0, 0.13.0 and 0.14 to 0.33. Within 0.11 the
//! patch releases differ materially (0.11.2 shrinks each worker's KV tensors to the minimum
//! block count and logs once; 0.11.0 does not), so a version carries the patch whose rules
//! apply: `patch` is 0 for a series Headroom plans as one (0.12, 0.13, 0.14 onward, where a
//! patch such as 0.19.1 is planned under 0.19's rules), and the patch read for 0.10 and 0.11.

use std::fmt;

/// A vLLM release: `major.minor`, and the patch whose rules apply where patches differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VllmVersion {
    pub major: u32,
    pub minor: u32,
    /// The patch release whose rules apply: 2 for 0.10.2 and 0.11.2, 0 for 0.11.0, and 0 for
    /// every other series (Headroom plans each of them under one set of rules).
    pub patch: u32,
}

/// What differs in a release Headroom refuses, in words: the reason `parse` gives.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn refused(major: u32, minor: u32, patch: Option<u32>) -> Option<String> {
    let read = "Headroom models 0.10.2, 0.11.0, 0.11.2, 0.12.0, 0.13.0 and 0.14 to 0.33";
    Some(match (major, minor, patch) {
        (0, 0..=7, _) => format!("releases before 0.8 ran the V0 engine only, whose memory accounting Headroom does not model ({read})"),
        (0, 8, _) => format!("vLLM 0.8 (0.8.5 read) is not modelled: its V1 worker makes no free-memory check at start, sizes the KV budget as total x utilization minus the torch peak and all non-torch memory on the device (other processes' included, int(T*u - torch_peak - non_torch)), turns sliding windows into full attention, divides tokens by max-model-len for the concurrency, and falls back to the V0 engine for pooling models, float32, PP without Ray and compute capability below 8.0 ({read})"),
        (0, 9, _) => format!("vLLM 0.9 (0.9.2 read) is not modelled: its memory snapshot is taken before NCCL starts (NCCL counts against the budget), it has no kv-cache-memory-bytes, it logs every worker's KV figures before the minimum, and it falls back to the V0 engine (compute capability below 8.0, Mamba, unsupported fp8 KV caches, some speculative methods) ({read})"),
        (0, 10, Some(0 | 1)) => format!("vLLM 0.10.{} was not read: only 0.10.2 of the 0.10 series was, the first with kv-cache-memory-bytes; give 0.10.2 ({read})", patch.unwrap_or(0)),
        (0, 11, Some(1)) => format!("vLLM 0.11.1 was not read: 0.11.0 keeps each worker's whole KV tensors and 0.11.2 shrinks them to the minimum block count, and which 0.11.1 does is not known; give 0.11.0 or 0.11.2 ({read})"),
        (0, 10 | 11, Some(p)) if p > 2 => format!("vLLM 0.{minor}.{p} was not read: give 0.{minor}.2 ({read})"),
        (0, 12 | 13, Some(p)) if p > 0 => format!("vLLM 0.{minor}.{p} was not read: only 0.{minor}.0 was ({read})"),
        _ => return None,
    })
}

impl VllmVersion {
    /// The release the spec was read from.
    pub const CURRENT: VllmVersion = VllmVersion::new(0, 33);
    /// The oldest release whose rules Headroom reproduces.
    pub const OLDEST: VllmVersion = VllmVersion {
        major: 0,
        minor: 10,
        patch: 2,
    };

    /// `major.minor`, under the rules of the series' one modelled patch (0.10 and 0.11 aside:
    /// use [`VllmVersion::parse`] for those).
    pub const fn new(major: u32, minor: u32) -> VllmVersion {
        VllmVersion {
            major,
            minor,
            patch: 0,
        }
    }

    /// Every release Headroom models, newest first, as `parse` reads them back: the page's
    /// release choice.
    pub fn releases() -> impl Iterator<Item = VllmVersion> {
        (14..=Self::CURRENT.minor)
            .rev()
            .map(|m| VllmVersion::new(0, m))
            .chain([
                VllmVersion::new(0, 13),
                VllmVersion::new(0, 12),
                VllmVersion {
                    major: 0,
                    minor: 11,
                    patch: 2,
                },
                VllmVersion::new(0, 11),
                Self::OLDEST,
            ])
    }

    /// Whether Headroom models this release (what `parse` accepts).
    pub fn is_modelled(self) -> bool {
        self >= Self::OLDEST
            && self <= Self::CURRENT
            && match self.minor {
                10 => self.patch == 2,
                11 => matches!(self.patch, 0 | 2),
                _ => self.patch == 0,
            }
    }

    /// True when this release is `major.minor` or newer.
    pub fn at_least(self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }

    /// True when this release is `major.minor.patch` or newer (for rules that changed within
    /// the 0.11 series).
    pub fn at_least_patch(self, major: u32, minor: u32, patch: u32) -> bool {
        (self.major, self.minor, self.patch) >= (major, minor, patch)
    }

    /// Reads `0.33`, `0.19.1`, `v0.20.0`, `0.11.0`; refuses releases outside what Headroom
    /// models, naming what differs. `0.10` is read as 0.10.2 and `0.11` as 0.11.2, the series'
    /// last patches (and the ones read).
    ///
    /// ```
    /// use headroom::calc::version::VllmVersion;
    /// assert_eq!(VllmVersion::parse("0.19.1").unwrap(), VllmVersion::new(0, 19));
    /// assert_eq!(VllmVersion::parse("0.11").unwrap().to_string(), "0.11.2");
    /// assert_eq!(VllmVersion::parse("0.11.0").unwrap().to_string(), "0.11.0");
    /// assert!(VllmVersion::parse("0.9").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<VllmVersion, String> {
        let t = s.trim().trim_start_matches('v');
        let mut parts = t.split('.');
        let major = parts.next().and_then(|p| p.parse::<u32>().ok());
        let minor = parts.next().and_then(|p| p.parse::<u32>().ok());
        let (Some(major), Some(minor)) = (major, minor) else {
            return Err(format!(
                "vllm-version {} is not a version like 0.33 or 0.19.1",
                crate::calc::quoted(s)
            ));
        };
        // The patch's leading digits ("0.11.2rc1" is 0.11.2's series).
        let patch = parts.next().and_then(|p| {
            let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        });
        if major == 0 && minor <= 13 {
            if let Some(why) = refused(major, minor, patch) {
                return Err(format!("vllm-version {s}: {why}"));
            }
        }
        let patch = match (major, minor) {
            (0, 10) => 2,
            (0, 11) => patch.unwrap_or(2),
            _ => 0,
        };
        let v = VllmVersion {
            major,
            minor,
            patch,
        };
        if v < Self::OLDEST {
            return Err(format!(
                "vllm-version {s}: releases before 0.10.2 used a different memory check and are not modelled"
            ));
        }
        if v > Self::CURRENT {
            return Err(format!(
                "vllm-version {s}: newer than 0.33, the newest release whose source Headroom follows"
            ));
        }
        Ok(v)
    }

    /// `--gpu-memory-utilization`'s default: 0.92 since 0.20.0, 0.90 before.
    pub fn default_utilization(self) -> f64 {
        if self.at_least(0, 20) {
            0.92
        } else {
            0.90
        }
    }

    /// CUDA-graph memory is estimated and subtracted inside the budget by default since 0.20.0
    /// (`VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1`); before, it lies outside the budget.
    pub fn graphs_inside_budget(self) -> bool {
        self.at_least(0, 20)
    }

    /// The requested memory is `math.ceil(total x utilization)` since 0.14.0
    /// (`vllm/v1/worker/utils.py::request_memory`); before, `Worker.init_device` keeps the float
    /// `total x utilization`, and `determine_available_memory` returns
    /// `int(total x utilization - non_kv)`.
    pub fn requested_is_ceil(self) -> bool {
        self.at_least(0, 14)
    }

    /// NCCL and the distributed environment start before the memory snapshot since 0.11.0
    /// (`Worker.init_device`); in 0.10.2 after it, so their memory is non-torch memory counted
    /// against the budget.
    pub fn nccl_before_snapshot(self) -> bool {
        self.at_least(0, 11)
    }

    /// Each worker's KV tensors are shrunk to the minimum block count over the workers since
    /// 0.11.2 (`get_kv_cache_configs`, "Shrink tensor size proportionally"); in 0.11.0 and
    /// 0.10.2 every worker allocates its own block count and uses the first `min` blocks.
    pub fn shrinks_kv_tensors(self) -> bool {
        self.at_least_patch(0, 11, 2)
    }

    /// The workers' "Available KV cache memory" and "Model loading took" lines are
    /// `info_once(scope="local")` since 0.11.2; in 0.11.0 and 0.10.2 plain `info`, one a worker.
    pub fn worker_lines_once(self) -> bool {
        self.at_least_patch(0, 11, 2)
    }
}

impl Default for VllmVersion {
    fn default() -> Self {
        Self::CURRENT
    }
}

impl fmt::Display for VllmVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.major == 0 && matches!(self.minor, 10 | 11) {
            write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
        } else {
            write!(f, "{}.{}", self.major, self.minor)
        }
    }
}
