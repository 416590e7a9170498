"""Data races on workgroup memory, found as they happen.

Two accesses of one address by different invocations of a workgroup, at least one a write, with
no workgroupBarrier() between them, are undefined behaviour in WGSL. The lockstep executor would
run such a shader as if the barrier were there; this shadow memory says so instead, naming both
accesses (source locations and invocations).

Memory is watched in granules of the smallest scalar that workgroup memory holds or a
cooperative matrix element moves there: 4 bytes, 2 with f16, 1 with SPIR-V's 8-bit types
(Pipeline.race_granule). For each granule the shadow keeps the last writer and the last
reader (or "several readers") of the current barrier interval of its workgroup, as a stamp
interval * 2048 + local invocation index, and the instruction that made each access. Atomics are not accesses here (they do not race each other).

Within one subgroup two more things order accesses. A subgroupBarrier() orders everything before
it against everything after it. A subgroup reduction (subgroupAdd/Max/.../Ballot/All/Any, whose
result in every invocation depends on the value of every active one) orders a read before it
against a write after it: the write cannot happen until every invocation has reached the
reduction. That is how production kernels update a row's running maximum (every invocation
reads it, subgroupMax, invocation 0 writes it back) without a workgroupBarrier().

Cooperative matrix loads and stores take part element by element. Which invocation of the
matrix's scope touches which element is the implementation's (SPV_KHR_cooperative_matrix: the
mapping of components to invocations is implementation-dependent), and the operation is one
dynamic instance that every invocation of the scope executes together (a tangled instruction).
So an element access is the scope instance's as a whole: its stamp names the subgroup (or, at
workgroup scope, the workgroup) instead of an invocation. It is ordered with the instance's other
matrix operations and, at subgroup scope, with the accesses of the subgroup's own invocations
before and after it (the subgroup executes the operation converged: each of its invocations
reaches it). Anything else in the same barrier interval, at least one a write, is a data race as
WGSL's memory model (the Vulkan memory model) defines one: an access by an invocation or a matrix
operation of another subgroup and, at workgroup scope, by any invocation (the element may be
another subgroup's, and the workgroup's invocations do not run in step). The values do not matter there: two subgroups storing the same bits to one
element is a data race too. That one case is told apart (`benign` in the result): every GPU keeps
the value, so emu reports it and runs on, where any other race stops the run.
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
        # stamp codes past the invocations: subgroup k's matrix operations, then a workgroup-scope one
        self.workgroup_agent = wg_lanes + self.nsg
        self.matrices = False                       # a matrix access was seen: scalar checks look for them

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
        if self.matrices:
            bad &= ~self._own_matrix(pw % _LANE, lane)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            return int(who[i]), int(pw[i]), self.sites[self.w_site[key[i]]], int(key[i] % self.ngran), True
        pr = self.r[key]
        same = (pr >= 0) & (pr // _LANE == now)
        if write:
            # reads of others before a reduction (or subgroupBarrier) of their one subgroup are done
            bad = same & (pr % _LANE != lane) & ~((self.r_sg[key] == sg) & (self.r_reduced[key] < reduced))
            if self.matrices:
                bad &= ~self._own_matrix(pr % _LANE, lane)
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
        self._read(key, same, now, sg, lane, stamp, pr, reduced, site)
        return None

    def _read(self, key, same, now, sg, code, stamp, pr, reduced, site):
        """Record reads of granules `key` by stamp code `code` of batch subgroup `sg` (`same`: the
        granule was read before in this interval, `pr` its reader then)."""
        new_sg = np.where(same & (self.r_sg[key] != sg), -1, sg)
        self.r_sg[key] = new_sg
        mixed = self.r_sg[key] != new_sg        # two subgroups read it in this instruction
        if mixed.any():
            self.r_sg[key[mixed]] = -1
        self.r_reduced[key] = np.where(same, self.r_reduced[key], -1)
        np.maximum.at(self.r_reduced, key, reduced)
        new = np.where(same & (pr % _LANE != code), now * _LANE + _MANY, stamp)
        self.r[key] = new
        several = self.r[key] != new            # read by two invocations in this instruction
        if several.any():
            self.r[key[several]] = now[several] * _LANE + _MANY
        self.r_site[key] = site


    def agent(self, subgroups: np.ndarray) -> np.ndarray:
        """The stamp code of the matrix operations of each of the batch's `subgroups`."""
        return self.wg_lanes + subgroups % self.nsg

    def _own_matrix(self, code: np.ndarray, lane: np.ndarray) -> np.ndarray:
        """Whether a stamp code is a matrix operation of invocation `lane`'s own subgroup (ordered
        with the invocation's accesses)."""
        return (code >= self.wg_lanes) & (code != _MANY) & (code - self.wg_lanes == lane // self.sg)

    def matrix(self, inst, write: bool, wg: np.ndarray, off: np.ndarray, nbytes: int, subgroups: np.ndarray,
               code, same: np.ndarray | None = None):
        """The element accesses of one cooperative load or store: element j at byte off[j] of
        workgroup wg[j]'s row, by batch subgroup subgroups[j], as stamp code `code` (agent(), or
        workgroup_agent). `same` (a store): whether element j already holds the bits stored.
        Two subgroups' elements of this very instruction are not compared here (the handler
        compares their values). Returns None, or (element, other stamp, other instruction,
        granule, the other access was a write, benign) for the first race; benign: every race
        found is a store over another subgroup's store of the same bits (the accesses are
        recorded then, and the run may go on)."""
        n = off.size
        if n == 0:
            return None
        if self.w is None:
            self._alloc()
        self.matrices = True
        g = self.granule
        count = max(1, -(-nbytes // g))              # elements lie at multiples of their size >= g
        key = wg * self.ngran + off // g
        c = np.broadcast_to(np.asarray(code, np.int64), (n,))
        elem, now, sgs = np.arange(n), self.interval[wg], subgroups
        if count > 1:                                # an element over several granules
            key = (key[:, None] + np.arange(count)).reshape(-1)
            elem = np.repeat(elem, count)
            now, sgs, c = now[elem], sgs[elem], c[elem]
        stamp = now * _LANE + c
        site = self._site(inst)

        def ordered(o):
            # the same scope instance, or (subgroup scope) an invocation of this subgroup
            return (o == c) | ((o < self.wg_lanes) & (o // self.sg == c - self.wg_lanes))
        pw, pr = self.w[key], self.r[key]
        bad_w = (pw >= 0) & (pw // _LANE == now) & ~ordered(pw % _LANE)
        live_r = (pr >= 0) & (pr // _LANE == now)
        bad_r = np.zeros_like(bad_w)
        if write:
            # several readers, all of this subgroup, are ordered with its own store as well
            bad_r = live_r & ~ordered(pr % _LANE) & \
                ~((pr % _LANE == _MANY) & (self.r_sg[key] == sgs) & (c != self.workgroup_agent))
        benign = bad_w & (same[elem] if write and same is not None else False)
        hard = (bad_w & ~benign) | bad_r
        if hard.any():
            i = int(np.flatnonzero(hard)[0])
            if bad_w[i] and not benign[i]:
                return int(elem[i]), int(pw[i]), self.sites[self.w_site[key[i]]], int(key[i] % self.ngran), True, False
            return int(elem[i]), int(pr[i]), self.sites[self.r_site[key[i]]], int(key[i] % self.ngran), False, False
        found = None
        if benign.any():
            i = int(np.flatnonzero(benign)[0])
            found = int(elem[i]), int(pw[i]), self.sites[self.w_site[key[i]]], int(key[i] % self.ngran), True, True
        if write:
            self.w[key] = stamp
            self.w_site[key] = site
            self.w_synced[key] = self.synced[sgs]
            return found
        self._read(key, live_r, now, sgs, c, stamp, pr, self.reduced[sgs], site)
        return found


def stamp_code(stamp: int) -> int:
    """The code in a stamp: a local invocation index, a subgroup's (wg_lanes + subgroup) or the
    workgroup's matrix operations (wg_lanes + subgroups), or several invocations (MANY)."""
    return stamp % _LANE


MANY = _MANY
