import ast, os, resource, sys, gc
root = sys.argv[1]
files=[]
for d,_,fs in os.walk(root):
    for f in fs:
        if f.endswith('.py'): files.append(os.path.join(d,f))
def rss(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss//1024
print('start', rss())
datas=[open(f,'rb').read() for f in files]; print('bytes', sum(map(len,datas))//2**20, rss())
texts=[d.decode() for d in datas]; print('texts', rss())
lines=[t.splitlines() for t in texts]; print('lines', rss())
trees=[ast.parse(t) for t in texts]; print('trees', rss())
