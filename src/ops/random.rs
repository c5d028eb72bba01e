//! Counter-based random numbers: element `i` of a tensor drawn with seed `s` depends only on
//! `(s, i)`, so every device (and any thread split) produces the same values.

/// SplitMix64 finalizer over the counter.
#[inline(always)]
pub fn hash64(seed: u64, counter: u64) -> u64 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(counter.wrapping_mul(0xD1B5_4A32_D192_ED03))
        .wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Uniform in (0, 1], from the top 24 bits (exact in f32).
#[inline(always)]
pub fn uniform_f32(seed: u64, counter: u64) -> f32 {
    ((hash64(seed, counter) >> 40) as f32 + 1.0) * (1.0 / 16_777_216.0)
}

/// Standard normal sample `i` (Box–Muller on two uniforms of counters 2i and 2i+1).
#[inline(always)]
pub fn normal_f32(seed: u64, i: u64) -> f32 {
    let u1 = uniform_f32(seed, 2 * i);
    let u2 = uniform_f32(seed, 2 * i + 1);
    (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
}

/// Integer sample `i` uniform in `[low, high)` (`high > low`).
#[inline(always)]
pub fn randint(seed: u64, i: u64, low: i64, high: i64) -> i64 {
    let range = (high as i128 - low as i128) as u128;
    let r = hash64(seed, i) as u128;
    (low as i128 + ((r * range) >> 64) as i128) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn normal_moments() {
        let n = 100_000u64;
        let xs: Vec<f64> = (0..n).map(|i| normal_f32(7, i) as f64).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.02, "mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "var {var}");
    }
    #[test]
    fn randint_range() {
        for i in 0..10_000 {
            let v = randint(3, i, -5, 7);
            assert!((-5..7).contains(&v));
        }
        assert_ne!(randint(1, 0, 0, 1 << 40), randint(2, 0, 0, 1 << 40));
    }
}
