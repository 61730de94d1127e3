import csv,sys,statistics as st
for f in sys.argv[1:]:
    rows=list(csv.DictReader(open(f)))
    rows=[r for r in rows if r['rss_mb']]
    a,b=rows[0],rows[-1]
    def col(k): return [float(r[k]) for r in rows if r[k] not in ('',None)]
    dur=len(rows)*10
    print(f"{f.split('/')[-1]}: {a['ts']}..{b['ts']} n={len(rows)} RSS {a['rss_mb']}->{b['rss_mb']} (max {max(col('rss_mb')):.0f}) heap {a['heap_used_mb']}->{b['heap_used_mb']} (max {max(col('heap_used_mb')):.0f}) fds {a['fds']}->{b['fds']} (max {max(col('fds')):.0f}) handles {a['active_handles']}->{b['active_handles']} timeouts {a['timeouts']}->{b['timeouts']} lag_p99 med {st.median(col('el_lag_p99_ms')):.0f} max {max(col('el_lag_p99_ms')):.0f} cpu {float(a['cpu_s']):.1f}->{float(b['cpu_s']):.1f}s series {a['metric_series']}->{b['metric_series']} (max {max(col('metric_series')):.0f})")
