#!/usr/bin/env python3
"""Write the schedules fabricsim ships (topologies/schedules/) in MSCCL XML and,
where useful, in fabricsim's native YAML form (docs/collectives.md, "Schedules").

    python3 tools/gen_schedules.py [OUT_DIR]      (default: topologies/schedules)

Each schedule is built once as ranks -> threadblocks -> steps and written by
both writers, so the two forms carry the same steps. Chunk k of a buffer is
bytes [k, k + cnt) x size / nchunksperloop.
"""
import os
import sys
import textwrap


class Step:
    def __init__(self, type_, src=None, dst=None, cnt=1, after=None):
        self.type, self.src, self.dst, self.cnt, self.after = type_, src, dst, cnt, after  # src/dst: ("i", 3)


class Tb:
    def __init__(self, send=-1, recv=-1, chan=0):
        self.send, self.recv, self.chan, self.steps = send, recv, chan, []

    def add(self, *a, **k):
        self.steps.append(Step(*a, **k))
        return len(self.steps) - 1


class Sched:
    def __init__(self, name, coll, ngpus, chunks, i_chunks, o_chunks, s_chunks=0, nchannels=1, inplace=False):
        self.name, self.coll, self.ngpus, self.chunks = name, coll, ngpus, chunks
        self.i_chunks, self.o_chunks, self.s_chunks = i_chunks, o_chunks, s_chunks
        self.nchannels, self.inplace = nchannels, inplace
        self.gpus = [[] for _ in range(ngpus)]

    def tb(self, rank, **k):
        self.gpus[rank].append(Tb(**k))
        return len(self.gpus[rank]) - 1, self.gpus[rank][-1]


def write_xml(s, path):
    hasdep = set()
    for r, tbs in enumerate(s.gpus):
        for tb in tbs:
            for st in tb.steps:
                if st.after:
                    hasdep.add((r, st.after[0], st.after[1]))
    out = ["<!-- {} -->".format(" ".join(s.doc.split()).replace("--", "-"))] if getattr(s, "doc", None) else []
    out += ['<algo name="{}" proto="Simple" nchannels="{}" nchunksperloop="{}" ngpus="{}" coll="{}" inplace="{}" '
           'outofplace="{}" minBytes="0" maxBytes="0">'.format(s.name, s.nchannels, s.chunks, s.ngpus, s.coll,
                                                                 int(s.inplace), int(not s.inplace))]
    for r, tbs in enumerate(s.gpus):
        out.append('  <gpu id="{}" i_chunks="{}" o_chunks="{}" s_chunks="{}">'.format(r, s.i_chunks, s.o_chunks, s.s_chunks))
        for t, tb in enumerate(tbs):
            out.append('    <tb id="{}" send="{}" recv="{}" chan="{}">'.format(t, tb.send, tb.recv, tb.chan))
            for k, st in enumerate(tb.steps):
                sb, so = st.src if st.src else ("i", -1)
                db, do = st.dst if st.dst else ("o", -1)
                dep = st.after if st.after else (-1, -1)
                out.append('      <step s="{}" type="{}" srcbuf="{}" srcoff="{}" dstbuf="{}" dstoff="{}" cnt="{}" '
                           'depid="{}" deps="{}" hasdep="{}"/>'.format(k, st.type, sb, so, db, do, st.cnt, dep[0],
                                                                      dep[1], int((r, t, k) in hasdep)))
            out.append('    </tb>')
        out.append('  </gpu>')
    out.append('</algo>')
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def write_yaml(s, path, comment):
    out = ["# " + line for line in comment.strip().splitlines()]
    out += ["schedule:", "  name: " + s.name, "  collective: " + s.coll, "  ranks: {}".format(s.ngpus),
            "  chunks: {}".format(s.chunks), "  channels: {}".format(s.nchannels), "  inplace: {}".format("true" if s.inplace else "false"),
            "  buffers: {{input: {}, output: {}, scratch: {}}}".format(s.i_chunks, s.o_chunks, s.s_chunks), "  gpus:"]
    for r, tbs in enumerate(s.gpus):
        out.append("    - rank: {}".format(r))
        out.append("      threadblocks:")
        for t, tb in enumerate(tbs):
            out.append("        - {{id: {}, send: {}, recv: {}, channel: {}, steps: [".format(t, tb.send, tb.recv, tb.chan))
            items = []
            for st in tb.steps:
                f = ["type: " + st.type]
                if st.src:
                    f.append("src: \"{}[{}]\"".format(*st.src))
                if st.dst:
                    f.append("dst: \"{}[{}]\"".format(*st.dst))
                if st.cnt != 1:
                    f.append("cnt: {}".format(st.cnt))
                if st.after:
                    f.append("after: [{}, {}]".format(*st.after))
                items.append("            {" + ", ".join(f) + "}")
            out.append(",\n".join(items))
            out.append("          ]}")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def ring_allreduce(n, nchannels=1):
    """Ring AllReduce as reduce-scatter then all-gather over r -> r + 1, the
    built-in `ring` algorithm's chunk order: 2(n - 1) messages per rank, one
    threadblock per rank and channel. With c channels each channel moves its
    own 1/c of every chunk (nchunksperloop = n c)."""
    s = Sched("ring-allreduce-{}{}".format(n, "" if nchannels == 1 else "-c{}".format(nchannels)), "allreduce", n,
              n * nchannels, n * nchannels, n * nchannels, nchannels=nchannels)
    for r in range(n):
        for c in range(nchannels):
            _, tb = s.tb(r, send=(r + 1) % n, recv=(r - 1) % n, chan=c)
            ch = lambda k: ((k % n) * nchannels + c)
            tb.add("s", src=("i", ch(r - 1)))
            for st in range(1, n - 1):
                tb.add("rrs", src=("i", ch(r - 1 - st)))
            tb.add("rrcs", src=("i", ch(r)), dst=("o", ch(r)))
            for st in range(1, n - 1):
                tb.add("rcs", dst=("o", ch(r - st)))
            tb.add("r", dst=("o", ch(r + 1)))
    return s


def allpairs_allreduce(n):
    """All-pairs AllReduce: rank r sends chunk p of its input to every peer p
    (one threadblock per peer), reduces the n - 1 copies of chunk r it
    receives into o[r] one after another (depid / deps chain), then sends the
    finished o[r] to every peer and receives their chunks."""
    s = Sched("allpairs-allreduce-{}".format(n), "allreduce", n, n, n, n)
    for r in range(n):
        peers = [(r + d) % n for d in range(1, n)]
        tbs = []
        for p in peers:
            t, tb = s.tb(r, send=p, recv=p)
            tbs.append(t)
            tb.add("s", src=("i", p))
        prev = None
        for t, p in zip(tbs, peers):
            tb = s.gpus[r][t]
            src = ("i", r) if prev is None else ("o", r)
            tb.add("rrc", src=src, dst=("o", r), after=prev)
            prev = (t, 1)
        for t, p in zip(tbs, peers):
            tb = s.gpus[r][t]
            tb.add("s", src=("o", r), after=prev if t != prev[0] else None)
            tb.add("r", dst=("o", p))
    return s


def ring_allgather(n):
    """Ring AllGather over r -> r + 1: copy the input into o[r], send it on,
    forward what arrives (n - 1 messages per rank)."""
    s = Sched("ring-allgather-{}".format(n), "allgather", n, n, 1, n)
    for r in range(n):
        _, tb = s.tb(r, send=(r + 1) % n, recv=(r - 1) % n)
        tb.add("cpy", src=("i", 0), dst=("o", r))
        tb.add("s", src=("o", r))
        for st in range(1, n - 1):
            tb.add("rcs", dst=("o", (r - st) % n))
        tb.add("r", dst=("o", (r + 1) % n))
    return s


def ring_reducescatter(n):
    """Ring ReduceScatter over r -> r + 1: the reduce-scatter half of the ring
    AllReduce; rank r ends with chunk r of the sum in its one output chunk."""
    s = Sched("ring-reducescatter-{}".format(n), "reducescatter", n, n, n, 1)
    for r in range(n):
        _, tb = s.tb(r, send=(r + 1) % n, recv=(r - 1) % n)
        tb.add("s", src=("i", (r - 1) % n))
        for st in range(1, n - 1):
            tb.add("rrs", src=("i", (r - 1 - st) % n))
        tb.add("rrc", src=("i", r), dst=("o", 0))
    return s


def chain_broadcast(n, k=8):
    """Pipelined chain Broadcast from rank 0 (workload.root 0) along
    0 -> 1 -> ... -> n - 1 in k chunks: rank 0 copies its input to its output
    and sends chunk after chunk; every middle rank forwards each chunk as it
    arrives (rcs); the last one only receives."""
    s = Sched("chain-broadcast-{}".format(n), "broadcast", n, k, k, k)
    for r in range(n):
        _, tb = s.tb(r, send=r + 1 if r < n - 1 else -1, recv=r - 1 if r > 0 else -1)
        if r == 0:
            tb.add("cpy", src=("i", 0), dst=("o", 0), cnt=k)
            for c in range(k):
                tb.add("s", src=("o", c))
        else:
            for c in range(k):
                tb.add("rcs" if r < n - 1 else "r", dst=("o", c))
    return s


def allpairs_allgather(n):
    """All-pairs AllGather: every rank sends its input to every peer (one
    threadblock per peer) and a local threadblock copies it into o[r]."""
    s = Sched("allpairs-allgather-{}".format(n), "allgather", n, n, 1, n)
    for r in range(n):
        for d in range(1, n):
            p = (r + d) % n
            _, tb = s.tb(r, send=p, recv=p)
            tb.add("s", src=("i", 0))
            tb.add("r", dst=("o", p))
        _, tb = s.tb(r)
        tb.add("cpy", src=("i", 0), dst=("o", r))
    return s


def alltoall(n):
    """All-pairs AllToAll: rank r sends i[p] to every peer p, which stores it
    at o[r]; a local threadblock copies i[r] to o[r]."""
    s = Sched("alltoall-{}".format(n), "alltoall", n, n, n, n)
    for r in range(n):
        for d in range(1, n):
            p = (r + d) % n
            _, tb = s.tb(r, send=p, recv=p)
            tb.add("s", src=("i", p))
            tb.add("r", dst=("o", p))
        _, tb = s.tb(r)
        tb.add("cpy", src=("i", r), dst=("o", r))
    return s


def hierarchical_allreduce(groups, size):
    """Hierarchical AllReduce for a pod of groups x size ranks (rank = g size + l):
    1. ring reduce-scatter inside each group (local ring l -> l + 1): local
       rank l ends with block l (groups chunks) summed over its group;
    2. ring AllReduce of block l across the groups (the ranks with the same
       local rank, ring g -> g + 1), one chunk of the block per group;
    3. ring all-gather inside each group.
    nchunksperloop = size x groups; block l = chunks [l groups, (l + 1) groups)."""
    n = groups * size
    G = groups
    s = Sched("hierarchical-allreduce-{}x{}".format(groups, size), "allreduce", n, n, n, n, nchannels=2)
    for g in range(groups):
        for l in range(size):
            r = g * size + l
            # Phase 1 + 3: intra-group ring, one threadblock (channel 0).
            ti, intra = s.tb(r, send=g * size + (l + 1) % size, recv=g * size + (l - 1) % size, chan=0)
            blk = lambda b: (b % size) * G
            intra.add("s", src=("i", blk(l - 1)), cnt=G)
            for st in range(1, size - 1):
                intra.add("rrs", src=("i", blk(l - 1 - st)), cnt=G)
            last_rs = intra.add("rrc", src=("i", blk(l)), dst=("o", blk(l)), cnt=G)
            # Phase 2: inter-group ring over chunk j = blk(l) + k of the block.
            tx, inter = s.tb(r, send=((g + 1) % groups) * size + l, recv=((g - 1) % groups) * size + l, chan=1)
            c = lambda k: blk(l) + (k % G)
            inter.add("s", src=("o", c(g - 1)), after=(ti, last_rs))
            for st in range(1, G - 1):
                inter.add("rrs", src=("o", c(g - 1 - st)))
            inter.add("rrcs", src=("o", c(g)), dst=("o", c(g)))
            for st in range(1, G - 1):
                inter.add("rcs", dst=("o", c(g - st)))
            last_ag = inter.add("r", dst=("o", c(g + 1)))
            # Phase 3: all-gather the finished block around the group.
            intra.add("s", src=("o", blk(l)), cnt=G, after=(tx, last_ag))
            for st in range(1, size - 1):
                intra.add("rcs", dst=("o", blk(l - st)), cnt=G)
            intra.add("r", dst=("o", blk(l + 1)), cnt=G)
    return s


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "topologies", "schedules")
    os.makedirs(out, exist_ok=True)
    items = [  # (builder, arguments, also in YAML)
        (ring_allreduce, (8,), True),
        (ring_allreduce, (8, 2), False),
        (allpairs_allreduce, (8,), True),
        (allpairs_allreduce, (64,), False),
        (ring_allgather, (8,), True),
        (allpairs_allgather, (8,), False),
        (ring_reducescatter, (8,), False),
        (chain_broadcast, (8,), False),
        (alltoall, (8,), True),
        (hierarchical_allreduce, (4, 4), True),
    ]
    for build, args, yaml_too in items:
        s = build(*args)
        s.doc = "fabricsim schedule written by tools/gen_schedules.py. " + build.__doc__
        write_xml(s, os.path.join(out, s.name + ".xml"))
        if yaml_too:
            text = "fabricsim native schedule (docs/collectives.md), written by tools/gen_schedules.py; " \
                   "the same steps as {}.xml. {}".format(s.name, " ".join(build.__doc__.split()))
            write_yaml(s, os.path.join(out, s.name + ".yaml"), "\n".join(textwrap.wrap(text, 100)))


if __name__ == "__main__":
    main()
