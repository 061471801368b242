//! Fair-share over the association tree, as Slurm 22.05's `priority/multifactor` computes it:
//! decayed usage charged up the tree, then each user association's factor by Fair Tree
//! (`fair_tree.c`) or by the classic formula (`priority_multifactor.c`).

use crate::sched::slurm::config::FairShare;
use crate::sched::slurm::setup::Association;

/// Slurm's `NO_VAL` as a level fair-share (an account with `Fairshare=parent`, and the value the
/// walk starts from).
const NO_VAL: f64 = 4_294_967_294.0;

/// The tree, its usage and its factors.
#[derive(Debug, Clone)]
pub struct Shares {
    parent: Vec<Option<u32>>,
    /// `None`: `Fairshare=parent`.
    shares: Vec<Option<u32>>,
    user: Vec<bool>,
    /// Each association's children, in the order of the last walk (by index at first).
    children: Vec<Vec<u32>>,
    /// Per association, the shares of it and its siblings (`level_shares`): a `parent` child
    /// counts its own children's.
    level_shares: Vec<u32>,
    user_count: u32,
    /// Decayed usage (CPU-seconds) of each association, its children's included.
    usage: Vec<f64>,
    /// Each user association's fair-share factor, in [0, 1].
    factor: Vec<f64>,
    /// Scratch: each association's level fair-share, and each one's effective usage.
    level_fs: Vec<f64>,
    efctv: Vec<f64>,
}

/// One level of Fair Tree's walk: the children of `parent` in order, how far the walk is, and
/// the level fair-share of the sibling last met (`NO_VAL` before the first).
struct Level {
    parent: u32,
    siblings: Vec<u32>,
    next: usize,
    /// The account whose children these are tied with the sibling before it.
    account_tied: bool,
    previous: f64,
}

impl Shares {
    pub fn new(associations: &[Association]) -> Self {
        let n = associations.len();
        let mut children = vec![Vec::new(); n];
        for (i, a) in associations.iter().enumerate() {
            if let Some(p) = a.parent {
                children[p as usize].push(i as u32);
            }
        }
        let shares: Vec<Option<u32>> = associations.iter().map(|a| a.shares).collect();
        // Each account's children's shares summed, a `parent` child counting its own
        // children's: from the last association up, every child (listed after its parent) is
        // complete before it is added (no recursion: a tree may be any depth).
        let mut sums = vec![0u32; n];
        for c in (1..n).rev() {
            if let Some(p) = associations[c].parent {
                let own = shares[c].unwrap_or(sums[c]);
                sums[p as usize] = sums[p as usize].saturating_add(own);
            }
        }
        let mut level_shares = vec![0; n];
        for (p, kids) in children.iter().enumerate() {
            for &c in kids {
                level_shares[c as usize] = sums[p];
            }
        }
        Shares {
            parent: associations.iter().map(|a| a.parent).collect(),
            shares,
            user: associations.iter().map(|a| a.user).collect(),
            children,
            level_shares,
            user_count: associations.iter().filter(|a| a.user).count() as u32,
            usage: vec![0.0; n],
            factor: vec![0.0; n],
            level_fs: vec![0.0; n],
            efctv: vec![0.0; n],
        }
    }

    /// Every association's usage times `decay` (`_apply_decay`).
    pub fn decay(&mut self, decay: f64) {
        if decay != 1.0 {
            self.usage.iter_mut().for_each(|u| *u *= decay);
        }
    }

    /// Charges `amount` to association `assoc` and every association above it.
    pub fn charge(&mut self, assoc: u32, amount: f64) {
        let mut a = Some(assoc);
        while let Some(i) = a {
            self.usage[i as usize] += amount;
            a = self.parent[i as usize];
        }
    }

    /// The fair-share factor of user association `assoc`, as last computed.
    #[inline]
    pub fn factor(&self, assoc: u32) -> f64 {
        self.factor[assoc as usize]
    }

    /// The decayed usage of association `assoc`.
    pub fn usage(&self, assoc: u32) -> f64 {
        self.usage[assoc as usize]
    }

    /// Recomputes every user association's factor from the usage as it stands.
    pub fn recompute(&mut self, how: FairShare, dampening: f64) {
        match how {
            FairShare::FairTree => self.fair_tree(),
            FairShare::Classic => self.classic(dampening),
        }
    }

    /// Fair Tree's walk (`_calc_tree_fs`), depth first from the root: at each level the
    /// siblings by level fair-share, highest first (users before accounts on a tie, then in
    /// the tree's order: glibc's qsort is a stable merge sort), users ranked as met, accounts
    /// walked into. Slurm recurses; here the levels being walked are a stack, so that a tree of
    /// any depth is walked in the same order.
    fn fair_tree(&mut self) {
        let (mut rank, mut rnt) = (self.user_count, self.user_count);
        let mut walk = vec![self.open_level(0, false)];
        while let Some(level) = walk.last_mut() {
            let Some(&a) = level.siblings.get(level.next) else {
                let done = walk.pop().expect("a level is open");
                self.children[done.parent as usize] = done.siblings;
                continue;
            };
            let fs = self.level_fs[a as usize];
            let tied = if level.next == 0 && level.account_tied {
                true
            } else {
                level.previous == fs
            };
            level.next += 1;
            level.previous = fs;
            if self.user[a as usize] {
                if !tied {
                    rank = rnt;
                }
                self.factor[a as usize] = f64::from(rank) / f64::from(self.user_count);
                rnt = rnt.saturating_sub(1);
            } else {
                // Slurm 22.05 merges tied accounts only when a user follows them with the same
                // level (`_count_tied_accounts`), which the order above never gives: each
                // account is walked alone, its first user tied to the last one ranked.
                let below = self.open_level(a, tied);
                walk.push(below);
            }
        }
    }

    /// The children of `parent` in Fair Tree's order, their level fair-shares computed.
    fn open_level(&mut self, parent: u32, account_tied: bool) -> Level {
        // The siblings in their order of the last walk: nearly sorted already, which the
        // (adaptive) sort takes in about one pass.
        let mut siblings = std::mem::take(&mut self.children[parent as usize]);
        for &a in &siblings {
            self.level_fs[a as usize] = self.level_fair_share(a);
        }
        let (level_fs, user) = (&self.level_fs, &self.user);
        siblings.sort_by(|&x, &y| {
            let (lx, ly) = (level_fs[x as usize], level_fs[y as usize]);
            ly.partial_cmp(&lx)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(user[y as usize].cmp(&user[x as usize]))
                .then(x.cmp(&y))
        });
        Level {
            parent,
            siblings,
            next: 0,
            account_tied,
            previous: NO_VAL,
        }
    }

    /// Level fair-share `S / U` of association `a` among its siblings (`_calc_assoc_fs`).
    fn level_fair_share(&self, a: u32) -> f64 {
        let i = a as usize;
        let Some(shares) = self.shares[i] else {
            return if self.user[i] { f64::INFINITY } else { NO_VAL };
        };
        let parent = self.parent[i].map_or(0, |p| p as usize);
        let used = if self.usage[parent] == 0.0 {
            0.0
        } else {
            self.usage[i] / self.usage[parent]
        };
        let norm = if self.level_shares[i] == 0 {
            0.0
        } else {
            f64::from(shares) / f64::from(self.level_shares[i])
        };
        if norm == 0.0 {
            0.0
        } else {
            norm / used // (no usage: infinite)
        }
    }

    /// The classic factor `2^(-(U_effective / S_norm) / dampening)` of every user association
    /// (`_set_usage_efctv`, `_normalize_assoc_shares_traditional`, `priority_p_calc_fs_factor`).
    fn classic(&mut self, dampening: f64) {
        let root = self.usage[0];
        for i in 1..self.parent.len() {
            let parent = self.parent[i].unwrap_or(0) as usize;
            let norm = if root == 0.0 {
                0.0
            } else {
                (self.usage[i] / root).min(1.0)
            };
            self.efctv[i] = match self.shares[i] {
                _ if parent == 0 => norm,
                None => self.efctv[parent],
                Some(_) if self.level_shares[i] == 0 => self.efctv[parent],
                Some(s) => {
                    norm + (self.efctv[parent] - norm)
                        * (f64::from(s) / f64::from(self.level_shares[i]))
                }
            };
            if !self.user[i] {
                continue;
            }
            let shares_norm = self.traditional_shares_norm(i);
            self.factor[i] = if shares_norm <= 0.0 {
                0.0
            } else {
                2f64.powf(-((self.efctv[i] / shares_norm) / dampening))
            };
        }
    }

    /// The product of `shares / level_shares` from `i` up to the root's children.
    fn traditional_shares_norm(&self, mut i: usize) -> f64 {
        if self.shares[i].is_none() {
            i = self.parent[i].unwrap_or(0) as usize;
        }
        let mut norm = 1.0;
        while let Some(p) = self.parent[i] {
            if let Some(s) = self.shares[i] {
                if self.level_shares[i] == 0 {
                    return 0.0;
                }
                norm *= f64::from(s) / f64::from(self.level_shares[i]);
            }
            i = p as usize;
        }
        norm
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// root -> A (shares 2) -> a1, a2 (1 each); root -> B (1) -> b1 (1): associations 0 to 5.
    fn tree(a_shares: u32) -> Shares {
        let a = |parent: Option<u32>, shares: u32, user: bool| Association {
            parent,
            shares: Some(shares),
            user,
        };
        Shares::new(&[
            a(None, 1, false),
            a(Some(0), a_shares, false),
            a(Some(0), 1, false),
            a(Some(1), 1, true),
            a(Some(1), 1, true),
            a(Some(2), 1, true),
        ])
    }

    #[test]
    fn fair_tree_ranks_users_depth_first_by_level_fair_share() {
        let mut s = tree(2);
        s.charge(3, 100.0); // a1
        s.charge(5, 100.0); // b1
        s.recompute(FairShare::FairTree, 1.0);
        // A: (2/3) / (100/200) = 4/3 before B: (1/3) / (1/2) = 2/3; in A, a2 (no usage:
        // infinite) before a1 (0.5 / 1): ranks 3, 2, 1 of 3
        assert_eq!(s.factor(4), 1.0);
        assert_eq!(s.factor(3), 2.0 / 3.0);
        assert_eq!(s.factor(5), 1.0 / 3.0);
    }

    #[test]
    fn fair_tree_gives_the_first_user_of_a_tied_account_the_rank_before_it() {
        // A and B tie (1/2 over 1/2 each): Slurm 22.05 walks them one after the other and
        // b1, the first user of the tied B, shares a1's rank (a2 has none: ranked after)
        let mut s = tree(1);
        s.charge(3, 100.0);
        s.charge(5, 100.0);
        s.recompute(FairShare::FairTree, 1.0);
        assert_eq!(s.factor(4), 1.0); // a2: infinite level fair-share, first
        assert_eq!(s.factor(3), 2.0 / 3.0);
        assert_eq!(s.factor(5), 2.0 / 3.0);
    }

    #[test]
    fn classic_fair_share_is_two_to_the_minus_effective_usage_over_shares() {
        let mut s = tree(2);
        s.charge(3, 100.0);
        s.charge(5, 100.0);
        s.recompute(FairShare::Classic, 1.0);
        // a1: U_eff = 0.5 + (0.5 - 0.5) / 2 = 0.5, S = 1/2 * 2/3: 2^-1.5
        assert!((s.factor(3) - 2f64.powf(-1.5)).abs() < 1e-12);
        // a2: U_eff = 0 + (0.5 - 0) / 2 = 0.25: 2^-0.75
        assert!((s.factor(4) - 2f64.powf(-0.75)).abs() < 1e-12);
        // b1: U_eff = 0.5, S = 1 * 1/3: 2^-1.5
        assert!((s.factor(5) - 2f64.powf(-1.5)).abs() < 1e-12);
    }

    #[test]
    fn an_account_without_shares_ranks_after_one_holding_them_all() {
        // root -> A (shares 1) -> a1; root -> B (shares 0) -> b1; both used the same. A:
        // (1/1) / (1/2) = 2; B: 0 shares, level fair-share 0: not tied with A, so b1 ranks
        // after a1: factors 2/2 and 1/2
        let a = |parent: u32, shares: u32, user: bool| Association {
            parent: Some(parent),
            shares: Some(shares),
            user,
        };
        let root = Association {
            parent: None,
            shares: Some(1),
            user: false,
        };
        let mut s = Shares::new(&[
            root,
            a(0, 1, false),
            a(0, 0, false),
            a(1, 1, true),
            a(2, 1, true),
        ]);
        s.charge(3, 100.0);
        s.charge(4, 100.0);
        s.recompute(FairShare::FairTree, 1.0);
        assert_eq!((s.factor(3), s.factor(4)), (1.0, 0.5));
    }

    /// root -> a chain of `depth` accounts (shares 1) -> users u1, u2 (1 each); root -> B (1)
    /// -> v (1). Returns the tree, u1, u2 and v.
    fn deep_chain(depth: u32) -> (Shares, u32, u32, u32) {
        let a = |parent: u32, user: bool| Association {
            parent: Some(parent),
            shares: Some(1),
            user,
        };
        let mut tree = vec![Association {
            parent: None,
            shares: Some(1),
            user: false,
        }];
        tree.extend((0..depth).map(|k| a(k, false)));
        let bottom = depth; // the chain's last account
        tree.extend([
            a(bottom, true),
            a(bottom, true),
            a(0, false),
            a(depth + 3, true),
        ]);
        (Shares::new(&tree), depth + 1, depth + 2, depth + 4)
    }

    #[test]
    fn a_tree_100000_accounts_deep_is_walked_without_recursion() {
        let (mut s, u1, u2, v) = deep_chain(100_000);
        s.charge(u1, 100.0);
        s.charge(v, 300.0);
        s.recompute(FairShare::FairTree, 1.0);
        // root's children: the chain (1/2) / (100/400) = 2 before B (1/2) / (300/400) = 2/3;
        // down the chain (1 / 1 at each level) to u2 (no usage: infinite) then u1 (1/2 / 1):
        // ranks 3, 2, then v 1, of 3 users
        assert_eq!(s.factor(u2), 1.0);
        assert_eq!(s.factor(u1), 2.0 / 3.0);
        assert_eq!(s.factor(v), 1.0 / 3.0);
        s.recompute(FairShare::Classic, 1.0);
        // u1: U_eff = 1/4 at every level of the chain, S = 1/2 (among u1, u2) * 1 * ... * 1/2
        // (the chain's top beside B) = 1/4: 2^-1; u2: U_eff = 0 + (1/4 - 0) / 2 = 1/8: 2^-0.5;
        // v: U_eff = 3/4, S = 1 * 1/2: 2^-1.5
        assert!((s.factor(u1) - 0.5).abs() < 1e-12);
        assert!((s.factor(u2) - 2f64.powf(-0.5)).abs() < 1e-12);
        assert!((s.factor(v) - 2f64.powf(-1.5)).abs() < 1e-12);
    }

    #[test]
    fn the_dampening_factor_divides_the_classic_exponent() {
        // as above with FairShareDampeningFactor 2: a1 2^-(1.5 / 2), a2 2^-(0.75 / 2)
        let mut s = tree(2);
        s.charge(3, 100.0);
        s.charge(5, 100.0);
        s.recompute(FairShare::Classic, 2.0);
        assert!((s.factor(3) - 2f64.powf(-0.75)).abs() < 1e-12);
        assert!((s.factor(4) - 2f64.powf(-0.375)).abs() < 1e-12);
    }

    #[test]
    fn usage_decays_and_charges_climb_to_the_root() {
        let mut s = tree(2);
        s.charge(3, 100.0);
        s.decay(0.5);
        s.charge(4, 10.0);
        assert_eq!(s.usage(3), 50.0);
        assert_eq!(s.usage(1), 60.0);
        assert_eq!(s.usage(0), 60.0);
        assert_eq!(s.usage(2), 0.0);
    }
}
