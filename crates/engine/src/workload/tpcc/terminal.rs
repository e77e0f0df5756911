//! What a terminal draws its transactions' input from (clause 2.x.1): its own random
//! stream, its home warehouses and district, and the run's NURand constants.

use super::random::{self, Constants};
use crate::random::WorkerRng;

pub(super) struct Terminal {
    pub rng: WorkerRng,
    pub constants: Constants,
    /// Warehouses in the database.
    pub warehouses: u32,
    /// The warehouses this terminal works on.
    homes: Vec<u32>,
    /// Which of `homes` the next transaction uses (round robin).
    turn: usize,
    /// The terminal's district for Stock-Level (clause 2.8.1.2).
    pub district: u32,
}

impl Terminal {
    pub fn new(rng: WorkerRng, constants: Constants, warehouses: u32, homes: Vec<u32>, district: u32) -> Self {
        Terminal { rng, constants, warehouses, homes, turn: 0, district }
    }

    pub fn home(&mut self) -> u32 {
        let w = self.homes[self.turn % self.homes.len()];
        self.turn += 1;
        w
    }

    /// A warehouse other than `home` (for remote payments and supply), or `home` when
    /// there is only one.
    pub fn other_warehouse(&mut self, home: u32) -> u32 {
        let n = self.warehouses;
        if n <= 1 {
            return home;
        }
        let w = random::uniform(&mut self.rng, 1, n - 1);
        if w >= home {
            w + 1
        } else {
            w
        }
    }
}
