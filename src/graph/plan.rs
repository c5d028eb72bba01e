//! The memory plan: every intermediate value (made by a node, not a graph output, not
//! written into a real tensor) gets an offset in one arena, by liveness over the schedule.
//! A linear scan in node order allocates each node's outputs best-fit from the free ranges
//! and frees each value after its last reader; an elementwise node whose input dies there
//! and has the output's size writes in place into it (the op allows exactly that alias).
//! A reshape's output is a view of its input: it shares the input's range, which lives
//! until the last reader of either.

use super::{Graph, NodeOp, Source, ValueId};
use crate::ops::table::Alias;

/// Arena offsets are multiples of this (vector loads, the widest dtype).
pub const ALIGN: usize = 256;

/// Where each value lives.
#[derive(Clone, Debug, Default)]
pub struct MemoryPlan {
    /// Per value: its offset in the arena, if it is planned there.
    pub offsets: Vec<Option<usize>>,
    /// The arena's size: the planned peak.
    pub arena_bytes: usize,
    /// The sum of all planned intermediates' sizes (what running without a plan holds if
    /// nothing is freed).
    pub intermediate_bytes: usize,
    /// Outputs written in place into an input.
    pub in_place: usize,
}

fn round_up(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

/// Free ranges of the arena, kept sorted and merged.
#[derive(Default)]
struct FreeList {
    ranges: Vec<(usize, usize)>,
    end: usize,
}

impl FreeList {
    fn alloc(&mut self, size: usize) -> usize {
        // best fit among the free ranges
        let best = self
            .ranges
            .iter()
            .enumerate()
            .filter(|(_, r)| r.1 >= size)
            .min_by_key(|(_, r)| r.1)
            .map(|(i, _)| i);
        if let Some(i) = best {
            let (off, len) = self.ranges[i];
            if len == size {
                self.ranges.remove(i);
            } else {
                self.ranges[i] = (off + size, len - size);
            }
            return off;
        }
        // grow: extend a free range that ends at the top, or the top itself
        if let Some(last) = self.ranges.last().copied()
            && last.0 + last.1 == self.end
        {
            self.ranges.pop();
            self.end = last.0 + size;
            return last.0;
        }
        let off = self.end;
        self.end += size;
        off
    }

    fn free(&mut self, off: usize, size: usize) {
        let i = self.ranges.partition_point(|r| r.0 < off);
        self.ranges.insert(i, (off, size));
        // merge with neighbours
        if i + 1 < self.ranges.len() && self.ranges[i].0 + self.ranges[i].1 == self.ranges[i + 1].0
        {
            self.ranges[i].1 += self.ranges[i + 1].1;
            self.ranges.remove(i + 1);
        }
        if i > 0 && self.ranges[i - 1].0 + self.ranges[i - 1].1 == self.ranges[i].0 {
            self.ranges[i - 1].1 += self.ranges[i].1;
            self.ranges.remove(i);
        }
    }
}

/// Plans `g`'s intermediates.
pub fn plan(g: &Graph) -> MemoryPlan {
    let nv = g.values.len();
    let outputs: std::collections::HashSet<ValueId> = g.outputs.iter().copied().collect();
    // Which values are planned; reshape outputs alias their input's root.
    let mut root: Vec<ValueId> = (0..nv).collect();
    let mut planned = vec![false; nv];
    for n in &g.nodes {
        for (k, o) in n.outputs.iter().enumerate() {
            let Some(o) = *o else { continue };
            if n.into[k].is_some() || outputs.contains(&o) {
                continue;
            }
            if let NodeOp::Reshape(_) = n.op {
                if let Some(x) = n.inputs[0] {
                    root[o] = root[x];
                }
                continue;
            }
            planned[o] = true;
        }
    }
    // A graph output that is a reshape of an intermediate keeps that intermediate out of
    // the arena (the output must outlive the run).
    for &o in &outputs {
        let r = root[o];
        if r != o {
            planned[r] = false;
        }
    }
    // Last reader of each root (through any view).
    let mut last = vec![0usize; nv];
    for (i, n) in g.nodes.iter().enumerate() {
        for v in n.inputs.iter().flatten() {
            last[root[*v]] = i;
        }
    }
    let mut offsets = vec![None; nv];
    let mut fl = FreeList::default();
    let mut p = MemoryPlan::default();
    for (i, n) in g.nodes.iter().enumerate() {
        let exact = match &n.op {
            NodeOp::Op(op) => op.kind().def().alias == Alias::Exact,
            NodeOp::Fused { .. } => true,
            _ => false,
        };
        // inputs that die here
        let dying: Vec<ValueId> = n
            .inputs
            .iter()
            .flatten()
            .map(|v| root[*v])
            .filter(|r| planned[*r] && last[*r] == i && offsets[*r].is_some())
            .collect();
        let mut taken = vec![];
        for o in n.outputs.iter().flatten() {
            if !planned[*o] {
                continue;
            }
            let size = round_up(g.values[*o].nbytes().max(1));
            p.intermediate_bytes += g.values[*o].nbytes();
            // in place into a dying input of the same size and dtype, when the op allows it
            let reuse = exact
                .then(|| {
                    dying.iter().copied().find(|d| {
                        !taken.contains(d)
                            && g.values[*d].shape == g.values[*o].shape
                            && g.values[*d].dtype == g.values[*o].dtype
                            && n.inputs
                                .iter()
                                .flatten()
                                .filter(|v| root[**v] == *d)
                                .count()
                                == 1
                    })
                })
                .flatten();
            match reuse {
                Some(d) => {
                    offsets[*o] = offsets[d];
                    taken.push(d);
                    p.in_place += 1;
                }
                None => offsets[*o] = Some(fl.alloc(size)),
            }
        }
        for d in dying {
            if !taken.contains(&d) {
                let size = round_up(g.values[d].nbytes().max(1));
                fl.free(offsets[d].unwrap(), size);
            }
        }
        // outputs nothing reads are freed at once
        for o in n.outputs.iter().flatten() {
            if planned[*o] && !taken_reads(g, &root, *o) {
                let size = round_up(g.values[*o].nbytes().max(1));
                if let Some(off) = offsets[*o] {
                    fl.free(off, size);
                }
            }
        }
    }
    // Reshape views take their root's offset.
    for v in 0..nv {
        if root[v] != v && planned[root[v]] {
            offsets[v] = offsets[root[v]];
        }
    }
    for (v, val) in g.values.iter().enumerate() {
        if matches!(val.source, Source::Input(_) | Source::Param(_)) {
            offsets[v] = None;
        }
    }
    p.offsets = offsets;
    p.arena_bytes = fl.end;
    p
}

fn taken_reads(g: &Graph, root: &[ValueId], v: ValueId) -> bool {
    g.nodes
        .iter()
        .any(|n| n.inputs.iter().flatten().any(|x| root[*x] == v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_list_best_fit_and_merge() {
        let mut f = FreeList::default();
        let a = f.alloc(256);
        let b = f.alloc(512);
        let c = f.alloc(256);
        assert_eq!((a, b, c), (0, 256, 768));
        f.free(b, 512);
        assert_eq!(f.alloc(256), 256);
        f.free(a, 256);
        f.free(256, 256);
        assert_eq!(f.ranges, vec![(0, 768)]);
        assert_eq!(f.end, 1024);
        f.free(c, 256);
        assert_eq!(f.ranges, vec![(0, 1024)]);
        assert_eq!(f.alloc(2048), 0);
        assert_eq!(f.end, 2048);
    }
}
