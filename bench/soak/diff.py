import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
rows=[]
for k in sorted(set(a)|set(b)):
    x=a.get(k,0); y=b.get(k,0)
    if x!=y: rows.append((y-x,k,x,y))
rows.sort(key=lambda r:-abs(r[0]))
for d,k,x,y in rows[:int(sys.argv[3]) if len(sys.argv)>3 else 60]: print(f"{x:>8} -> {y:>8}  {k}")
