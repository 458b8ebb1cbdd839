# records-analysis.py: what results/scale-case/records-analysis.txt was made with (issue 29).
# Reads a scale run's work dir (.lab/runs/scale-<run id>/: each point's records and
# nginx's access log, not committed) and a TCP counter log of the nginx, WireMock and
# Toxiproxy containers (their /proc/<pid>/net/snmp every 0.5 s, taken beside the run);
# prints per point: sends started per 5 ms (bursts), the mean sends in flight (sum of
# send times over the span), send latency, nginx request/upstream time, and TCP opens.
# Usage: python3 records-analysis.py .lab/runs/scale-<id> [tcp.log]
import json, sys, glob, os, statistics as st
from datetime import datetime
run = sys.argv[1]   # .lab/runs/scale-... dir
tcplog = sys.argv[2] if len(sys.argv) > 2 else None
def ts(s):
    s = s.rstrip('Z'); base, _, frac = s.partition('.')
    return datetime.fromisoformat(base).timestamp() + float('0.' + (frac or '0'))
def q(v, p):
    v = sorted(v); return v[min(len(v)-1, int(p*len(v)))]
acc = [json.loads(l) for l in open(os.path.join(run, 'stack/log/access.log'))]
for pdir in sorted(glob.glob(os.path.join(run, 'grid-*'))):
    recs = []
    for f in glob.glob(os.path.join(pdir, '*/records*.jsonl')):
        if 'records-worker' in f: continue
        recs += [json.loads(l) for l in open(f)]
    if not recs:
        for f in glob.glob(os.path.join(pdir, '*/records-worker-*.jsonl')):
            recs += [json.loads(l) for l in open(f)]
    recs = [r for r in recs if r.get('start')]
    starts = sorted(ts(r['start']) for r in recs); ends = sorted(ts(r['end']) for r in recs)
    t0, t1 = starts[0], ends[-1]
    prefix = recs[0]['refkey'].rsplit('-', 1)[0]
    lines = [a for a in acc if a['refkey'].startswith(prefix)]
    # bursts: sends started per 5 ms bucket
    import collections
    b = collections.Counter(int((s - t0) / 0.005) for s in starts)
    n_b = int((t1 - t0) / 0.005) + 1
    counts = [b.get(i, 0) for i in range(n_b)]
    mean = sum(counts) / n_b; sd = st.pstdev(counts)
    inflight = sum(r['total_ms'] for r in recs) / 1000 / (t1 - t0)
    lat = [r['total_ms'] for r in recs]
    rt = [float(a['request_time'])*1000 for a in lines if a['request_time']]
    urt = [float(a['upstream_response_time'].split(',')[-1])*1000 for a in lines if a['upstream_response_time'] not in ('', '-')]
    nginx_own = [float(a['request_time'])*1000 - float(a['upstream_response_time'].split(',')[-1])*1000 for a in lines if a['upstream_response_time'] not in ('', '-')]
    conns = collections.Counter(a['connection'] for a in lines)
    uct = [a['upstream_connect_time'] for a in lines]
    print(f"== {os.path.basename(pdir)}: {len(recs)} records, {t1-t0:.1f} s, {len(recs)/(t1-t0):.0f}/s")
    print(f"  sends started per 5 ms: mean {mean:.2f} sd {sd:.2f} (cv {sd/mean:.2f}), max {max(counts)}; empty buckets {counts.count(0)/n_b:.0%}")
    print(f"  mean sends in flight (sum of send times / span): {inflight:.1f}")
    print(f"  send ms p50 {q(lat,.5):.1f} p90 {q(lat,.9):.1f} p99 {q(lat,.99):.1f}; reused {sum(r.get('reused',False) for r in recs)}/{len(recs)}, got_conns>1 {sum(r.get('got_conns',1)>1 for r in recs)}, token_fetched {sum(bool(r.get('token_fetched')) for r in recs)}")
    print(f"  nginx lines {len(lines)} on {len(conns)} client connections; request_time p50 {q(rt,.5):.1f} p99 {q(rt,.99):.1f}; upstream p50 {q(urt,.5):.1f} p99 {q(urt,.99):.1f}; nginx own p50 {q(nginx_own,.5):.1f} p90 {q(nginx_own,.9):.1f} p99 {q(nginx_own,.99):.1f}; upstream_connect_time>0: {sum(1 for u in uct if u not in ('0.000','','-'))}")
    if tcplog:
        rows = [l.split() for l in open(tcplog)]
        def at(name, t):
            best = None
            for r in rows:
                if r[1] == name and float(r[0]) <= t: best = r
            return best
        for name in ('nginx', 'wiremock', 'toxiproxy'):
            a, z = at(name, t0), at(name, t1)
            if a and z:
                print(f"  {name}: ActiveOpens +{int(z[3])-int(a[3])}, PassiveOpens +{int(z[4])-int(a[4])} ({(int(z[3])-int(a[3])+int(z[4])-int(a[4]))/len(recs):.3f} per send), TIME_WAIT at end {z[8]}")
