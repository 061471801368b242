//! The waiting queue: job indices in FCFS order, with cheap removal at the head.
//!
//! Most starts are at the head of the queue (the scan starts jobs in order), so removing a
//! prefix just advances `head`; the dead prefix is reclaimed once it outgrows the live part.

/// Waiting jobs (indices into the job table), FCFS order.
#[derive(Debug, Clone, Default)]
pub struct WaitQueue {
    items: Vec<u32>,
    head: usize,
}

impl WaitQueue {
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        &self.items[self.head..]
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.items.len() - self.head
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn push(&mut self, job: u32) {
        self.items.push(job);
    }

    /// Puts `jobs` at the front, in the given order.
    pub fn push_front(&mut self, jobs: &[u32]) {
        if jobs.len() <= self.head {
            self.head -= jobs.len();
            self.items[self.head..self.head + jobs.len()].copy_from_slice(jobs);
        } else {
            self.items
                .splice(self.head..self.head, jobs.iter().copied());
        }
    }

    /// Removes the jobs at `positions` (sorted, distinct, relative to the live queue), keeping
    /// the order of the rest.
    pub fn remove_sorted(&mut self, positions: &[u32]) {
        let prefix = positions
            .iter()
            .enumerate()
            .take_while(|&(i, &p)| p as usize == i)
            .count();
        self.head += prefix;
        let rest = &positions[prefix..];
        if let Some(&first) = rest.first() {
            let base = self.head - prefix;
            let start = base + first as usize;
            let mut write = start;
            let mut next = rest.iter().map(|&p| base + p as usize).peekable();
            for read in start..self.items.len() {
                if next.peek() == Some(&read) {
                    next.next();
                } else {
                    self.items[write] = self.items[read];
                    write += 1;
                }
            }
            self.items.truncate(write);
        }
        if self.head > 64 && self.head * 2 > self.items.len() {
            self.items.drain(..self.head);
            self.head = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WaitQueue;

    fn queue(items: &[u32]) -> WaitQueue {
        let mut q = WaitQueue::default();
        items.iter().for_each(|&j| q.push(j));
        q
    }

    #[test]
    fn removes_prefixes_and_scattered_positions() {
        let mut q = queue(&[10, 11, 12, 13, 14, 15]);
        q.remove_sorted(&[0, 1, 3, 5]);
        assert_eq!(q.as_slice(), &[12, 14]);
        q.remove_sorted(&[1]);
        assert_eq!(q.as_slice(), &[12]);
        q.push_front(&[7, 8]);
        assert_eq!(q.as_slice(), &[7, 8, 12]);
        q.remove_sorted(&[0]);
        q.push_front(&[1, 2, 3]);
        assert_eq!(q.as_slice(), &[1, 2, 3, 8, 12]);
        assert_eq!(q.len(), 5);
    }

    #[test]
    fn reclaims_the_dead_prefix() {
        let mut q = queue(&(0..200).collect::<Vec<_>>());
        for _ in 0..150 {
            q.remove_sorted(&[0]);
        }
        assert_eq!(q.as_slice(), &(150..200).collect::<Vec<_>>()[..]);
        assert!(q.items.len() < 200);
    }
}
