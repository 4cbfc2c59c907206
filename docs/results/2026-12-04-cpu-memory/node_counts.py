import ast, os, sys, collections
root = sys.argv[1]
n=0; types=collections.Counter(); strbytes=0; docbytes=0; big_ints=0; ucs4=0
files=[os.path.join(d,f) for d,_,fs in os.walk(root) for f in fs if f.endswith('.py')]
for p in files:
    t=open(p,encoding='utf-8').read()
    if not t.isascii(): ucs4+=1
    tree=ast.parse(t)
    for node in ast.walk(tree):
        n+=1; types[type(node).__name__]+=1
        for a in ('lineno','end_lineno','col_offset','end_col_offset'):
            v=getattr(node,a,None)
            if isinstance(v,int) and v>256: big_ints+=1
        if isinstance(node,ast.Constant) and isinstance(node.value,str): strbytes+=sys.getsizeof(node.value)
        if isinstance(node,(ast.FunctionDef,ast.ClassDef,ast.Module,ast.AsyncFunctionDef)):
            d=ast.get_docstring(node, clean=False)
            if d: docbytes+=sys.getsizeof(node.body[0].value.value)
print(len(files),'files', ucs4,'non-ascii; nodes',n,'str const MB',strbytes>>20,'doc MB',docbytes>>20,'big ints',big_ints)
print(types.most_common(15))
x=ast.parse("a=1").body[0].targets[0]
print(sys.getsizeof(x), sys.getsizeof(x.__dict__), len(x.__dict__))
