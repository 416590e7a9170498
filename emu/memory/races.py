"""Data races on workgroup memory, found as they happen.

Two accesses of one address by different invocations of a workgroup, at least one a write, with
no workgroupBarrier() between them, are undefined behaviour in WGSL. The lockstep executor would
run such a shader as if the barrier were there; this shadow memory says so instead, naming both
accesses (source locations and invocations).

Memory is watched in 4-byte granules, or 2-byte ones where workgroup memory holds f16 (the
smallest WGSL scalar). For each granule the
shadow keeps the last writer and the last reader (or "several readers") of the current barrier
interval of its workgroup, as a stamp interval * 2048 + local invocation index, and the
instruction that made each access. Atomics are not accesses here (they do not race each other).

Within one subgroup two more things order accesses. A subgroupBarrier() orders everything before
it against everything after it. A subgroup reduction (subgroupAdd/Max/.../Ballot/All/Any, whose
result in every invocation depends on the value of every active one) orders a read before it
against a write after it: the write cannot happen until every invocation has reached the
reduction. That is how production kernels update a row's running maximum (every invocation
reads it, subgroupMax, invocation 0 writes it back) without a workgroupBarrier().
"""
from __future__ import annotations

import numpy as np

GRANULE = 2
_LANE = 2048                    # stamp = interval * _LANE + local invocation index
_MANY = _LANE - 1               # "several invocations read it"


class WorkgroupRaces:
    def __init__(self, nwg: int, nbytes: int, wg_lanes: int, granule: int = GRANULE, sg: int = 0):
        self.nwg, self.wg_lanes, self.granule = nwg, wg_lanes, granule
        self.sg = sg or wg_lanes
        self.nsg = wg_lanes // self.sg                  # subgroups per workgroup
        self.ngran = -(-nbytes // granule)
        self.interval = np.zeros(nwg, np.int64)
        # per subgroup: reductions and subgroupBarrier()s (reduced), subgroupBarrier()s (synced)
        self.reduced = np.zeros(nwg * self.nsg, np.int64)
        self.synced = np.zeros(nwg * self.nsg, np.int64)
        self.sites: list = []                       # instructions, indexed by the *_site arrays
        self._site_ids: dict[int, int] = {}
        self.w = self.r = self.w_site = self.r_site = None

    def _alloc(self):
        n = self.nwg * self.ngran
        self.w = np.full(n, -1, np.int64)
        self.r = np.full(n, -1, np.int64)
        self.w_site = np.zeros(n, np.int32)
        self.r_site = np.zeros(n, np.int32)
        self.w_synced = np.zeros(n, np.int64)       # the writer's subgroupBarrier count
        self.r_sg = np.full(n, -1, np.int64)        # the readers' subgroup, -1 for several
        self.r_reduced = np.zeros(n, np.int64)      # the latest reader's reduction count

    def barrier(self, mask: np.ndarray) -> None:
        """A workgroupBarrier() reached by the lanes of `mask`: their workgroups start a new interval."""
        self.interval += mask.reshape(self.nwg, self.wg_lanes).any(axis=1)

    def subgroup_sync(self, mask: np.ndarray, full: bool) -> None:
        """A subgroup reduction (full=False) or subgroupBarrier() (full=True) by the lanes of `mask`."""
        hit = mask.reshape(-1, self.sg).any(axis=1)     # workgroups are padded to whole subgroups
        self.reduced += hit
        if full:
            self.synced += hit

    def _site(self, inst) -> int:
        k = self._site_ids.get(id(inst))
        if k is None:
            k = self._site_ids[id(inst)] = len(self.sites)
            self.sites.append(inst)
        return k

    def access(self, inst, write: bool, rows: np.ndarray, offset, nbytes: int, mask: np.ndarray):
        """An access of `nbytes` at byte `offset` (per lane or one for all) of each active lane's
        workgroup row. Returns None, or (this lane, other stamp, other instruction, granule, the
        other access was a write) for the first race."""
        lanes = np.flatnonzero(mask)
        if lanes.size == 0 or nbytes <= 0:
            return None
        if self.w is None:
            self._alloc()
        off = np.broadcast_to(np.asarray(offset, np.int64), mask.shape)[lanes]
        g = self.granule
        first = off // g
        count = int(((off % g) + nbytes + g - 1).max()) // g
        wg = rows[lanes]
        base = wg * self.ngran
        if count == 1:                           # a scalar (the common case): no 2-D arrays
            key = base + first
            who = lanes
            now = self.interval[wg]
        else:
            gran = first[:, None] + np.arange(count)
            last = (off + nbytes - 1) // g
            valid = (gran <= last[:, None]) & (gran < self.ngran)
            key = (base[:, None] + gran)[valid]
            who = np.broadcast_to(lanes[:, None], gran.shape)[valid]
            now = np.broadcast_to(self.interval[wg][:, None], gran.shape)[valid]
        lane = who % self.wg_lanes
        stamp = now * _LANE + lane
        site = self._site(inst)
        sg = who // self.sg                             # the subgroup, counted over the dispatch
        synced, reduced = self.synced[sg], self.reduced[sg]
        # a write of another invocation in this interval races with this access, unless a
        # subgroupBarrier() of their common subgroup came between
        pw = self.w[key]
        bad = (pw >= 0) & (pw // _LANE == now) & (pw % _LANE != lane) & \
            ~((sg == (who - lane + pw % _LANE) // self.sg) & (self.w_synced[key] < synced))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            return int(who[i]), int(pw[i]), self.sites[self.w_site[key[i]]], int(key[i] % self.ngran), True
        pr = self.r[key]
        same = (pr >= 0) & (pr // _LANE == now)
        if write:
            # reads of others before a reduction (or subgroupBarrier) of their one subgroup are done
            bad = same & (pr % _LANE != lane) & ~((self.r_sg[key] == sg) & (self.r_reduced[key] < reduced))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                return int(who[i]), int(pr[i]), self.sites[self.r_site[key[i]]], int(key[i] % self.ngran), False
            self.w[key] = stamp
            # two invocations writing one granule in this very instruction: the last one's stamp
            # is what remains there
            dup = self.w[key] != stamp
            if dup.any():
                i = int(np.flatnonzero(dup)[0])
                return int(who[i]), int(self.w[key[i]]), inst, int(key[i] % self.ngran), True
            self.w_site[key] = site
            self.w_synced[key] = synced
            return None
        new_sg = np.where(same & (self.r_sg[key] != sg), -1, sg)
        self.r_sg[key] = new_sg
        mixed = self.r_sg[key] != new_sg        # two subgroups read it in this instruction
        if mixed.any():
            self.r_sg[key[mixed]] = -1
        self.r_reduced[key] = np.where(same, self.r_reduced[key], -1)
        np.maximum.at(self.r_reduced, key, reduced)
        shared = same & (pr % _LANE != lane)
        new = np.where(shared, now * _LANE + _MANY, stamp)
        self.r[key] = new
        several = self.r[key] != new            # read by two invocations in this instruction
        if several.any():
            self.r[key[several]] = now[several] * _LANE + _MANY
        self.r_site[key] = site
        return None


def other_lane(stamp: int) -> int | None:
    """The local invocation index in a stamp, or None for "several invocations"."""
    lane = stamp % _LANE
    return None if lane == _MANY else lane
