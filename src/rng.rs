//! xoshiro256++ (Blackman & Vigna), the generator of `rand_xoshiro::Xoshiro256PlusPlus`,
//! written out so that the core stays free of dependencies that need `std` and its state
//! can be saved with a reservoir. A test checks it against `rand_xoshiro` draw for draw.

/// A xoshiro256++ generator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Xoshiro256PlusPlus {
    s: [u64; 4],
}

impl Xoshiro256PlusPlus {
    /// Seeds from one `u64` through SplitMix64, as `rand_core`'s `seed_from_u64` does for
    /// this generator.
    pub fn seed_from_u64(mut seed: u64) -> Self {
        let mut next = || {
            seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut s = [next(), next(), next(), next()];
        if s == [0; 4] {
            s[0] = 1; // the all-zero state is the one state the generator cannot leave
        }
        Xoshiro256PlusPlus { s }
    }

    /// The raw state, to save it.
    pub fn state(&self) -> [u64; 4] {
        self.s
    }

    /// Restores a saved state; the all-zero state is refused (`None`).
    pub fn from_state(s: [u64; 4]) -> Option<Self> {
        (s != [0; 4]).then_some(Xoshiro256PlusPlus { s })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform integer in 0..bound (bound ≥ 1), without bias (Lemire's method).
    pub fn below(&mut self, bound: u64) -> u64 {
        debug_assert!(bound > 0);
        let mut product = u128::from(self.next_u64()) * u128::from(bound);
        if (product as u64) < bound {
            let threshold = bound.wrapping_neg() % bound;
            while (product as u64) < threshold {
                product = u128::from(self.next_u64()) * u128::from(bound);
            }
        }
        (product >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "std")]
    #[test]
    fn matches_rand_xoshiro_draw_for_draw() {
        use rand_xoshiro::rand_core::{RngCore, SeedableRng};
        for seed in [0u64, 1, 42, u64::MAX] {
            let mut ours = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut theirs = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
            for _ in 0..1000 {
                assert_eq!(ours.next_u64(), theirs.next_u64());
            }
        }
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[rng.below(6) as usize] += 1;
        }
        // Each cell expects 10 000 with sd ≈ 91: 6 sd either way.
        assert!(
            counts.iter().all(|&c| (9_450..=10_550).contains(&c)),
            "{counts:?}"
        );
        assert_eq!(rng.below(1), 0);
    }
}
