//! How vLLM lays a model over the parallel grid: the layers of each pipeline stage.

/// `vllm/distributed/utils.py::get_pp_indices` for every stage: the layer count of each stage.
///
/// The default puts `L // pp` layers on each stage and gives the remainder, one layer each, to
/// the stages before the last (`partitions[-2], partitions[-3], ...`).
///
/// ```
/// use headroom::calc::pp_partition;
/// assert_eq!(pp_partition(43, 3, None).unwrap(), vec![14, 15, 14]);
/// assert_eq!(pp_partition(30, 4, None).unwrap(), vec![7, 8, 8, 7]);
/// ```
pub fn pp_partition(n_layers: u32, pp: u32, explicit: Option<&[u32]>) -> Result<Vec<u32>, String> {
    if pp == 0 {
        return Err("pipeline-parallel-size must be at least 1".into());
    }
    if let Some(parts) = explicit {
        // vLLM's own messages for a bad VLLM_PP_LAYER_PARTITION.
        if parts.len() != pp as usize {
            return Err(format!(
                "len(partitions)={} does not match pp_size={pp}.",
                parts.len()
            ));
        }
        let sum: u64 = parts.iter().map(|p| u64::from(*p)).sum();
        if sum != u64::from(n_layers) {
            return Err(format!(
                "sum(partitions)={sum} does not match num_hidden_layers={n_layers}."
            ));
        }
        return Ok(parts.to_vec());
    }
    let base = n_layers / pp;
    let mut parts = vec![base; pp as usize];
    let remaining = n_layers % pp;
    for i in 2..remaining + 2 {
        let idx = pp as usize - i as usize;
        parts[idx] += 1;
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pp_partitions_match_vllm() {
        assert_eq!(pp_partition(61, 2, None).unwrap(), vec![31, 30]);
        assert_eq!(pp_partition(62, 4, None).unwrap(), vec![15, 16, 16, 15]);
        assert_eq!(pp_partition(31, 4, None).unwrap(), vec![8, 8, 8, 7]);
        assert_eq!(pp_partition(80, 1, None).unwrap(), vec![80]);
        assert!(pp_partition(43, 3, Some(&[15, 15])).is_err());
        assert!(pp_partition(43, 3, Some(&[15, 15, 12])).is_err());
        assert_eq!(
            pp_partition(43, 3, Some(&[15, 16, 12])).unwrap(),
            vec![15, 16, 12]
        );
    }
}
